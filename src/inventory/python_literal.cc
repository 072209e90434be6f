// ParsePythonLiteral: a recursive-descent reader of the subset of Python that
// ast.literal_eval accepts, written against CPython 3.11's grammar (the
// Python of Debian 12, which runs ansible-core 2.14).
#include "fleetreap/inventory/python_literal.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace fleetreap {
namespace {

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         (static_cast<unsigned char>(c) & 0x80);
}

void AppendUtf8(unsigned long cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}

  bool ReadAll(PythonLiteral* out) {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    if (!Value(out)) return false;
    Skip();
    return i_ == s_.size();
  }

 private:
  void Skip() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r') {
        ++i_;
      } else if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
        i_ += 2;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        return;
      }
    }
  }
  bool Eat(char c) {
    Skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  bool Value(PythonLiteral* out) {
    Skip();
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '+' || c == '-') {
      ++i_;
      Skip();
      if (i_ >= s_.size() || !(std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) {
        return false;
      }
      if (!Number(out)) return false;
      if (c == '-') {
        if (out->text[0] == '-') {
          out->text.erase(0, 1);
        } else if (out->text != "0" || out->kind != PythonLiteral::Kind::kInt) {
          out->text.insert(0, "-");
        }
      }
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
      return Number(out);
    }
    if (c == '[') return Sequence(']', PythonLiteral::Kind::kList, out);
    if (c == '(') return Sequence(')', PythonLiteral::Kind::kTuple, out);
    if (c == '{') return Braces(out);
    if (c == '"' || c == '\'' || std::isalpha(static_cast<unsigned char>(c))) {
      size_t start = i_;
      while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
      std::string word = s_.substr(start, i_ - start);
      if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') && word.size() <= 2) {
        i_ = start;
        return Strings(out);
      }
      if (word.empty()) return Strings(out);
      if (word == "True" || word == "False") {
        *out = {PythonLiteral::Kind::kBool, word, {}};
        return true;
      }
      if (word == "None") {
        *out = {PythonLiteral::Kind::kNone, "None", {}};
        return true;
      }
      return false;
    }
    return false;
  }

  // Digits with single underscores between them, in "base".
  bool Digits(int base, std::string* out) {
    auto ok = [base](char c) {
      if (base == 16) return std::isxdigit(static_cast<unsigned char>(c)) != 0;
      return c >= '0' && c < static_cast<char>('0' + base);
    };
    if (i_ >= s_.size() || !ok(s_[i_])) return false;
    while (i_ < s_.size()) {
      if (ok(s_[i_])) {
        *out += s_[i_++];
      } else if (s_[i_] == '_' && i_ + 1 < s_.size() && ok(s_[i_ + 1])) {
        ++i_;
      } else {
        break;
      }
    }
    return true;
  }

  bool Number(PythonLiteral* out) {
    size_t start = i_;
    if (s_[i_] == '0' && i_ + 1 < s_.size() && std::strchr("xXoObB", s_[i_ + 1])) {
      char b = static_cast<char>(std::tolower(s_[i_ + 1]));
      i_ += 2;
      if (i_ < s_.size() && s_[i_] == '_') ++i_;
      std::string digits;
      if (!Digits(b == 'x' ? 16 : b == 'o' ? 8 : 2, &digits)) return false;
      if (i_ < s_.size() && IsIdentChar(s_[i_])) return false;
      unsigned __int128 v = 0;
      for (char d : digits) {
        v = v * (b == 'x'   ? 16
                 : b == 'o' ? 8
                            : 2) +
            (std::isdigit(static_cast<unsigned char>(d)) ? d - '0' : std::tolower(d) - 'a' + 10);
      }
      std::string text;
      do {
        text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
        v /= 10;
      } while (v != 0);
      *out = {PythonLiteral::Kind::kInt, text, {}};
      return true;
    }
    std::string whole, fraction, exponent;
    bool point = false, has_exp = false;
    if (s_[i_] != '.') Digits(10, &whole);
    if (i_ < s_.size() && s_[i_] == '.') {
      point = true;
      ++i_;
      Digits(10, &fraction);
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      size_t save = i_++;
      std::string sign;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) sign = s_[i_++];
      if (!Digits(10, &exponent)) {
        i_ = save;
        return false;
      }
      exponent = sign + exponent;
      has_exp = true;
    }
    bool imaginary = i_ < s_.size() && (s_[i_] == 'j' || s_[i_] == 'J');
    if (imaginary) ++i_;
    if (i_ < s_.size() && IsIdentChar(s_[i_])) return false;
    if (i_ == start) return false;
    if (!point && !has_exp && !imaginary) {
      if (whole.size() > 1 && whole[0] == '0') {
        if (whole.find_first_not_of('0') != std::string::npos) return false;
        whole = "0";
      }
      size_t nz = whole.find_first_not_of('0');
      *out = {PythonLiteral::Kind::kInt, nz == std::string::npos ? "0" : whole.substr(nz), {}};
      return true;
    }
    std::string text = (whole.empty() ? "0" : whole) + "." + (fraction.empty() ? "0" : fraction);
    if (has_exp) text += "e" + exponent;
    double v = std::strtod(text.c_str(), nullptr);
    if (imaginary) {
      std::string r = PythonFloatRepr(v);
      if (r.size() > 2 && r.compare(r.size() - 2, 2, ".0") == 0) r.resize(r.size() - 2);
      *out = {PythonLiteral::Kind::kComplex, r + "j", {}};
    } else {
      *out = {PythonLiteral::Kind::kFloat, PythonFloatRepr(v), {}};
    }
    return true;
  }

  // One or more adjacent string literals, all str or all bytes.
  bool Strings(PythonLiteral* out) {
    int bytes = -1;
    std::string value;
    while (true) {
      Skip();
      size_t start = i_;
      while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) {
        i_ = start;
        break;
      }
      std::string prefix = s_.substr(start, i_ - start);
      for (char& c : prefix) c = static_cast<char>(std::tolower(c));
      bool raw = prefix.find('r') != std::string::npos;
      bool is_bytes = prefix.find('b') != std::string::npos;
      if (prefix.find('f') != std::string::npos) return false;
      std::string stripped = prefix;
      stripped.erase(std::remove(stripped.begin(), stripped.end(), 'r'), stripped.end());
      if (!(stripped.empty() || stripped == "b" || (stripped == "u" && !raw)) ||
          prefix.size() > 2) {
        return false;
      }
      if (bytes >= 0 && bytes != static_cast<int>(is_bytes)) return false;
      bytes = is_bytes;
      if (!StringBody(raw, is_bytes, &value)) return false;
    }
    if (bytes < 0) return false;
    *out = {bytes ? PythonLiteral::Kind::kBytes : PythonLiteral::Kind::kString, value, {}};
    return true;
  }

  bool StringBody(bool raw, bool bytes, std::string* value) {
    char q = s_[i_];
    bool triple = s_.compare(i_, 3, std::string(3, q)) == 0;
    i_ += triple ? 3 : 1;
    while (true) {
      if (i_ >= s_.size()) return false;
      char c = s_[i_];
      if (triple ? s_.compare(i_, 3, std::string(3, q)) == 0 : c == q) {
        i_ += triple ? 3 : 1;
        return true;
      }
      if (c == '\n' && !triple) return false;
      if (bytes && (static_cast<unsigned char>(c) & 0x80)) return false;
      if (c != '\\') {
        *value += c;
        ++i_;
        continue;
      }
      if (i_ + 1 >= s_.size()) return false;
      char e = s_[i_ + 1];
      if (raw) {
        *value += c;
        *value += e;
        i_ += 2;
        continue;
      }
      i_ += 2;
      switch (e) {
        case '\n': break;
        case '\\': *value += '\\'; break;
        case '\'': *value += '\''; break;
        case '"': *value += '"'; break;
        case 'a': *value += '\a'; break;
        case 'b': *value += '\b'; break;
        case 'f': *value += '\f'; break;
        case 'n': *value += '\n'; break;
        case 'r': *value += '\r'; break;
        case 't': *value += '\t'; break;
        case 'v': *value += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
          size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if ((e != 'x' && bytes)) {
            *value += '\\';
            *value += e;
            break;
          }
          if (i_ + n > s_.size()) return false;
          std::string hex = s_.substr(i_, n);
          for (char h : hex) {
            if (!std::isxdigit(static_cast<unsigned char>(h))) return false;
          }
          unsigned long cp = std::strtoul(hex.c_str(), nullptr, 16);
          if (cp > 0x10FFFF) return false;
          if (bytes) {
            *value += static_cast<char>(cp);
          } else {
            AppendUtf8(cp, value);
          }
          i_ += n;
          break;
        }
        case 'N':
          if (!bytes) return false;  // \N{NAME} needs Unicode's names
          *value += "\\N";
          break;
        default:
          if (e >= '0' && e <= '7') {
            unsigned long cp = static_cast<unsigned long>(e - '0');
            for (int k = 0; k < 2 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++k) {
              cp = cp * 8 + static_cast<unsigned long>(s_[i_++] - '0');
            }
            if (bytes) {
              *value += static_cast<char>(cp & 0xFF);
            } else {
              AppendUtf8(cp, value);
            }
          } else {
            *value += '\\';
            *value += e;
          }
      }
    }
  }

  bool Sequence(char close, PythonLiteral::Kind kind, PythonLiteral* out) {
    ++i_;
    *out = {kind, "", {}};
    bool comma = false;
    while (!Eat(close)) {
      if (!out->items.empty() && !comma) return false;
      PythonLiteral item;
      if (!Value(&item)) return false;
      out->items.push_back(std::move(item));
      comma = Eat(',');
    }
    if (kind == PythonLiteral::Kind::kTuple && out->items.size() == 1 && !comma) {
      PythonLiteral inner = std::move(out->items[0]);
      *out = std::move(inner);
      return true;
    }
    out->text = PythonRepr(*out);
    return true;
  }

  bool Braces(PythonLiteral* out) {
    ++i_;
    *out = {PythonLiteral::Kind::kDict, "", {}};
    bool comma = false, first = true;
    while (!Eat('}')) {
      if (!first && !comma) return false;
      PythonLiteral key;
      if (!Value(&key)) return false;
      bool pair = Eat(':');
      if (first) out->kind = pair ? PythonLiteral::Kind::kDict : PythonLiteral::Kind::kSet;
      if (pair != (out->kind == PythonLiteral::Kind::kDict)) return false;
      if (key.kind == PythonLiteral::Kind::kList || key.kind == PythonLiteral::Kind::kDict ||
          key.kind == PythonLiteral::Kind::kSet) {
        return false;
      }
      out->items.push_back(std::move(key));
      if (pair) {
        PythonLiteral value;
        if (!Value(&value)) return false;
        out->items.push_back(std::move(value));
      }
      first = false;
      comma = Eat(',');
    }
    out->text = PythonRepr(*out);
    return true;
  }

  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

bool ParsePythonLiteral(const std::string& source, PythonLiteral* out) {
  if (source.find('\0') != std::string::npos) return false;
  Reader reader(source);
  PythonLiteral value;
  if (!reader.ReadAll(&value)) return false;
  *out = std::move(value);
  return true;
}

}  // namespace fleetreap
