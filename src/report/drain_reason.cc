#include "fleetreap/report/drain_reason.h"

#include <algorithm>

#include "fleetreap/base/text.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/report/host_findings.h"
#include "fleetreap/report/host_outcome.h"

namespace fleetreap {
namespace {

constexpr size_t kNameCap = 48;
constexpr size_t kMessageCap = 200;

std::string OneLine(const std::string& text, size_t cap) {
  return EscapeControlBytes(text, cap, false);
}

bool StillThere(const Holder& holder) {
  return holder.fate != HolderFate::kTerminated && holder.fate != HolderFate::kKilled &&
         holder.fate != HolderFate::kGone;
}

bool Has(const std::vector<int>& list, int value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The holder to blame for busy GPU "index": charged there before holding
// its file, fleetreap's targets before protected daemons.
const Holder* HolderOf(const HostReport& host, int index) {
  const Holder* best = nullptr;
  int best_rank = 0;
  for (const Holder& holder : host.holders) {
    if (!StillThere(holder)) continue;
    int rank = 0;
    if (Has(holder.charged_gpus, index)) {
      rank = 4;
    } else if (Has(holder.gpus, index)) {
      rank = 2;
    } else {
      continue;
    }
    if (holder.fate != HolderFate::kProtected) ++rank;
    if (rank > best_rank) {
      best = &holder;
      best_rank = rank;
    }
  }
  return best;
}

std::string DescribeHolder(const Holder& holder) {
  std::string text =
      "pid " + std::to_string(holder.pid) + " (" + OneLine(holder.comm, kNameCap) + ")";
  if (holder.fate == HolderFate::kUnkillable) {
    text += ", unkillable in state " + OneLine(std::string(1, holder.state), 4);
  } else if (holder.fate == HolderFate::kProtected) {
    text += ", protected";
  } else if (holder.fate == HolderFate::kOutOfScope) {
    text += ", outside the run's scope";
  }
  return text;
}

std::string DescribeGpu(const HostReport& host, const GpuReading& gpu) {
  std::string label = GpuLabel(gpu);
  std::string used = gpu.used_mib ? std::to_string(*gpu.used_mib) + " MiB" : "memory unknown";
  switch (gpu.state) {
    case GpuState::kBusy:
    case GpuState::kProtectedOnly:
      if (const Holder* holder = HolderOf(host, gpu.index)) {
        return label + " held by " + DescribeHolder(*holder);
      }
      return label + " busy (" + used + ")";
    case GpuState::kGhost: return label + " ghost memory (" + used + ", no process holds it)";
    case GpuState::kLost:
      return label + " lost" + (gpu.detail.empty() ? "" : ": " + OneLine(gpu.detail, kMessageCap));
    case GpuState::kRecovery:
      return label + " needs recovery" +
             (gpu.detail.empty() ? "" : ": " + OneLine(gpu.detail, kMessageCap));
    case GpuState::kMissing: return label + " missing";
    default:
      return label + " " + GpuStateName(gpu.state) +
             (gpu.detail.empty() ? "" : ": " + OneLine(gpu.detail, kMessageCap));
  }
}

}  // namespace

std::string DrainReason(const HostReport& host) {
  const std::string prefix = std::string(kDrainReasonPrefix) + " ";
  switch (host.status) {
    case HostStatus::kClean: return "";
    case HostStatus::kUnreachable:
    case HostStatus::kFailed: {
      std::string kind = host.error_kind == ErrorKind::kNone
                             ? ""
                             : std::string(ErrorKindName(host.error_kind)) + ": ";
      return prefix + HostStatusName(host.status) + ": " + kind +
             OneLine(HostMessage(host), kMessageCap);
    }
    case HostStatus::kNotReady: {
      std::string summary = ReadinessSummary(host);
      if (summary.empty()) summary = HostMessage(host);
      return prefix + "not ready: " + OneLine(summary.empty() ? "readiness" : summary, 280);
    }
    case HostStatus::kDirty: break;
  }
  const std::vector<GpuReading>& gpus =
      host.gpus_after.empty() ? host.gpus_before : host.gpus_after;
  std::string first;
  int others = 0;
  for (const GpuReading& gpu : gpus) {
    if (GpuStateIsClean(gpu.state)) continue;
    if (first.empty()) {
      first = DescribeGpu(host, gpu);
    } else {
      ++others;
    }
  }
  if (!first.empty()) {
    if (others > 0) {
      first +=
          " (+" + std::to_string(others) + " more GPU" + (others == 1 ? "" : "s") + " not clean)";
    }
    return prefix + first;
  }
  for (const Holder& holder : host.holders) {
    if (StillThere(holder) && !NeverSignalled(holder.fate)) {
      return prefix + DescribeHolder(holder) + " still there";
    }
    if (holder.fate == HolderFate::kUnkillable) return prefix + DescribeHolder(holder);
  }
  if (!host.nvidia_smi_error.empty()) {
    return prefix + "nvidia-smi failed: " + OneLine(host.nvidia_smi_error, kMessageCap);
  }
  return prefix + "not clean: " + OutcomeOf(host, false).detail;
}

std::string RenderDrainReasons(const RunReport& report) {
  std::string out;
  for (const HostReport& host : report.hosts) {
    if (host.status == HostStatus::kClean) continue;
    out += host.name + " " + DrainReason(host) + "\n";
  }
  for (const HostWithoutResult& host : HostsWithoutResult(report)) {
    out += host.name + " " + kDrainReasonPrefix +
           (host.started_never ? std::string(" not started") : " no report: " + host.why) + "\n";
  }
  return out;
}

}  // namespace fleetreap
