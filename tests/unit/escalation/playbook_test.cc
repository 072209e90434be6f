#include "fleetreap/escalation/playbook.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fleetreap {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PlaybookTest, BuiltInDefaultIsTheShippedFile) {
  EXPECT_EQ(ReadFile(FLEETREAP_SOURCE_DIR "/playbooks/default.yaml"), DefaultPlaybookText());
  Playbook parsed;
  Status status = ParsePlaybook(DefaultPlaybookText(), "default.yaml", &parsed);
  ASSERT_TRUE(status.ok()) << status.ToString();
}

TEST(PlaybookTest, DefaultSettings) {
  const Playbook& p = DefaultPlaybook();
  EXPECT_EQ(p.name, "default");
  EXPECT_EQ(p.source, "<built-in default>");
  EXPECT_EQ(p.steps, (std::vector<Step>{Step::kInspect, Step::kStopUnits, Step::kTerm, Step::kKill,
                                        Step::kRescan, Step::kCleanShm, Step::kVerify}));
  EXPECT_EQ(p.term_grace.count(), 10000);
  EXPECT_EQ(p.kill_grace.count(), 5000);
  EXPECT_EQ(p.settle.count(), 2000);
  EXPECT_EQ(p.max_rounds, 3);
  EXPECT_GE(p.poll_interval.count(), 100);
  EXPECT_LE(p.poll_interval.count(), 200);
  EXPECT_FALSE(p.shm_patterns.empty());
  EXPECT_TRUE(p.units.empty());
  EXPECT_FALSE(p.Runs(Step::kResetGhosts));
}

TEST(PlaybookTest, ShippedPlaybooksLoad) {
  struct Row {
    const char* file;
    const char* name;
    bool stops_units;
    bool signals;
  };
  const Row rows[] = {
      {"default.yaml", "default", true, true},
      {"vllm.yaml", "vllm", true, true},
      {"inspect.yaml", "inspect", false, false},
      {"reset.yaml", "reset", true, true},
  };
  for (const Row& row : rows) {
    Playbook p;
    Status status =
        LoadPlaybookFile(std::string(FLEETREAP_SOURCE_DIR "/playbooks/") + row.file, &p);
    ASSERT_TRUE(status.ok()) << row.file << ": " << status.ToString();
    EXPECT_EQ(p.name, row.name);
    EXPECT_EQ(p.Runs(Step::kStopUnits), row.stops_units) << row.file;
    EXPECT_EQ(p.Runs(Step::kTerm), row.signals) << row.file;
    EXPECT_EQ(p.Runs(Step::kKill), row.signals) << row.file;
  }
  Playbook vllm;
  ASSERT_TRUE(LoadPlaybookFile(FLEETREAP_SOURCE_DIR "/playbooks/vllm.yaml", &vllm).ok());
  EXPECT_EQ(vllm.units, std::vector<std::string>{"vllm*.service"});
}

TEST(PlaybookTest, ParsesSettings) {
  Playbook p;
  Status status = ParsePlaybook(
      "name: fast\n"
      "steps: [term, inspect, verify, kill, stop_units]\n"
      "units: [a.service, 'b@1.service']\n"
      "term_grace: 1.5s\n"
      "kill_grace: 250ms\n"
      "poll_interval: 100ms\n"
      "settle: 0s\n"
      "settle_if_clean: 0s\n"
      "max_rounds: 5\n"
      "shm_patterns: [nccl-*]\n"
      "threshold_mib: 64\n"
      "protect: [/opt/agent/bin/agent, my-daemon]\n",
      "fast.yaml", &p);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(p.name, "fast");
  EXPECT_EQ(p.steps, (std::vector<Step>{Step::kInspect, Step::kStopUnits, Step::kTerm, Step::kKill,
                                        Step::kVerify}));
  EXPECT_EQ(p.units.size(), 2u);
  EXPECT_EQ(p.term_grace.count(), 1500);
  EXPECT_EQ(p.kill_grace.count(), 250);
  EXPECT_EQ(p.settle.count(), 0);
  EXPECT_EQ(p.max_rounds, 5);
  EXPECT_EQ(p.threshold_mib, 64);
  EXPECT_EQ(p.protect.size(), 2u);
}

TEST(PlaybookTest, Errors) {
  struct Row {
    const char* yaml;
    const char* error;
  };
  const Row rows[] = {
      {"name: x\nterm_grace: soon\n",
       "x.yaml:2:1: term_grace must be a duration like \"10s\", got \"soon\""},
      {"escalate: true\n",
       "x.yaml:1:1: unknown setting \"escalate\"; settings are name, description, steps, units, "
       "unit_stop_timeout, term_grace, kill_grace, poll_interval, settle, settle_if_clean, "
       "respawn_wait, max_rounds, shm_patterns, shm_under_scope, threshold_mib, protect, "
       "daemon_allowance_mib, reset_stops_daemons, ready"},
      {"kil_grace: 5s\n", "x.yaml:1:1: unknown setting \"kil_grace\" (did you mean kill_grace?)"},
      {"setle: 2s\n", "x.yaml:1:1: unknown setting \"setle\" (did you mean settle?)"},
      {"steps: [inspect, nuke]\n",
       "x.yaml:1:18: unknown step \"nuke\"; steps are inspect, stop_units, "
       "term, kill, rescan, clean_shm, verify, reset_ghosts"},
      {"steps: [term, term]\n", "x.yaml:1:15: step \"term\" is listed twice"},
      {"max_rounds: 0\n", "x.yaml:1:1: max_rounds must be a whole number from 1 to 20, got \"0\""},
      {"threshold_mib: lots\n",
       "x.yaml:1:1: threshold_mib must be a whole number from 0 to 16777216, "
       "got \"lots\""},
      {"shm_patterns: ['*']\n",
       "x.yaml:1:1: shm_patterns entry \"*\" must be a file name glob starting "
       "with at least two literal characters"},
      {"shm_patterns: [../etc/*]\n",
       "x.yaml:1:1: shm_patterns entry \"../etc/*\" must be a file name glob "
       "starting with at least two literal characters"},
      {"units: [--now]\n", "x.yaml:1:9: units entry \"--now\" is not a unit name"},
      // Units obey the protected set: never a daemon's, sshd's or systemd's.
      {"units: [vllm.service, nvidia*]\n",
       "x.yaml:1:23: units entry \"nvidia*\" would stop nvidia-persistenced.service, a "
       "protected daemon's unit (nvidia-persistenced); fleetreap never stops it"},
      {"units:\n  - ssh.service\n",
       "x.yaml:2:5: units entry \"ssh.service\" would stop sshd's unit; fleetreap never "
       "stops it"},
      {"units: ['*']\n",
       "x.yaml:1:9: units entry \"*\" must start with at least two literal characters"},
      {"units: ['*.service']\n",
       "x.yaml:1:9: units entry \"*.service\" must start with at least two literal "
       "characters"},
      {"units: [session-*]\n",
       "x.yaml:1:9: units entry \"session-*\" would stop session-1.scope, a session or "
       "container scope; fleetreap never stops it"},
      {"units: [systemd-journald.service]\n",
       "x.yaml:1:9: units entry \"systemd-journald.service\" would stop systemd's own unit; "
       "fleetreap never stops it"},
      {"units: [dcgm*]\n",
       "x.yaml:1:9: units entry \"dcgm*\" would stop dcgm.service, a protected daemon's unit "
       "(nv-hostengine); fleetreap never stops it"},
      {"steps: [inspect, term]\nunits: [vllm.service]\n",
       "x.yaml:2:1: units are listed but the steps have no stop_units; add stop_units to "
       "steps, or remove units"},
      {"units: a.service\n", "x.yaml:1:1: units must be a list"},
      {"poll_interval: 1ms\n", "x.yaml:1:1: poll_interval must be from 10ms to 5s"},
      {"- a\n- b\n", "x.yaml:1:1: a playbook must be a mapping"},
      {"", "x.yaml: empty playbook"},
      {"name: [unclosed\n", "x.yaml:2:1: end of sequence flow not found"},
      {"steps: [reset_ghosts]\n", "x.yaml: step reset_ghosts needs step verify"},
      {"reset_stops_daemons: yes\n",
       "x.yaml:1:1: reset_stops_daemons must be true or false, got \"yes\""},
      {"steps: [inspect, verify]\nreset_stops_daemons: true\n",
       "x.yaml: reset_stops_daemons needs step reset_ghosts"},
      {"shm_under_scope: all\n", "x.yaml:1:1: shm_under_scope must be owned or none, got \"all\""},
      {"shm_under_scope: [owned]\n", "x.yaml:1:1: shm_under_scope must be a single value"},
  };
  for (const Row& row : rows) {
    Playbook p;
    p.name = "untouched";
    Status status = ParsePlaybook(row.yaml, "x.yaml", &p);
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput) << row.yaml;
    EXPECT_EQ(status.message(), row.error) << row.yaml;
    EXPECT_EQ(p.name, "untouched");
  }
}

// A playbook that names no steps runs the default ladder, not an inspect
// that changes nothing.
TEST(PlaybookTest, NoStepsMeansTheDefaultLadder) {
  Playbook p;
  ASSERT_TRUE(ParsePlaybook("name: quick\nterm_grace: 2s\n", "q.yaml", &p).ok());
  EXPECT_EQ(p.steps, DefaultPlaybookSteps());
  EXPECT_EQ(p.steps, DefaultPlaybook().steps);
  ASSERT_TRUE(ParsePlaybook("name: vllm\nunits: [vllm*.service]\n", "v.yaml", &p).ok());
  EXPECT_TRUE(p.Runs(Step::kStopUnits));
}

// A file that cannot be read says why, in the system's words.
TEST(PlaybookTest, UnreadableFile) {
  const std::string dir = FLEETREAP_SOURCE_DIR "/playbooks";
  struct Case {
    std::string path;
    std::string message;
  };
  const Case kCases[] = {
      {"/nonexistent/p.yaml",
       "/nonexistent/p.yaml: cannot read the playbook file: No such file or directory"},
      {dir, dir + ": cannot read the playbook file: Is a directory"},
      {dir + "/default.yaml/x.yaml",
       dir + "/default.yaml/x.yaml: cannot read the playbook file: Not a directory"},
  };
  for (const Case& c : kCases) {
    Playbook p;
    p.name = "untouched";
    Status status = LoadPlaybookFile(c.path, &p);
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput) << c.path;
    EXPECT_EQ(status.message(), c.message);
    EXPECT_EQ(p.name, "untouched") << c.path;
  }
}

// A bare name that is nowhere: the error names every folder looked in.
TEST(PlaybookTest, ABareNameNotFoundNamesTheFoldersSearched) {
  Playbook p;
  Status status = LoadPlaybookFile("no-such-playbook.yaml", &p);
  EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(status.message().rfind("no-such-playbook.yaml: cannot read the playbook file: No such "
                                   "file or directory (looked in this folder, ",
                                   0),
            0u)
      << status.message();
  EXPECT_NE(status.message().find("/share/fleetreap/playbooks, "), std::string::npos);
  EXPECT_NE(status.message().find("/playbooks)"), std::string::npos);
}

// A name without a folder is also looked for among the shipped playbooks:
// an install's share folder, then a source tree's playbooks/.
TEST(PlaybookTest, ShippedPlaybooksBesideTheBinary) {
  EXPECT_EQ(
      ShippedPlaybookDirs("/usr/bin/fleetreap"),
      (std::vector<std::string>{"/usr/bin/../share/fleetreap/playbooks", "/usr/bin/../playbooks"}));
  EXPECT_EQ(ShippedPlaybookDirs("/src/fleetreap/build/fleetreap"),
            (std::vector<std::string>{"/src/fleetreap/build/../share/fleetreap/playbooks",
                                      "/src/fleetreap/build/../playbooks"}));
  EXPECT_TRUE(ShippedPlaybookDirs("fleetreap").empty());
  EXPECT_TRUE(ShippedPlaybookDirs("").empty());
}

// Under a scope clean_shm removes the signalled holders' own segments
// unless the playbook says none (shm_scope.h).
TEST(PlaybookTest, ShmUnderScope) {
  EXPECT_EQ(DefaultPlaybook().shm_under_scope, ShmUnderScope::kOwned);
  Playbook p;
  ASSERT_TRUE(ParsePlaybook("shm_under_scope: none\n", "x.yaml", &p).ok());
  EXPECT_EQ(p.shm_under_scope, ShmUnderScope::kNone);
  ASSERT_TRUE(ParsePlaybook("shm_under_scope: owned\n", "x.yaml", &p).ok());
  EXPECT_EQ(p.shm_under_scope, ShmUnderScope::kOwned);
}

}  // namespace
}  // namespace fleetreap
