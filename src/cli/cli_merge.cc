// The command line of `fleetreap merge`: report files as positional
// arguments, and the output flags of a run. Part of the Cli module
// (cli.h); pure apart from reading argv; thread-compatible.
#include <boost/program_options.hpp>
#include <sstream>

#include "cli_output.h"
#include "fleetreap/cli/cli.h"

namespace po = boost::program_options;

namespace fleetreap {
namespace {

// clang-format off
po::options_description DescribeMerge(Options* o) {
  po::options_description output("Output", kHelpWidth, kHelpWidth / 2);
  AddReportFlags(output.add_options(), o);
  output.add_options()
      ("expect", po::value(&o->merge_expect)->value_name("FILE"),
       "hosts that must have a report, one per line; a missing one is 'no report'")
      ("help,h", "print this help and exit");
  // clang-format on
  return output;
}

}  // namespace

namespace {

// Reads the flags and the report paths into "o" and "vm"; "" or the
// parser's words. Whole words only, as the run's flags (no unambiguous
// prefixes).
std::string StoreMergeFlags(int argc, const char* const* argv, Options* o, po::variables_map* vm) {
  po::options_description hidden;
  hidden.add_options()("report", po::value(&o->merge_reports)->composing());
  po::options_description all;
  all.add(DescribeMerge(o)).add(hidden);
  po::positional_options_description positional;
  positional.add("report", -1);
  try {
    po::store(
        po::command_line_parser(argc, argv)
            .options(all)
            .positional(positional)
            .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
            .run(),
        *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CliResult ParseMergeCommandLine(int argc, const char* const* argv) {
  CliResult result;
  Options& o = result.options;
  result.action = CliAction::kUsageError;
  po::variables_map vm;
  std::string error = StoreMergeFlags(argc, argv, &o, &vm);
  if (!error.empty()) {
    result.error = "merge: " + error;
    return result;
  }
  if (vm.count("help")) {
    result.action = CliAction::kHelp;
    return result;
  }
  if (o.merge_reports.empty()) {
    result.error = "merge: no reports given (fleetreap merge REPORT.json...)";
    return result;
  }
  error = CheckReportFlags(o);
  if (!error.empty()) {
    result.error = "merge: " + error;
    return result;
  }
  result.action = CliAction::kMerge;
  return result;
}

std::string MergeHelpText() {
  Options options;
  std::ostringstream text;
  text << "Usage: fleetreap merge [options] REPORT.json...\n\n"
          "Joins JSON reports (each from `fleetreap --local --json`, one per node)\n"
          "and journals (--journal: a run cut short leaves one) into one fleet\n"
          "report: the same table, JSON, JUnit, Markdown and\n"
          "failed-hosts outputs and exit status as one run over those hosts.\n"
          "A host may appear in one report only; dry runs and real runs do not mix;\n"
          "a --local report in a file named NODE.json must hold NODE alone.\n\n"
       << DescribeMerge(&options)
       << "\nExit status: as a run (0 clean, bits 1 and 2), 64 usage error,\n"
          "65 a report that cannot be read (the message names the file).\n"
          "\nExample:\n"
          "  fleetreap merge reports/*.json --expect nodes.txt --junit junit.xml\n"
          "\nSee fleetreap-merge(1) for more (man fleetreap-merge).\n";
  return WithoutTrailingSpaces(text.str());
}

}  // namespace fleetreap
