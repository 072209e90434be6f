// Batch: each batch the escalation asks for is byte for byte the shared
// library once, then the own parts of the scripts each step's builder
// writes, joined (a step that is not last without its "end"), and its reply
// reads back one reply per step; a reply that breaks the grammar names the
// round trip's steps. batch_replies_test runs them.
#include "fleetreap/remote/batch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/remote/signal.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

std::string Nul(const std::string& text) { return text + '\0'; }

AuditRequest Audit() {
  AuditRequest audit;
  audit.run_id = "r-1";
  audit.controller = "ctl";
  audit.operator_name = "ops";
  return audit;
}

ScanRequest Scan(bool holders) {
  ScanRequest scan;
  scan.units = {"vllm*.service"};
  scan.nvidia_smi_timeout = milliseconds(7000);
  scan.holders = holders;
  scan.watch = holders ? std::vector<int>{41} : std::vector<int>{};
  scan.readiness = true;
  return scan;
}

SignalRequest Wave() {
  SignalRequest wave;
  wave.signal = "KILL";
  wave.targets = {{10, 5010, true}, {11, 5011, false}};
  wave.wait = milliseconds(2500);
  wave.parents = {4};
  wave.audit = Audit();
  wave.scan_start = 77;
  return wave;
}

StopUnitsRequest Stop() {
  return {{"vllm.service", "worker@1.service"}, milliseconds(9000), Audit()};
}

ShmRequest Shm(bool dry_run) {
  ShmRequest shm;
  shm.patterns = {"nccl-*", "psm_*"};
  shm.dry_run = dry_run;
  shm.audit = Audit();
  shm.selection.all = false;
  shm.selection.only = {{5, 6}};
  return shm;
}

TEST(BatchTest, OneStepIsThatStepsScript) {
  const HostPaths paths;
  EXPECT_EQ(BatchScript({Scan(true)}), ScanScript(Scan(true), paths));
  EXPECT_EQ(BatchScript({Scan(false)}), ScanScript(Scan(false), paths));
  EXPECT_EQ(BatchScript({GpuQueryRequest{{1, 3}, milliseconds(4000)}}),
            PerGpuQueryScript({1, 3}, milliseconds(4000)));
  EXPECT_EQ(BatchScript({Wave()}), SignalScript("KILL", Wave().targets, milliseconds(2500),
                                                milliseconds(100), paths, {4}, Audit(), 77));
  EXPECT_EQ(BatchScript({Stop()}), StopUnitsScript(Stop().units, milliseconds(9000), Audit()));
  for (bool dry_run : {false, true}) {
    EXPECT_EQ(BatchScript({Shm(dry_run)}), ShmCleanScript(Shm(dry_run).patterns, dry_run, paths,
                                                          Audit(), Shm(dry_run).selection));
  }
  ResetRequest reset{{2, 5},  milliseconds(31000), {"nvidia-dcgm.service"}, milliseconds(8000),
                     Audit(), milliseconds(6000)};
  EXPECT_EQ(BatchScript({reset}), GpuResetScript({2, 5}, milliseconds(31000), reset.units,
                                                 milliseconds(8000), Audit(), milliseconds(6000)));
}

// A step that is not last leaves out its own "end"; a scan keeps its
// records' end either way.
std::string WithoutEnd(const std::string& script) {
  const std::string end = "z end\n";
  EXPECT_EQ(script.substr(script.size() - end.size()), end);
  return script.substr(0, script.size() - end.size());
}

// A step's script alone is the library pieces it needs, then its own part,
// which starts with the prelude's settings (a stop's, which needs no piece,
// is all its own).
const char kOwnStart[] = "IFS=\" \t$NL\"\nDV=";
std::string Library(const std::string& script) {
  const size_t at = script.find(kOwnStart);
  EXPECT_NE(at, std::string::npos);
  return script.substr(0, at);
}
std::string Own(const std::string& script) { return script.substr(script.find(kOwnStart)); }

// How often "text" occurs in "script".
size_t Count(const std::string& script, const std::string& text) {
  size_t n = 0;
  for (size_t at = script.find(text); at != std::string::npos; at = script.find(text, at + 1)) ++n;
  return n;
}

// A fused round trip defines the library once, at its start (every piece
// any step needs: here always those of one step that needs them all), then
// runs each step's own part, in order.
TEST(BatchTest, EachFusedRoundTripIsTheLibraryOnceThenEachStepsOwnPart) {
  const HostPaths paths;
  // The stops' audit lines are the run's: the wave's targets are not read.
  const std::string wave = BatchScript({Wave()});
  EXPECT_EQ(BatchScript({Stop(), Wave()}),
            Library(wave) + WithoutEnd(StopUnitsScript(Stop().units, milliseconds(9000), Audit())) +
                Own(wave));
  // A dry run's inspect takes the listing's fd walk.
  ShmRequest listing = Shm(true);
  listing.audit = AuditRequest();
  listing.selection = ShmSelection();
  const std::string lists = ShmCleanScript(listing.patterns, true, paths);
  EXPECT_EQ(BatchScript({listing, Scan(true)}), Library(lists) + Own(WithoutEnd(lists)) + "RW=1\n" +
                                                    Own(ScanScript(Scan(true), paths)));
  auto shm = [&](bool dry_run) {
    return ShmCleanScript(Shm(dry_run).patterns, dry_run, paths, Audit(), Shm(dry_run).selection);
  };
  const std::string quick = Own(ScanScript(Scan(false), paths));
  for (bool dry_run : {false, true}) {
    EXPECT_EQ(BatchScript({Shm(dry_run), Scan(false)}),
              Library(shm(dry_run)) + Own(WithoutEnd(shm(dry_run))) + quick);
  }
  // A quick re-scan, then the clean; a full one, the clean and a quick verify.
  EXPECT_EQ(BatchScript({Scan(false), Shm(false)}), Library(shm(false)) + quick + Own(shm(false)));
  for (bool holders : {false, true}) {
    EXPECT_EQ(BatchScript({Scan(holders), Shm(false), Scan(false)}),
              Library(shm(false)) + Own(ScanScript(Scan(holders), paths)) +
                  Own(WithoutEnd(shm(false))) + quick);
  }
  // A scoped scan (the holders' /dev/shm files) and the clean share the
  // /dev/shm functions too.
  ScanRequest scoped = Scan(true);
  scoped.shm_files = true;
  EXPECT_EQ(BatchScript({scoped, Shm(false)}),
            Library(shm(false)) + Own(ScanScript(scoped, paths)) + Own(shm(false)));
}

TEST(BatchTest, DefinesEachSharedFunctionOnce) {
  const std::string alone = BatchScript({Shm(false)});
  const std::string three = BatchScript({Scan(true), Shm(false), Scan(false)});
  const std::string wave = BatchScript({Stop(), Wave()});
  for (const char* definition : {"\nfds() {", "\nmps() {", "\ndump() {", "\nPLW='", "\nPLD='",
                                 "\npwk() {", "\nshmh() {", "hb() {", "\nNL='"}) {
    EXPECT_EQ(Count(alone, definition), 1u) << definition;
    EXPECT_EQ(Count(three, definition), 1u) << definition;
  }
  EXPECT_EQ(Count(wave, "\npwk() {"), 1u);
  // What each step's body reads is set again before it: the prelude's
  // settings, the audit functions' AP (a scan empties it for its own use).
  EXPECT_EQ(Count(three, kOwnStart), 3u);
  EXPECT_EQ(Count(three, "\nAP='run=r-1 controller=ctl operator=ops'\n"), 1u);
  EXPECT_EQ(Count(wave, "\nAP='run=r-1 controller=ctl operator=ops'\n"), 2u);
  // The library costs the host a parse per round trip, not per step: the
  // three steps take less than twice one clean.
  EXPECT_LT(three.size(), 2 * alone.size()) << three.size() << " " << alone.size();
}

// A re-scan and a clean that ride on a wave run only when it left nothing
// (the signal script's WL): they are wrapped in one test of it.
TEST(BatchTest, TheStepsAfterAWaveRunWhenItLeftNothing) {
  const HostPaths paths;
  const std::string wave = BatchScript({Wave()});
  const std::string stop = WithoutEnd(StopUnitsScript(Stop().units, milliseconds(9000), Audit()));
  const std::string shm =
      ShmCleanScript(Shm(false).patterns, false, paths, Audit(), Shm(false).selection);
  const std::string quick = Own(ScanScript(Scan(false), paths));
  EXPECT_EQ(
      BatchScript({Stop(), Wave(), Scan(false), Shm(false)}),
      Library(shm) + stop + Own(wave) + "if [ -z \"$WL\" ]; then\n" + quick + Own(shm) + "fi\n");
  EXPECT_EQ(BatchScript({Wave(), Scan(false)}),
            Library(wave) + Own(wave) + "if [ -z \"$WL\" ]; then\n" + quick + "fi\n");
  EXPECT_NE(wave.find("WL=1"), std::string::npos);
}

TEST(BatchTest, AReplyThatEndsWithTheWaveReadsTheStepsThatRan) {
  std::vector<StepReply> replies;
  const std::string stops = Nul("stop 0 0") + Nul("stop 1 0");
  const std::string wave = Nul("signal 1") + Nul("now 9") + Nul("sent 10") + Nul("pidfd 1") +
                           Nul("left 10 S") + Nul("done 1000") + Nul("end");
  const std::vector<StepRequest> batch = {Stop(), Wave(), Scan(false), Shm(false)};
  ASSERT_TRUE(ParseBatch(stops + wave, batch, &replies).ok());
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(std::get<SignalReply>(replies[1]).left.size(), 1u);
  // With the re-scan's records the clean's must follow: a reply cut inside
  // the steps after the wave is broken.
  const std::string scan = Nul("scan 1") + Nul("session 12") + Nul("gpu 0:") + Nul("apps -") +
                           Nul("table -") + Nul("show -") + Nul("end");
  EXPECT_EQ(ParseBatch(stops + wave + scan, batch, &replies).ToString(),
            "parse: stop units, signal, rescan and shm output: expected \"shm 1\", got the end");
  EXPECT_TRUE(replies.empty());
  // A wave alone, or last, still needs its own records whole.
  EXPECT_FALSE(ParseBatch(stops, {Stop(), Wave()}, &replies).ok());
}

TEST(BatchTest, NamesEachStepInOrder) {
  EXPECT_EQ(BatchName({Scan(true)}), "scan");
  EXPECT_EQ(BatchName({Stop(), Wave()}), "stop units, signal");
  EXPECT_EQ(BatchName({Shm(true), Scan(true)}), "/dev/shm listing, scan");
  EXPECT_EQ(BatchName({Scan(false), Shm(false), Scan(false)}), "scan, /dev/shm clean, scan");
  EXPECT_EQ(BatchName({Scan(false), Shm(false)}), "scan, /dev/shm clean");
  EXPECT_EQ(BatchName({GpuQueryRequest{{1}, milliseconds(1000)}}), "nvidia-smi per GPU");
}

TEST(BatchTest, ReadsOneReplyPerStep) {
  std::vector<StepReply> replies;
  const std::string out = Nul("stop 0 0") + Nul("stop 1 5") + Nul("signal 1") + Nul("now 9") +
                          Nul("sent 10") + Nul("parent 4") + Nul("done 153") + Nul("end");
  ASSERT_TRUE(ParseBatch(out, {Stop(), Wave()}, &replies).ok());
  ASSERT_EQ(replies.size(), 2u);
  const UnitStops& stops = std::get<UnitStops>(replies[0]);
  ASSERT_EQ(stops.stops.size(), 2u);
  EXPECT_EQ(stops.stops[1].unit, "worker@1.service");
  EXPECT_EQ(stops.stops[1].exit_code, 5);
  const SignalReply& signal = std::get<SignalReply>(replies[1]);
  EXPECT_EQ(signal.sent, std::vector<int>{10});
  EXPECT_EQ(signal.live_parents, std::vector<int>{4});
  EXPECT_EQ(signal.waited_cs, 153);

  ASSERT_TRUE(
      ParseBatch(Nul("shm 1") + Nul("would:nccl-1") + Nul("end"), {Shm(true)}, &replies).ok());
  EXPECT_EQ(std::get<ShmOutput>(replies.at(0)).removed, std::vector<std::string>{"nccl-1"});
}

// A quick re-scan, then the clean: the scan's records end with its own
// "end", the clean's with the batch's. (The scan's GPU answer here is too
// thin for ReadScan, whose error leaves the other replies read.)
TEST(BatchTest, ReadsAQuickRescanThenTheClean) {
  std::vector<StepReply> replies;
  const std::string scan = Nul("scan 1") + Nul("session 12") + Nul("gpu 0:") + Nul("apps -") +
                           Nul("table -") + Nul("show -") + Nul("end");
  const std::string out = scan + Nul("shm 1") + Nul("removed:nccl-1") + Nul("end");
  const Status status = ParseBatch(out, {Scan(false), Shm(false)}, &replies);
  ASSERT_EQ(replies.size(), 2u) << status.ToString();
  EXPECT_EQ(std::get<ShmOutput>(replies[1]).removed, std::vector<std::string>{"nccl-1"});
  // The clean, last, takes the batch's end.
  EXPECT_EQ(
      ParseBatch(scan + Nul("shm 1") + Nul("removed:nccl-1"), {Scan(false), Shm(false)}, &replies)
          .ToString(),
      "parse: rescan and shm output: expected \"end\", got the end");
}

TEST(BatchTest, ErrorsNameTheRoundTrip) {
  std::vector<StepReply> replies;
  const std::string cut = Nul("stop 0 0") + Nul("stop 1 0") + Nul("end");
  EXPECT_EQ(ParseBatch(cut, {Stop(), Wave()}, &replies).ToString(),
            "parse: stop units and signal output record 3: expected \"signal 1\", got \"end\"");
  EXPECT_TRUE(replies.empty());
  const std::string bad = Nul("shm 1") + Nul("end");
  EXPECT_EQ(ParseBatch(bad, {Scan(true), Shm(false), Scan(false)}, &replies).ToString(),
            "parse: rescan, shm and verify output record 1: expected \"scan 1\", got \"shm 1\"");
  EXPECT_EQ(ParseBatch(bad, {Scan(false), Shm(false)}, &replies).ToString(),
            "parse: rescan and shm output record 1: expected \"scan 1\", got \"shm 1\"");
  EXPECT_EQ(ParseBatch(bad, {Shm(false), Scan(false)}, &replies).ToString(),
            "parse: shm and verify output record 2: expected \"scan 1\", got \"end\"");
  EXPECT_EQ(ParseBatch(Nul("end"), {Scan(true)}, &replies).ToString(),
            "parse: scan output record 1: expected \"scan 1\", got \"end\"");
  const std::string one_stop = Nul("stop 0 0") + Nul("end");
  StopUnitsRequest stop = Stop();
  stop.units = {"vllm.service"};
  EXPECT_EQ(ParseBatch(one_stop, {stop, Wave()}, &replies).ToString(),
            "parse: stop units and signal output record 2: expected \"signal 1\", got \"end\"");
}

}  // namespace
}  // namespace fleetreap
