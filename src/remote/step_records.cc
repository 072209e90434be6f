#include "step_records.h"

#include "fleetreap/base/text.h"

namespace fleetreap {

// "reset N RC:TEXT" and "pgpu N RC:TEXT".
Status TakeIndexed(RecordReader& reader, const std::string& word, const char* shape, int* index,
                   int* exit_code, std::string* text) {
  const HostRecord* r = nullptr;
  Status status = reader.Take(word, 3, true, shape, &r);
  if (!status.ok()) return status;
  std::vector<std::string> words = r->Words();
  if (!ParseTagInt(words[1], index) || !ParseTagExit(words[2], exit_code) || *exit_code < 0) {
    return reader.Error("bad " + QuoteForMessage(r->tag, 40));
  }
  *text = r->payload;
  return Status::Ok();
}

}  // namespace fleetreap
