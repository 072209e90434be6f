// The record encoding of host_records.h.
#include "fleetreap/remote/host_records.h"

#include <limits>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

bool IsTagByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ' ||
         c == '.' || c == '/' || c == '_' || c == '-';
}

Status ParseError(const std::string& step, const std::string& what) {
  return Status::Error(ErrorKind::kParse, step + " output: " + what);
}

}  // namespace

std::vector<std::string> HostRecord::Words() const {
  std::vector<std::string> words;
  size_t at = 0;
  while (at <= tag.size()) {
    size_t space = tag.find(' ', at);
    if (space == std::string::npos) space = tag.size();
    words.push_back(tag.substr(at, space - at));
    at = space + 1;
  }
  return words;
}

Status SplitHostRecords(const std::string& out, const std::string& step,
                        std::vector<HostRecord>* records) {
  records->clear();
  if (out.empty()) return ParseError(step, "nothing printed");
  if (out.back() != '\0') {
    return ParseError(step, "cut short (the last record has no end)");
  }
  size_t at = 0;
  while (at < out.size()) {
    size_t end = out.find('\0', at);
    HostRecord record;
    size_t colon = out.find(':', at);
    size_t tag_end = colon < end ? colon : end;
    record.tag = out.substr(at, tag_end - at);
    if (colon < end) {
      record.has_payload = true;
      record.payload = out.substr(colon + 1, end - colon - 1);
    }
    std::string where = "record " + std::to_string(records->size() + 1);
    if (record.tag.empty()) return ParseError(step, where + " has no tag");
    for (char c : record.tag) {
      if (!IsTagByte(c)) {
        return ParseError(step, where + " has a bad tag " + QuoteForMessage(record.tag, 60));
      }
    }
    if (record.tag.front() == ' ' || record.tag.back() == ' ' ||
        record.tag.find("  ") != std::string::npos) {
      return ParseError(step, where + " has a bad tag " + QuoteForMessage(record.tag, 60));
    }
    records->push_back(std::move(record));
    at = end + 1;
  }
  return Status::Ok();
}

std::string RecordReader::PeekWord() const {
  if (AtEnd()) return "";
  const std::string& tag = records_[next_].tag;
  return tag.substr(0, tag.find(' '));
}

Status RecordReader::Take(const std::string& word, int words, bool payload, const char* shape,
                          const HostRecord** record) {
  std::string where = step_ + " output record " + std::to_string(next_ + 1);
  if (AtEnd()) {
    return Status::Error(ErrorKind::kParse,
                         step_ + " output: expected \"" + shape + "\", got the end");
  }
  const HostRecord& r = records_[next_];
  std::vector<std::string> got = r.Words();
  if (got[0] != word || (words >= 0 && static_cast<int>(got.size()) != words) ||
      r.has_payload != payload) {
    return Status::Error(ErrorKind::kParse,
                         where + ": expected \"" + shape + "\", got " + QuoteForMessage(r.tag, 60));
  }
  ++next_;
  *record = &r;
  return Status::Ok();
}

Status RecordReader::TakeHeader(const std::string& word) {
  const HostRecord* r = nullptr;
  std::string shape = word + " 1";
  Status status = Take(word, 2, false, shape.c_str(), &r);
  if (!status.ok()) return status;
  if (r->Words()[1] != "1") return Error("unknown " + word + " version " + r->Words()[1]);
  return Status::Ok();
}

Status RecordReader::TakeEnd() {
  const HostRecord* r = nullptr;
  return Take("end", 1, false, "end", &r);
}

Status ParseHostRecords(const std::string& out, const std::string& step,
                        const std::function<Status(RecordReader&)>& body) {
  std::vector<HostRecord> records;
  Status status = SplitHostRecords(out, step, &records);
  if (!status.ok()) return status;
  RecordReader reader(step, records);
  status = body(reader);
  return status.ok() ? reader.ExpectEnd() : status;
}

Status RecordReader::ExpectEnd() const {
  if (AtEnd()) return Status::Ok();
  return Status::Error(ErrorKind::kParse, step_ + " output record " + std::to_string(next_ + 1) +
                                              ": unexpected " +
                                              QuoteForMessage(records_[next_].tag, 60));
}

Status RecordReader::Error(const std::string& what) const {
  return Status::Error(ErrorKind::kParse,
                       step_ + " output record " + std::to_string(next_) + ": " + what);
}

bool ParseTagU64(const std::string& word, uint64_t* value) {
  return ParseUnsigned(word, std::numeric_limits<uint64_t>::max(), value);
}

bool ParseTagInt(const std::string& word, int* value) {
  uint64_t number = 0;
  if (!ParseUnsigned(word, std::numeric_limits<int>::max(), &number)) return false;
  *value = static_cast<int>(number);
  return true;
}

bool ParseTagExit(const std::string& word, int* value) {
  if (word == "-") {
    *value = -1;
    return true;
  }
  return ParseTagInt(word, value) && *value <= 255;
}

}  // namespace fleetreap
