#include "fleetreap/report/outcome_detail.h"

#include "fleetreap/base/text.h"

namespace fleetreap {

OutcomeDetail OutcomeDetail::Words(const std::string& text) {
  OutcomeDetail detail;
  detail.Text(text);
  return detail;
}

OutcomeDetail& OutcomeDetail::Text(const std::string& text) {
  if (text.empty()) return *this;
  if (!pieces_.empty() && pieces_.back().kind == DetailPiece::Kind::kText) {
    pieces_.back().text += text;
  } else {
    DetailPiece piece;
    piece.text = text;
    pieces_.push_back(std::move(piece));
  }
  return *this;
}

OutcomeDetail& OutcomeDetail::Count(long long count) {
  DetailPiece piece;
  piece.kind = DetailPiece::Kind::kCount;
  piece.count = count;
  pieces_.push_back(std::move(piece));
  return *this;
}

OutcomeDetail& OutcomeDetail::Gpus(const std::vector<int>& gpus) {
  DetailPiece piece;
  piece.kind = DetailPiece::Kind::kGpus;
  piece.gpus = gpus;
  pieces_.push_back(std::move(piece));
  return *this;
}

OutcomeDetail& OutcomeDetail::Append(const OutcomeDetail& other) {
  for (const DetailPiece& piece : other.pieces_) {
    if (piece.kind == DetailPiece::Kind::kText) {
      Text(piece.text);
    } else {
      pieces_.push_back(piece);
    }
  }
  return *this;
}

std::string OutcomeDetail::Render() const {
  std::string out;
  for (const DetailPiece& piece : pieces_) {
    switch (piece.kind) {
      case DetailPiece::Kind::kText: out += piece.text; break;
      case DetailPiece::Kind::kCount: out += std::to_string(piece.count); break;
      case DetailPiece::Kind::kGpus: {
        std::vector<std::string> names;
        for (int gpu : piece.gpus) names.push_back(std::to_string(gpu));
        out += (piece.gpus.size() == 1 ? "GPU " : "GPUs ") + Join(names, ",");
        break;
      }
    }
  }
  return out;
}

std::string OutcomeDetail::Shape() const {
  std::string shape;
  for (const DetailPiece& piece : pieces_) {
    switch (piece.kind) {
      case DetailPiece::Kind::kText:
        // A host's "#" or "@" is a word, never a value's mark.
        for (char c : piece.text) {
          if (c == '\\' || c == '#' || c == '@') shape += '\\';
          shape += c;
        }
        break;
      case DetailPiece::Kind::kCount: shape += "#"; break;
      case DetailPiece::Kind::kGpus: shape += "GPU @"; break;
    }
  }
  return shape;
}

OutcomeDetail JoinDetails(const std::vector<OutcomeDetail>& parts, const std::string& separator) {
  OutcomeDetail joined;
  for (const OutcomeDetail& part : parts) {
    if (part.empty()) continue;
    if (!joined.empty()) joined.Text(separator);
    joined.Append(part);
  }
  return joined;
}

}  // namespace fleetreap
