// PythonLiteral: the values Python's ast.literal_eval reads, which is how
// Ansible's INI inventory plugin types a variable's value (`port=2222` is an
// int, `become=True` a bool, `user=ops` stays the text "ops" because
// literal_eval refuses it). The INI loader uses it so that fleetreap types
// every value the way ansible-core 2.14 does. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace fleetreap {

struct PythonLiteral {
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kComplex,
    kString,
    kBytes,
    kList,
    kTuple,
    kSet,
    kDict,
  };
  Kind kind = Kind::kNone;
  /// Python's str() of the value for scalars ("2222", "True", "1.5", the
  /// string itself); repr() for containers ("['a', 1]").
  std::string text;
  /// The items of a list, tuple or set; a dict's keys and values alternating.
  std::vector<PythonLiteral> items;
};

/// Parses "source" as ast.literal_eval would (leading spaces and tabs are
/// dropped, "#" comments allowed, strings with prefixes and escapes, implicit
/// concatenation, ints in every base, floats, containers). Returns false
/// where literal_eval raises ValueError or SyntaxError, i.e. where Ansible
/// keeps the text as it is. Arithmetic other than a sign is not read (Python
/// reads `1+2j`; Ansible then has a complex number no connection setting
/// takes), so such values stay text here.
bool ParsePythonLiteral(const std::string& source, PythonLiteral* out);

/// Python's repr() of "value" ('ops', "it's", [1, 'a'], {'a': 1}); the
/// text of a container.
std::string PythonRepr(const PythonLiteral& value);

/// Python's repr() of a float: the shortest text that reads back the same,
/// in exponent form below 1e-4 and from 1e16 on ("1000.0", "1e+16").
std::string PythonFloatRepr(double v);

}  // namespace fleetreap
