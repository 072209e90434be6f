// HostRecords: the one encoding rule for everything a host prints back to
// fleetreap. A remote step's stdout is a sequence of records, each ended by
// a NUL byte. A record is a tag that the script wrote itself (ASCII letters,
// digits, space and ". / _ -": numbers, PIDs, fixed words) optionally
// followed by ':' and a payload of host-controlled bytes. The payload is the
// only place where a host's words (process names, argv, exe paths, file
// names, unit names, nvidia-smi text) appear, and it can never hold a NUL:
// the kernel's strings and file names cannot, grep -z splits file contents
// at NULs (each piece gets the script's tag again) and the shell drops NULs
// from command output. So no byte a host controls can end a record, start
// one, or change the tag (and so the PID) a record names.
//
// RecordReader walks one step's records in order; the step parsers in
// the steps' headers accept exactly their grammar through it and
// nothing else. Pure functions and a value type; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

struct HostRecord {
  std::string tag;  // the script's own words: "fd 812 4 195 0"
  bool has_payload = false;
  std::string payload;  // host-controlled bytes after the first ':'

  /// The tag's space-separated words.
  std::vector<std::string> Words() const;
};

/// Splits "out" into records. kParse, naming "step", when the output does
/// not end with a NUL (cut short), or a tag is empty or holds a byte outside
/// the tag alphabet (quoted in the message).
[[nodiscard]] Status SplitHostRecords(const std::string& out, const std::string& step,
                                      std::vector<HostRecord>* records);

/// Reads records in order for one step's parser. Every error is kParse and
/// names the step and the record's position: "scan record 7: expected
/// \"gpu RC:OUTPUT\", got \"fd 1 2 195 0\"".
class RecordReader {
 public:
  RecordReader(std::string step, const std::vector<HostRecord>& records)
      : step_(std::move(step)), records_(records) {}

  bool AtEnd() const { return next_ >= records_.size(); }
  /// The next record's first word ("" at the end).
  std::string PeekWord() const;
  /// Takes the next record, which must start with word "word" and have
  /// "words" words in all (any count when -1) and a payload exactly when
  /// "payload"; "shape" describes it for the error.
  [[nodiscard]] Status Take(const std::string& word, int words, bool payload, const char* shape,
                            const HostRecord** record);
  /// Takes "WORD 1", the header a step starts with (1: the record format's
  /// version); another version is kParse.
  [[nodiscard]] Status TakeHeader(const std::string& word);
  /// Takes the "end" record a step ends with.
  [[nodiscard]] Status TakeEnd();
  /// kParse unless every record was read.
  [[nodiscard]] Status ExpectEnd() const;
  /// kParse naming the last record taken.
  [[nodiscard]] Status Error(const std::string& what) const;

 private:
  std::string step_;
  const std::vector<HostRecord>& records_;
  size_t next_ = 0;
};

/// Splits "out" into records, runs "body" over them with a RecordReader for
/// "step", and requires every record to be read: the frame of every step's
/// parser.
[[nodiscard]] Status ParseHostRecords(const std::string& out, const std::string& step,
                                      const std::function<Status(RecordReader&)>& body);

/// Strict decimal parsers for tag words: digits only, no sign, no overflow.
bool ParseTagInt(const std::string& word, int* value);
bool ParseTagU64(const std::string& word, uint64_t* value);
/// An exit status word: a decimal number, or "-" (not run) as -1.
bool ParseTagExit(const std::string& word, int* value);

}  // namespace fleetreap
