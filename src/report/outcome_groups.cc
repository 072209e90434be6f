// GroupOutcomes (host_outcome.h) and OutcomeFold (outcome_fold.h): hosts
// gathered into one row per reason, their counts and GPU lists folded into
// the row instead of splitting it. The fold reads each detail's pieces
// (outcome_detail.h), never its text.
#include <algorithm>
#include <set>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/outcome_fold.h"

namespace fleetreap {
namespace {

// A detail cut into text and the values between it: a count, or a
// problem's GPU list ("GPU 3", "GPUs 3,5").
struct Piece {
  enum class Kind { kText, kCount, kGpus } kind = Kind::kText;
  std::string text;     // kText
  long long count = 0;  // kCount; the lowest of a group's
  long long high = 0;   // kCount: the highest of a group's
  long long sum = 0;    // kCount: the group's total
  std::set<int> gpus;   // kGpus
};

// The detail's pieces, each count its own range and total so far.
std::vector<Piece> PiecesOf(const OutcomeDetail& detail) {
  std::vector<Piece> pieces;
  for (const DetailPiece& from : detail.pieces()) {
    Piece piece;
    switch (from.kind) {
      case DetailPiece::Kind::kText: piece.text = from.text; break;
      case DetailPiece::Kind::kCount:
        piece.kind = Piece::Kind::kCount;
        piece.count = piece.high = piece.sum = from.count;
        break;
      case DetailPiece::Kind::kGpus:
        piece.kind = Piece::Kind::kGpus;
        piece.gpus.insert(from.gpus.begin(), from.gpus.end());
        break;
    }
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

// A group's folded pieces as one detail: each count the hosts share as it
// is (per host), each GPU list as the union. When the hosts' counts differ,
// never a range of them ("1-8" reads like GPUs or PIDs): every count is
// the hosts' total, and the detail says so ("17 killed (TERM 17) across the
// 3 hosts").
std::string Render(const std::vector<Piece>& pieces, size_t hosts) {
  const bool differ =
      std::any_of(pieces.begin(), pieces.end(), [](const Piece& p) { return p.high > p.count; });
  // A total of counts that were each 1 takes the plural ("1 unit stopped"
  // on each host, "3 units stopped" across them).
  static const std::pair<std::string, std::string> kPlurals[] = {
      {" unit ", " units "}, {" /dev/shm entry ", " /dev/shm entries "}};
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& piece = pieces[i];
    const bool plural = differ && i > 0 && pieces[i - 1].kind == Piece::Kind::kCount &&
                        pieces[i - 1].high == 1 && pieces[i - 1].sum > 1;
    switch (piece.kind) {
      case Piece::Kind::kText: {
        std::string text = piece.text;
        for (const auto& [one, many] : kPlurals) {
          if (plural && text.rfind(one, 0) == 0) text = many + text.substr(one.size());
        }
        out += text;
        break;
      }
      case Piece::Kind::kCount: out += std::to_string(differ ? piece.sum : piece.count); break;
      case Piece::Kind::kGpus: {
        std::vector<std::string> names;
        for (int gpu : piece.gpus) names.push_back(std::to_string(gpu));
        out += (piece.gpus.size() == 1 ? "GPU " : "GPUs ") + Join(names, ",");
        break;
      }
    }
  }
  if (differ) out += " across the " + std::to_string(hosts) + " hosts";
  return out;
}

// Whether "a" and "b" are cut alike (the same kinds in the same places).
bool SameCut(const std::vector<Piece>& a, const std::vector<Piece>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind) return false;
  }
  return true;
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

std::string OutcomeShape(const OutcomeDetail& detail) { return detail.Shape(); }

struct OutcomeFold::Gathering {
  OutcomeKind kind = OutcomeKind::kClean;
  size_t first = 0;           // the lowest order among the members
  std::vector<Piece> pieces;  // the first member's, counts and GPUs folded in
  std::vector<std::pair<size_t, std::string>> members;  // order, name
};

OutcomeFold::OutcomeFold() = default;
OutcomeFold::~OutcomeFold() = default;
OutcomeFold::OutcomeFold(const OutcomeFold&) = default;
OutcomeFold& OutcomeFold::operator=(const OutcomeFold&) = default;
OutcomeFold::OutcomeFold(OutcomeFold&&) noexcept = default;
OutcomeFold& OutcomeFold::operator=(OutcomeFold&&) noexcept = default;

void OutcomeFold::Add(size_t order, OutcomeKind kind, const OutcomeDetail& detail,
                      const std::string& name) {
  std::vector<Piece> pieces = PiecesOf(detail);
  auto key = std::make_pair(kind, detail.Shape());
  auto it = by_shape_.find(key);
  if (it == by_shape_.end()) {
    by_shape_.emplace(std::move(key), gatherings_.size());
    gatherings_.push_back(Gathering{kind, order, std::move(pieces), {{order, name}}});
    return;
  }
  Gathering& g = gatherings_[it->second];
  g.members.emplace_back(order, name);
  if (!SameCut(g.pieces, pieces)) return;
  const bool earlier = order < g.first;
  g.first = std::min(g.first, order);
  for (size_t i = 0; i < pieces.size(); ++i) {
    Piece& into = g.pieces[i];
    if (earlier) into.text = pieces[i].text;
    into.count = std::min(into.count, pieces[i].count);
    into.high = std::max(into.high, pieces[i].high);
    into.sum += pieces[i].count;
    into.gpus.insert(pieces[i].gpus.begin(), pieces[i].gpus.end());
  }
}

std::vector<OutcomeGroup> OutcomeFold::Groups() const {
  std::vector<const Gathering*> sorted;
  for (const Gathering& g : gatherings_) sorted.push_back(&g);
  std::sort(sorted.begin(), sorted.end(), [](const Gathering* a, const Gathering* b) {
    const int rank_a = OutcomeRank(a->kind);
    const int rank_b = OutcomeRank(b->kind);
    return rank_a != rank_b ? rank_a < rank_b : a->first < b->first;
  });
  std::vector<OutcomeGroup> groups;
  for (const Gathering* g : sorted) {
    std::vector<std::pair<size_t, std::string>> members = g->members;
    std::sort(members.begin(), members.end());
    OutcomeGroup group{g->kind, Render(g->pieces, members.size()), {}};
    for (auto& member : members) group.names.push_back(std::move(member.second));
    groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<OutcomeGroup> GroupOutcomes(const RunReport& report) {
  OutcomeFold fold;
  size_t order = 0;
  for (const HostReport& host : report.hosts) {
    HostOutcome outcome = OutcomeOf(host, report.dry_run);
    fold.Add(order++, outcome.kind, outcome.phrase, host.name);
  }
  for (const HostWithoutResult& host : HostsWithoutResult(report)) {
    fold.Add(order++, host.started_never ? OutcomeKind::kNotStarted : OutcomeKind::kNoReport,
             OutcomeDetail::Words(host.why), host.name);
  }
  return fold.Groups();
}

}  // namespace fleetreap
