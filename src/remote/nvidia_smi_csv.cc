// The CSV reader shared by the nvidia-smi parsers (see nvidia_smi_csv.h).
#include "nvidia_smi_csv.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "fleetreap/remote/gpu_health_query.h"

namespace fleetreap {
namespace nvsmi {
namespace {

constexpr size_t kMaxQuoted = 60;

std::string Quote(const std::string& value) { return QuoteForMessage(value, kMaxQuoted); }

constexpr size_t kAbsent = static_cast<size_t>(-1);

// nvidia-smi --help-query-gpu / --help-query-compute-apps: the names a query
// accepts and the one its header prints for them.
const std::map<std::string, std::string>& Aliases(Query query) {
  static const std::map<std::string, std::string> kGpu = {
      {"gpu_name", "name"},
      {"gpu_bus_id", "pci.bus_id"},
      {"gpu_serial", "serial"},
      {"gpu_uuid", "uuid"},
      {"clocks.gr", "clocks.current.graphics"},
      {"clocks.sm", "clocks.current.sm"},
      {"clocks.mem", "clocks.current.memory"},
      {"clocks.video", "clocks.current.video"},
      {"clocks.max.gr", "clocks.max.graphics"},
      {"clocks.max.mem", "clocks.max.memory"},
  };
  static const std::map<std::string, std::string> kComputeApps = {
      {"name", "process_name"},
      {"used_memory", "used_gpu_memory"},
  };
  return query == Query::kGpu ? kGpu : kComputeApps;
}

// The column that may hold the separator itself: a name.
int FreeTextField(Query query, const std::vector<std::string>& fields) {
  for (const char* name : {"process_name", "name", "gpu_name"}) {
    int at = FieldIndex(query, fields, CanonicalField(query, name));
    if (at >= 0) return at;
  }
  return -1;
}

std::vector<std::string> SplitRaw(const std::string& line) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    parts.push_back(line.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

// Maps each requested field to its header column; an optional field the
// header lacks maps to kAbsent.
Status MapHeader(Query query, const std::vector<std::string>& fields, const Line& line,
                 const std::vector<std::string>& parts, std::vector<size_t>* column_of,
                 size_t* columns) {
  auto count_error = [&] {
    return LineError(line.number, "header has " + std::to_string(parts.size()) +
                                      " columns, expected " + std::to_string(fields.size()));
  };
  std::vector<std::string> header;
  for (const std::string& part : parts) header.push_back(CanonicalField(query, part));
  size_t found = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string want = CanonicalField(query, fields[i]);
    auto at = std::find(header.begin(), header.end(), want);
    if (at == header.end() && IsOptionalField(query, want)) {
      (*column_of)[i] = kAbsent;
      continue;
    }
    if (at == header.end()) {
      if (parts.size() != fields.size()) return count_error();
      return LineError(line.number, "header has no column " + Quote(want));
    }
    (*column_of)[i] = static_cast<size_t>(at - header.begin());
    ++found;
  }
  if (parts.size() != found) return count_error();
  *columns = found;
  return Status::Ok();
}

}  // namespace

std::vector<Line> NumberedLines(const std::string& text) {
  std::vector<Line> lines;
  int number = 0;
  for (const std::string& raw : SplitLines(text)) {
    ++number;
    std::string line = Trim(raw);
    if (!line.empty()) lines.push_back({number, line});
  }
  return lines;
}

std::string CanonicalField(Query query, const std::string& field) {
  std::string name = Trim(field);
  size_t unit = name.find(" [");
  if (unit != std::string::npos && name.back() == ']') name = Trim(name.substr(0, unit));
  const auto& aliases = Aliases(query);
  auto alias = aliases.find(name);
  return alias == aliases.end() ? name : alias->second;
}

int FieldIndex(Query query, const std::vector<std::string>& fields, const std::string& canonical) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (CanonicalField(query, fields[i]) == canonical) return static_cast<int>(i);
  }
  return -1;
}

Status ReadTable(const std::string& out, Query query, const std::vector<std::string>& fields,
                 Table* table) {
  *table = Table();
  if (fields.empty()) {
    return Status::Error(ErrorKind::kInternal, "nvidia-smi query: no fields requested");
  }
  std::vector<size_t> column_of(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) column_of[i] = i;
  size_t columns = fields.size();
  const int free_text = FreeTextField(query, fields);
  bool first = true;
  for (const Line& line : NumberedLines(out)) {
    if (ParseLostGpuLine(line.text, nullptr)) continue;
    if (query == Query::kComputeApps && line.text == "No running processes found") continue;
    std::vector<std::string> parts = SplitRaw(line.text);
    if (first) {
      first = false;
      std::string head = CanonicalField(query, parts[0]);
      if (FieldIndex(query, fields, head) >= 0 && !IsDigits(head, 20)) {
        Status mapped = MapHeader(query, fields, line, parts, &column_of, &columns);
        if (!mapped.ok()) return mapped;
        table->has_header = true;
        continue;
      }
    }
    if (parts.size() > columns && free_text >= 0 &&
        column_of[static_cast<size_t>(free_text)] != kAbsent) {
      size_t at = column_of[static_cast<size_t>(free_text)];
      size_t extra = parts.size() - columns;
      for (size_t k = 1; k <= extra; ++k) parts[at] += "," + parts[at + k];
      parts.erase(parts.begin() + static_cast<long>(at) + 1,
                  parts.begin() + static_cast<long>(at + extra) + 1);
    }
    if (parts.size() != columns) {
      return LineError(line.number, "expected " + std::to_string(columns) + " fields, got " +
                                        std::to_string(parts.size()));
    }
    Row row;
    row.line = line.number;
    for (size_t i = 0; i < fields.size(); ++i) {
      row.values.push_back(column_of[i] == kAbsent ? "" : Trim(parts[column_of[i]]));
    }
    table->rows.push_back(std::move(row));
  }
  return Status::Ok();
}

bool IsOptionalField(Query query, const std::string& canonical) {
  if (query != Query::kGpu || canonical == "index" || canonical == "pci.bus_id") return false;
  if (canonical == "gpu_recovery_action") return true;
  const std::vector<std::string>& health = GpuHealthFields();
  return std::find(health.begin(), health.end(), canonical) != health.end();
}

bool IsUnknownValue(const std::string& value) {
  if (value.empty() || value == "N/A") return true;
  return value.size() >= 2 && value.front() == '[' && value.back() == ']';
}

Status ParseMib(const Row& row, const std::string& field, const std::string& value,
                std::optional<int64_t>* mib) {
  mib->reset();
  if (IsUnknownValue(value)) return Status::Ok();
  std::string number = value;
  if (number.size() > 3 && number.compare(number.size() - 3, 3, "MiB") == 0) {
    number = Trim(number.substr(0, number.size() - 3));
  }
  int64_t parsed = 0;
  if (!ParseDigits(number, 15, &parsed)) {
    return LineError(row.line, field + ": expected a number of MiB, got " + Quote(value));
  }
  *mib = parsed;
  return Status::Ok();
}

Status ParseCount(const Row& row, const std::string& field, const std::string& value,
                  std::optional<int>* count) {
  count->reset();
  if (IsUnknownValue(value)) return Status::Ok();
  int parsed = 0;
  if (!ParseDigits(value, 9, &parsed)) {
    return LineError(row.line, field + ": expected an integer, got " + Quote(value));
  }
  *count = parsed;
  return Status::Ok();
}

Status LineError(int line, const std::string& what) {
  return Status::Error(ErrorKind::kParse,
                       "nvidia-smi output line " + std::to_string(line) + ": " + what);
}

Status CheckRun(const std::string& out, const std::string& err, int exit_code,
                NvidiaSmiFailure* failure, std::string* message, std::vector<LostGpu>* lost) {
  *failure = ClassifyNvidiaSmiFailure(out, err, exit_code, message);
  lost->clear();
  std::set<std::string> seen;
  for (const std::string* stream : {&err, &out}) {
    for (const Line& line : NumberedLines(*stream)) {
      LostGpu gpu;
      if (ParseLostGpuLine(line.text, &gpu) && seen.insert(NormalizeBusId(gpu.bus_id)).second) {
        lost->push_back(gpu);
      }
    }
  }
  if (exit_code == 0 && *failure == NvidiaSmiFailure::kNone) return Status::Ok();
  // Lost-GPU lines explain the failure: the other rows may still be read.
  if (*failure == NvidiaSmiFailure::kGpuLost && !lost->empty()) return Status::Ok();
  return FailedRun(*failure, *message);
}

Status FailedRun(NvidiaSmiFailure failure, const std::string& message) {
  return Status::Error(
      ErrorKind::kCommandFailed,
      std::string("nvidia-smi failed (") + NvidiaSmiFailureName(failure) + "): " + message);
}

}  // namespace nvsmi
}  // namespace fleetreap
