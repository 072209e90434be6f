// GroupOutcomes (host_outcome.h): hosts gathered into one row per reason,
// their counts and GPU lists folded into the row instead of splitting it.
#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/report/host_outcome.h"

namespace fleetreap {
namespace {

// A detail cut into text and the values between it: a count, or a
// problem's GPU list ("GPU 3", "GPUs 3,5").
struct Piece {
  enum class Kind { kText, kCount, kGpus } kind = Kind::kText;
  std::string text;     // kText
  long long count = 0;  // kCount
  std::set<int> gpus;   // kGpus
};

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// "GPU 3" / "GPUs 3,5" at "at", at the start of a phrase (the detail's
// start, or after ", " or "; "); its length, 0 when there is none.
size_t GpuListAt(const std::string& detail, size_t at, std::set<int>* gpus) {
  const bool phrase_start =
      at == 0 ||
      (at >= 2 && (detail.compare(at - 2, 2, ", ") == 0 || detail.compare(at - 2, 2, "; ") == 0));
  if (!phrase_start) return 0;
  size_t i = at;
  if (detail.compare(i, 5, "GPUs ") == 0) {
    i += 5;
  } else if (detail.compare(i, 4, "GPU ") == 0) {
    i += 4;
  } else {
    return 0;
  }
  if (i >= detail.size() || !IsDigit(detail[i])) return 0;
  gpus->clear();
  while (i < detail.size() && IsDigit(detail[i])) {
    size_t end = i;
    while (end < detail.size() && IsDigit(detail[end]) && end - i < 6) ++end;
    gpus->insert(std::stoi(detail.substr(i, end - i)));
    i = end;
    if (i + 1 < detail.size() && detail[i] == ',' && IsDigit(detail[i + 1])) ++i;
  }
  // A bus id ("GPU 0000:B1:00.0") is a name, not a list.
  if (i < detail.size() && (std::isalnum(static_cast<unsigned char>(detail[i])) != 0 ||
                            detail[i] == ':' || detail[i] == '.')) {
    return 0;
  }
  return i - at;
}

std::vector<Piece> Cut(const std::string& detail) {
  std::vector<Piece> pieces;
  auto text = [&pieces](char c) {
    if (pieces.empty() || pieces.back().kind != Piece::Kind::kText) pieces.push_back({});
    pieces.back().text += c;
  };
  for (size_t i = 0; i < detail.size();) {
    std::set<int> gpus;
    if (size_t length = GpuListAt(detail, i, &gpus)) {
      Piece piece;
      piece.kind = Piece::Kind::kGpus;
      piece.gpus = std::move(gpus);
      pieces.push_back(std::move(piece));
      i += length;
      continue;
    }
    // A count: digits not glued to a word ("TP3"), a bus id or a version
    // ("0000:B1:00.0", "1.5").
    auto glue = [&detail](size_t at) {
      const char c = detail[at];
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
    };
    const bool starts = IsDigit(detail[i]) && (i == 0 || !glue(i - 1));
    size_t end = i;
    while (starts && end < detail.size() && IsDigit(detail[end]) && end - i < 12) ++end;
    if (starts && (end == detail.size() || !glue(end))) {
      Piece piece;
      piece.kind = Piece::Kind::kCount;
      piece.count = std::stoll(detail.substr(i, end - i));
      pieces.push_back(std::move(piece));
      i = end;
      continue;
    }
    text(detail[i]);
    ++i;
  }
  return pieces;
}

std::string ShapeOf(const std::vector<Piece>& pieces) {
  std::string shape;
  for (const Piece& piece : pieces) {
    switch (piece.kind) {
      case Piece::Kind::kText: shape += piece.text; break;
      case Piece::Kind::kCount: shape += "#"; break;
      case Piece::Kind::kGpus: shape += "GPU @"; break;
    }
  }
  return shape;
}

// The members' pieces (same shape) as one detail.
std::string Fold(const std::vector<std::vector<Piece>>& members) {
  const std::vector<Piece>& first = members.front();
  std::string out;
  for (size_t i = 0; i < first.size(); ++i) {
    switch (first[i].kind) {
      case Piece::Kind::kText: out += first[i].text; break;
      case Piece::Kind::kCount: {
        long long low = first[i].count;
        long long high = low;
        for (const auto& member : members) {
          low = std::min(low, member[i].count);
          high = std::max(high, member[i].count);
        }
        out += std::to_string(low) + (high > low ? "-" + std::to_string(high) : "");
        break;
      }
      case Piece::Kind::kGpus: {
        std::set<int> all;
        for (const auto& member : members) all.insert(member[i].gpus.begin(), member[i].gpus.end());
        std::vector<std::string> names;
        for (int gpu : all) names.push_back(std::to_string(gpu));
        out += (all.size() == 1 ? "GPU " : "GPUs ") + Join(names, ",");
        break;
      }
    }
  }
  return out;
}

}  // namespace

int OutcomeRank(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kDirty:
    case OutcomeKind::kNotReady: return 0;
    case OutcomeKind::kFailed: return 1;
    case OutcomeKind::kUnreachable: return 2;
    case OutcomeKind::kNoReport: return 3;
    case OutcomeKind::kNotStarted: return 4;
    case OutcomeKind::kWouldClean: return 5;
    case OutcomeKind::kCleaned: return 6;
    case OutcomeKind::kClean: return 7;
  }
  return 0;
}

std::string OutcomeShape(const std::string& detail) { return ShapeOf(Cut(detail)); }

std::vector<OutcomeGroup> GroupOutcomes(const RunReport& report) {
  struct Gathering {
    OutcomeKind kind;
    std::string shape;
    std::vector<std::vector<Piece>> details;
    std::vector<std::string> names;
  };
  std::vector<Gathering> gatherings;
  auto add = [&gatherings](OutcomeKind kind, const std::string& detail, const std::string& name) {
    std::vector<Piece> pieces = Cut(detail);
    const std::string shape = ShapeOf(pieces);
    for (Gathering& g : gatherings) {
      if (g.kind == kind && g.shape == shape) {
        g.details.push_back(std::move(pieces));
        g.names.push_back(name);
        return;
      }
    }
    gatherings.push_back(Gathering{kind, shape, {std::move(pieces)}, {name}});
  };
  for (const HostReport& host : report.hosts) {
    HostOutcome outcome = OutcomeOf(host, report.dry_run);
    add(outcome.kind, outcome.detail, host.name);
  }
  for (const HostWithoutResult& host : HostsWithoutResult(report)) {
    add(host.started_never ? OutcomeKind::kNotStarted : OutcomeKind::kNoReport, host.why,
        host.name);
  }
  std::vector<OutcomeGroup> groups;
  for (const Gathering& g : gatherings) groups.push_back({g.kind, Fold(g.details), g.names});
  std::stable_sort(groups.begin(), groups.end(), [](const OutcomeGroup& a, const OutcomeGroup& b) {
    return OutcomeRank(a.kind) < OutcomeRank(b.kind);
  });
  return groups;
}

}  // namespace fleetreap
