// The GPU reset step's script (gpu_reset.h). Its grammar is read by
// gpu_reset_output.cc.
//
// With units (NVIDIA's procedure) the script starts a guard first: a shell
// in a session of its own (setsid), so neither the step's bound (timeout(1)
// signals its whole process group), Ctrl-C nor a dropped connection reaches
// it. The guard waits for the script and its resets to end, however they
// end, and then starts the units again. No unit is stopped unless the guard
// runs.
#include "fleetreap/remote/gpu_reset.h"

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/scan_script.h"
#include "prelude.h"

namespace fleetreap {

namespace {

// " -- 'UNIT' ..." for a systemctl call.
std::string UnitWords(const std::vector<std::string>& units) {
  std::string s = " --";
  for (const std::string& unit : units) s += " " + ShellQuote(unit);
  return s;
}

// "u=$(timeout ... systemctl VERB -- UNIT...); printf 'WORD RC:TEXT'".
std::string UnitCommand(const char* verb, const char* word, const std::vector<std::string>& units,
                        std::chrono::milliseconds timeout, bool with_errors) {
  std::string s = "u=$(timeout -k 2 " + TimeoutSeconds(timeout) + " systemctl " + verb +
                  UnitWords(units) + (with_errors ? " 2>&1" : " 2>/dev/null") +
                  " </dev/null 8>&-); r=$?\n";
  return s + "printf '" + word + " %s:%s\\0' \"$r\" \"$u\"\n";
}

// One audit line per unit of "units", with the systemctl call's exit code $r.
std::string AuditUnits(const char* action, const std::vector<std::string>& units) {
  std::string s;
  for (const std::string& unit : units) {
    s += "al " +
         ShellQuote(std::string("action=") + action + " unit=" + AuditValue(unit) +
                    " for=gpu_reset") +
         "\" rc=$r\"\n";
  }
  return s;
}

// The guard: started before any stop, in a session of its own. The script
// holds a lock (flock on a mktemp file, fd 8) that every nvidia-smi it
// starts inherits; once the script and all of them are gone the guard gets
// the lock and starts "units" (a unit already active is left alone), so no
// unit starts while a reset still runs. Prints "guard RC:" (0: it runs) and
// sets g to its PID.
std::string Guard(const std::vector<std::string>& units, std::chrono::milliseconds timeout) {
  const std::string body = "exec 9>\"$1\"; flock -w 900 9; rm -f -- \"$1\"; timeout -k 2 " +
                           TimeoutSeconds(timeout) + " systemctl start" + UnitWords(units);
  return "g=; r=1\n"
         "if command -v setsid >/dev/null && command -v flock >/dev/null && l=$(mktemp) && "
         "exec 8>\"$l\" && flock -n 8; then\n"
         "  # shellcheck disable=SC2016  # the guard's own script, one quoted word\n"
         "  setsid /bin/sh -c " +
         ShellQuote(body) +
         " fleetreap-reset-guard \"$l\" </dev/null >/dev/null 2>&1 8>&- &\n"
         "  g=$!; r=0\n"
         "fi\n"
         "printf 'guard %s:\\0' \"$r\"\n";
}

// The units' states after the stop ("stopped RC:STATES"); go=1 only when the
// stop exited 0 and every unit reads inactive or failed.
std::string CheckStopped(const std::vector<std::string>& units) {
  return "s=$r\n" + UnitCommand("is-active", "stopped", units, std::chrono::seconds(10), false) +
         "n=$(printf '%s\\n' \"$u\" | grep -c -x -e inactive -e failed)\n"
         "go=0; [ \"$s\" = 0 ] && [ \"$n\" = " +
         std::to_string(units.size()) + " ] && go=1\n";
}

// Each GPU: nvidia-smi asked first for the compute processes on it; the
// reset runs only when the query exits 0 and lists none, else "busy N
// RC:PIDS" says why it did not.
std::string ResetEach(const std::vector<int>& gpus, std::chrono::milliseconds per_gpu,
                      std::chrono::milliseconds query) {
  std::string s;
  for (int gpu : gpus) {
    const std::string index = std::to_string(gpu);
    s += "a=$(timeout -k 2 " + TimeoutSeconds(query) + " nvidia-smi " + ComputePidsArguments(gpu) +
         " 2>&1 </dev/null); r=$?\n";
    s += "if [ \"$r\" = 0 ] && [ -z \"$a\" ]; then\n";
    s += "o=$(timeout -k 2 " + TimeoutSeconds(per_gpu) + " nvidia-smi --gpu-reset -i " + index +
         " 2>&1 </dev/null); r=$?\n";
    s += "printf 'reset " + index + " %s:%s\\0' \"$r\" \"$o\"\n";
    s += "al 'action=gpu_reset gpu=" + index + "'\" rc=$r\"\n";
    s += "else printf 'busy " + index + " %s:%s\\0' \"$r\" \"$a\"; fi\n";
  }
  return s;
}

}  // namespace

std::string GpuResetScript(const std::vector<int>& gpus, std::chrono::milliseconds per_gpu,
                           const std::vector<std::string>& units,
                           std::chrono::milliseconds unit_timeout, const AuditRequest& audit,
                           std::chrono::milliseconds query_timeout) {
  std::string s = "z() { printf '%s\\0' \"$*\"; }\n" + remote_script_internal::AuditPrelude(audit);
  if (units.empty()) return s + ResetEach(gpus, per_gpu, query_timeout) + "aud\nz end\n";
  s += Guard(units, unit_timeout);
  s += "if [ \"$r\" = 0 ]; then\n";
  s += UnitCommand("stop", "stop", units, unit_timeout, true) + AuditUnits("stop_unit", units);
  s += CheckStopped(units);
  s += "if [ \"$go\" = 1 ]; then\n" + ResetEach(gpus, per_gpu, query_timeout) + "fi\n";
  s += UnitCommand("start", "start", units, unit_timeout, true) + AuditUnits("start_unit", units);
  s += UnitCommand("is-active", "active", units, std::chrono::seconds(10), false);
  // The units were started here: the guard's work is done.
  s += "kill \"$g\" 2>/dev/null; rm -f -- \"$l\"\n";
  s += "fi\n";
  return s + "aud\nz end\n";
}

}  // namespace fleetreap
