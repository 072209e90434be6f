// OutcomeDetail: a table row's detail as words and the values between them
// ("8 killed (TERM 6, KILL 2)" is the count 8, " killed (TERM ", the count
// 6, ", KILL ", the count 2, ")"), so that hosts fold on values and never on
// their own text: a digit in a host's message, a unit or a process name is
// part of its words, never read back as a count. Value type;
// thread-compatible.
#pragma once

#include <string>
#include <vector>

namespace fleetreap {

struct DetailPiece {
  enum class Kind { kText, kCount, kGpus };
  Kind kind = Kind::kText;
  std::string text;       // kText: words, a host's own text included
  long long count = 0;    // kCount
  std::vector<int> gpus;  // kGpus: a problem's GPUs, said "GPU 3" or "GPUs 3,5"
};

class OutcomeDetail {
 public:
  OutcomeDetail() = default;
  /// A detail of words only ("interrupted", a host's message).
  static OutcomeDetail Words(const std::string& text);

  OutcomeDetail& Text(const std::string& text);
  OutcomeDetail& Count(long long count);
  OutcomeDetail& Gpus(const std::vector<int>& gpus);
  /// "other"'s pieces after these.
  OutcomeDetail& Append(const OutcomeDetail& other);

  bool empty() const { return pieces_.empty(); }
  const std::vector<DetailPiece>& pieces() const { return pieces_; }

  /// The words a reader sees: "8 killed (TERM 6, KILL 2)", "GPUs 2,6 ghost
  /// memory (2048 MiB)".
  std::string Render() const;
  /// What hosts fold on: each count "#", each GPU list "GPU @", the words as
  /// they are but for a backslash before each "\\", "#" and "@" of theirs
  /// ("# killed (TERM #, KILL #)", "GPU @ ghost memory (# MiB)").
  std::string Shape() const;

 private:
  std::vector<DetailPiece> pieces_;
};

/// The non-empty "parts" joined by "separator" (as words), in order.
OutcomeDetail JoinDetails(const std::vector<OutcomeDetail>& parts, const std::string& separator);

}  // namespace fleetreap
