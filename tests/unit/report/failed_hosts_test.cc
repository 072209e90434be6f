#include "fleetreap/report/failed_hosts.h"

#include <gtest/gtest.h>

#include "support/report_fixture.h"

namespace fleetreap {
namespace {

TEST(FailedHostsTest, EveryHostNotKnownCleanOnePerLine) {
  RunReport mixed = testing_fixture::MixedFleet();
  RunReport clean = mixed;
  clean.hosts.resize(12);
  RunReport interrupted = clean;
  interrupted.not_started = {"gpu13", "gpu14"};
  struct Row {
    const char* name;
    RunReport report;
    const char* text;
  };
  const Row rows[] = {
      {"mixed", mixed, "gpu13\ngpu14\ngpu15\ngpu16\n"},
      {"all clean", clean, ""},
      {"interrupted", interrupted, "gpu13\ngpu14\n"},
      {"dry run", testing_fixture::DryRunFleet(), "gpu01\ngpu02\ngpu03\ngpu14\n"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(RenderFailedHosts(row.report), row.text) << row.name;
  }
}

}  // namespace
}  // namespace fleetreap
