// JsonFieldReader: typed, checked reads of fields out of a JSON document
// (nlohmann::json), each error naming the source and the field's path
// ("a.json: hosts[0].port: expected an integer, got string"). Internal to
// src/ (report_reader.cc); never throws; thread-compatible.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

// Reads fields out of one document, keeping the first error. Every getter
// leaves its output alone when the field is absent or null, and does
// nothing once an error was recorded, so a reader can read a whole object
// and check ok() once.
class FieldReader {
 public:
  using Json = nlohmann::json;

  explicit FieldReader(std::string source) : source_(std::move(source)) {}

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  void Fail(const std::string& where, const std::string& problem) {
    if (!ok()) return;
    status_ = Status::Error(ErrorKind::kInvalidInput,
                            source_ + ": " + (where.empty() ? "" : where + ": ") + problem);
  }

  // The field, or nullptr when it is absent or null (an error if required).
  const Json* Find(const Json& object, const std::string& where, const char* key, bool required) {
    if (!ok()) return nullptr;
    auto it = object.find(key);
    if (it == object.end() || (required && it->is_null())) {
      if (required) Fail(where, std::string("missing \"") + key + "\"");
      return nullptr;
    }
    return it->is_null() ? nullptr : &*it;
  }

  // The field if it has the type "check" accepts; nullptr otherwise.
  template <typename Check>
  const Json* Typed(const Json& object, const std::string& where, const char* key, bool required,
                    Check check, const char* expected) {
    const Json* value = Find(object, where, key, required);
    if (value == nullptr || check(*value)) return value;
    Fail(Join(where, key), std::string("expected ") + expected + ", got " + value->type_name());
    return nullptr;
  }

  static std::string Join(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }

  static bool IsInteger(const Json& v) { return v.is_number_integer(); }
  static bool IsUnsigned(const Json& v) { return v.is_number_unsigned(); }
  static bool IsText(const Json& v) { return v.is_string(); }
  static bool IsBool(const Json& v) { return v.is_boolean(); }
  static bool IsArray(const Json& v) { return v.is_array(); }
  static bool IsObject(const Json& v) { return v.is_object(); }

  void Text(const Json& o, const std::string& where, const char* key, std::string* out,
            bool required = false) {
    if (const Json* v = Typed(o, where, key, required, IsText, "a string")) {
      *out = v->get<std::string>();
    }
  }
  template <typename Int>
  void Integer(const Json& o, const std::string& where, const char* key, Int* out,
               bool required = false) {
    if (const Json* v = Typed(o, where, key, required, IsInteger, "an integer")) {
      *out = v->get<Int>();
    }
  }
  void Unsigned(const Json& o, const std::string& where, const char* key, uint64_t* out) {
    if (const Json* v = Typed(o, where, key, false, IsUnsigned, "a non-negative integer")) {
      *out = v->get<uint64_t>();
    }
  }
  void Mib(const Json& o, const std::string& where, const char* key, std::optional<int64_t>* out) {
    if (const Json* v = Typed(o, where, key, false, IsInteger, "an integer")) {
      *out = v->get<int64_t>();
    }
  }
  void Millis(const Json& o, const std::string& where, const char* key,
              std::chrono::milliseconds* out) {
    int64_t count = out->count();
    Integer(o, where, key, &count);
    *out = std::chrono::milliseconds(count);
  }
  void Bool(const Json& o, const std::string& where, const char* key, bool* out,
            bool required = false) {
    if (const Json* v = Typed(o, where, key, required, IsBool, "true or false")) {
      *out = v->get<bool>();
    }
  }
  // An array whose every item passes "check"; nullptr when absent.
  template <typename Check>
  const Json* ArrayOf(const Json& o, const std::string& where, const char* key, bool required,
                      Check check, const char* expected) {
    const Json* array = Typed(o, where, key, required, IsArray, "an array");
    if (array == nullptr) return nullptr;
    for (size_t i = 0; i < array->size(); ++i) {
      const Json& item = (*array)[i];
      if (!check(item)) {
        Fail(Join(where, key) + "[" + std::to_string(i) + "]",
             std::string("expected ") + expected + ", got " + item.type_name());
        return nullptr;
      }
    }
    return array;
  }
  void IntList(const Json& o, const std::string& where, const char* key, std::vector<int>* out) {
    if (const Json* v = ArrayOf(o, where, key, false, IsInteger, "an integer")) {
      *out = v->get<std::vector<int>>();
    }
  }
  void TextList(const Json& o, const std::string& where, const char* key,
                std::vector<std::string>* out) {
    if (const Json* v = ArrayOf(o, where, key, false, IsText, "a string")) {
      *out = v->get<std::vector<std::string>>();
    }
  }

  // An enum field, matched against the names "name_of" gives values
  // first..last. Absent or null leaves "out" alone.
  template <typename Enum, typename NameOf>
  void Named(const Json& o, const std::string& where, const char* key, Enum first, Enum last,
             NameOf name_of, Enum* out, bool required = false) {
    std::string text;
    const Json* v = Typed(o, where, key, required, IsText, "a string");
    if (v == nullptr) return;
    text = v->get<std::string>();
    for (int i = static_cast<int>(first); i <= static_cast<int>(last); ++i) {
      if (text == name_of(static_cast<Enum>(i))) {
        *out = static_cast<Enum>(i);
        return;
      }
    }
    Fail(Join(where, key), "unknown value \"" + text + "\"");
  }

 private:
  std::string source_;
  Status status_;
};

}  // namespace fleetreap
