// Python's repr() of the values ParsePythonLiteral reads: floats in their
// shortest round-trip form, strings quoted as Python picks, containers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fleetreap/inventory/python_literal.h"

namespace fleetreap {
namespace {

std::string QuoteRepr(const std::string& s, bool bytes) {
  char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out = bytes ? "b" : "";
  out += q;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == q || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F || (bytes && u >= 0x80)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + q;
}

}  // namespace

std::string PythonFloatRepr(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;  // d.ddde[+-]XX
  bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  size_t e = s.find('e');
  int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits = s.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exponent < -4 || exponent >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp;
  } else if (exponent < 0) {
    out = "0." + std::string(-exponent - 1, '0') + digits;
  } else if (static_cast<int>(digits.size()) <= exponent + 1) {
    out = digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
  }
  return (negative ? "-" : "") + out;
}

std::string PythonRepr(const PythonLiteral& value) {
  using Kind = PythonLiteral::Kind;
  switch (value.kind) {
    case Kind::kString: return QuoteRepr(value.text, false);
    case Kind::kBytes: return QuoteRepr(value.text, true);
    case Kind::kComplex:
      return value.text.find_first_of("+-", 1) == std::string::npos ? value.text
                                                                    : "(" + value.text + ")";
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kSet: {
      if (value.kind == Kind::kSet && value.items.empty()) return "set()";
      std::string out = value.kind == Kind::kList ? "[" : value.kind == Kind::kSet ? "{" : "(";
      for (size_t i = 0; i < value.items.size(); ++i) {
        out += (i ? ", " : "") + PythonRepr(value.items[i]);
      }
      if (value.kind == Kind::kTuple && value.items.size() == 1) out += ",";
      return out + (value.kind == Kind::kList ? "]" : value.kind == Kind::kSet ? "}" : ")");
    }
    case Kind::kDict: {
      std::string out = "{";
      for (size_t i = 0; i + 1 < value.items.size(); i += 2) {
        out += (i ? ", " : "") + PythonRepr(value.items[i]) + ": " + PythonRepr(value.items[i + 1]);
      }
      return out + "}";
    }
    default: return value.text;
  }
}

}  // namespace fleetreap
