// Batch, run: a fused round trip (the library once, then each step's own
// part) replies byte for byte as its steps' whole scripts joined (each with
// its own copy of the library, as round trips were sent before), on a
// host-like scratch folder with one holder of a device file and a /dev/shm
// candidate, with perl and by the shell path. Both run in one PID namespace
// of their own, each in a subshell of one shell, so the session, the clock
// and every PID they report are the same (the holder's SigQ, a count of the
// whole machine's, is left out).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fleetreap/remote/batch.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/stop_units.h"
#include "support/scratch_dir.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

class BatchRepliesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("/bin/nvidia-smi",
          "#!/bin/sh\ncase \"$*\" in *query-gpu*) echo index; echo 0;; "
          "*query-compute-apps*) echo pid;; esac\n");
    Write("/bin/systemctl",
          "#!/bin/sh\n[ \"$1\" = show ] && printf 'Id=vllm.service\\nActiveState=active\\n'\n"
          "exit 0\n");
    Write("/bin/logger", "#!/bin/sh\ncat >/dev/null\n");
    std::ofstream(dir() + "/dev/nvidia0") << "";
    std::ofstream(dir() + "/kmsg") << "6,0,1000,-;Linux version 6.8.0\n";
    std::ofstream(dir() + "/driver/0000:19:00.0/information") << "Device Minor: 0\n";
    paths_.dev_dir = dir() + "/dev";
    paths_.driver_dir = dir() + "/driver";
    paths_.shm_dir = dir() + "/shm";
    paths_.kmsg = dir() + "/kmsg";
  }
  const std::string& dir() const { return scratch_.path(); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir() + name) << text;
    chmod((dir() + name).c_str(), 0755);
  }
  // Runs "fused" and "joined", each in a subshell of one shell in a PID
  // namespace of its own where a sleep holds the stand-in /dev/nvidia0, the
  // /dev/shm candidate made again before each. False where no such
  // namespace can be made.
  bool Run(const std::string& fused, const std::string& joined) {
    std::ofstream(dir() + "/fused.sh") << fused;
    std::ofstream(dir() + "/joined.sh") << joined;
    std::ofstream(dir() + "/run.sh") << "exec 7<dev/nvidia0; /bin/sleep 30 & H=$!; exec 7<&-\n"
                                     << "echo x >shm/nccl-1; (. ./fused.sh) >fused.out\n"
                                     << "echo x >shm/nccl-1; (. ./joined.sh) >joined.out\n"
                                     << "kill $H\n";
    const std::string cmd = "cd '" + dir() + "' && PATH='" + dir() +
                            "/bin':/usr/bin:/bin unshare --pid --fork --mount-proc /bin/sh run.sh "
                            ">/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir() + "/" + name);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  ScanRequest Inspect(bool holders) const {
    ScanRequest request;
    request.units = {"vllm*.service"};
    request.nvidia_smi_timeout = milliseconds(2000);
    request.holders = holders;
    request.readiness = true;
    request.kernel_log = true;
    return request;
  }

  ScratchDir scratch_{"batch-replies", {"bin", "dev", "shm", "driver", "driver/0000:19:00.0"}};
  HostPaths paths_;
};

// "out" with the holder's SigQ line (the signals queued for its user, any
// process of the machine's) made one value: the one text that moves between
// two runs.
std::string Steady(std::string out) {
  const std::string key = "\nSigQ:\t";
  for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1)) {
    const size_t from = at + key.size();
    out.replace(from, out.find('\n', from) - from, "-");
  }
  return out;
}

// "script" without its last "end" record.
std::string WithoutEnd(const std::string& script) {
  return script.substr(0, script.size() - std::string("z end\n").size());
}

TEST_F(BatchRepliesTest, FusedRepliesAsItsStepsJoined) {
  ShmRequest listing;
  listing.patterns = {"nccl-*"};
  listing.dry_run = true;
  AuditRequest audit;
  audit.run_id = "r-1";
  ShmRequest clean;
  clean.patterns = {"nccl-*"};
  clean.audit = audit;
  const std::string listing_alone = ShmCleanScript(listing.patterns, true, paths_);
  const std::string clean_alone = ShmCleanScript(clean.patterns, false, paths_, audit);
  const std::string full = ScanScript(Inspect(true), paths_);
  const std::string quick = ScanScript(Inspect(false), paths_);
  const StopUnitsRequest stops{{"vllm.service"}, milliseconds(5000), audit};
  struct Case {
    const char* name;
    std::vector<StepRequest> batch;
    std::string joined;
    bool holder;  // a full scan reports the holder
  };
  const std::vector<Case> cases = {
      {"dry run's inspect",
       {listing, Inspect(true)},
       WithoutEnd(listing_alone) + "RW=1\n" + full,
       true},
      {"re-scan and clean", {Inspect(false), clean}, quick + clean_alone, false},
      {"verify",
       {Inspect(true), clean, Inspect(false)},
       full + WithoutEnd(clean_alone) + quick,
       true},
      {"stops and scan",
       {stops, Inspect(true)},
       WithoutEnd(StopUnitsScript(stops.units, stops.unit_timeout, audit)) + full,
       true},
  };
  for (const Case& c : cases) {
    for (bool perl : {true, false}) {
      const std::string fused = BatchScript(c.batch, paths_);
      ASSERT_LE(fused.size(), c.joined.size()) << c.name;
      if (!Run(perl ? fused : WithoutPerl(fused), perl ? c.joined : WithoutPerl(c.joined))) {
        GTEST_SKIP() << "no PID namespace of our own here (unshare --pid --mount-proc)";
      }
      const std::string out = Read("fused.out");
      EXPECT_EQ(out.substr(out.size() - 4), std::string("end") + '\0') << c.name << " " << perl;
      EXPECT_EQ(out.find("fdp ") != std::string::npos, c.holder) << c.name << " " << perl;
      EXPECT_EQ(Steady(out), Steady(Read("joined.out"))) << c.name << " " << perl;
    }
  }
}

}  // namespace
}  // namespace fleetreap
