// The host view's notes (host_view.h): what the scans could not see or the
// ladder could not end (unkillable holders, control-only holders left out, a
// holder walk that did not run, a blind respawn watch), as the report's
// messages and notes say them. Pure functions of the view; thread-safe.
#include <string>
#include <vector>

#include "fleetreap/escalation/host_view.h"

namespace fleetreap {

std::string UnkillableHolders(const HostView& view) {
  std::string out;
  for (const TrackedHolder& t : view.holders) {
    if (!t.present || t.holder.fate != HolderFate::kUnkillable) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(t.holder.pid) + " (" + t.holder.comm +
           ") in state " + std::string(1, t.holder.state);
  }
  return out;
}

std::string ControlOnlyLeftOut(const HostView& view) {
  if (view.control_only_left_out <= 0) return "";
  return std::to_string(view.control_only_left_out) +
         " processes hold only NVIDIA control devices (/dev/nvidiactl, /dev/nvidia-uvm...) and "
         "no GPU memory: more than a scan describes, so none of them was described or signalled";
}

std::string HolderWalkFailed(const HostView& view) {
  if (!view.holder_walk_failed) return "";
  return "the holder walk could not run (a find or grep over /proc did not start: an argument "
         "list too long?): processes holding the GPUs may be unseen, so the host is not judged "
         "clean";
}

std::vector<std::string> ScanBlindSpots(const HostView& view) {
  std::vector<std::string> notes;
  for (const std::string& note : {HolderWalkFailed(view), ControlOnlyLeftOut(view)}) {
    if (!note.empty()) notes.push_back(note);
  }
  if (!view.children_unlisted.empty()) {
    std::string pids;
    for (int pid : view.children_unlisted) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    notes.push_back(
        "respawn watch blind: the kernel lists no children (no "
        "/proc/PID/task/*/children, CONFIG_PROC_CHILDREN off) of pid " +
        pids + ": a worker it starts again is seen only once it holds a GPU");
  }
  for (const TrackedHolder& t : view.holders) {
    if (!t.present || !t.unheld) continue;
    notes.push_back("pid " + std::to_string(t.holder.pid) + " (" + t.holder.comm +
                    "): nvidia-smi charges it GPU memory but it holds no NVIDIA device file "
                    "(no fd of any thread, no mapping): not signalled, as it is not the process "
                    "the driver charged or not one a signal would free");
  }
  return notes;
}

}  // namespace fleetreap
