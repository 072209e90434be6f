// PrivateKeyFile: whether a private key file is kept as OpenSSH requires
// before it uses one. Free function; thread-safe.
#pragma once

#include <string>

namespace fleetreap {

/// "" when the key at "path" may be used; otherwise why not, as ssh refuses
/// an "UNPROTECTED PRIVATE KEY FILE": a regular file owned by this user that
/// its group or others may read or write, e.g.
///   permissions 0644 are too open (ssh refuses such a key); chmod 600 it
/// A file that cannot be stat'ed, one owned by another user, or one that is
/// not a regular file (a pipe: --identity <(...)) gives "" (its reader says
/// what is wrong with it).
std::string PrivateKeyModeProblem(const std::string& path);

}  // namespace fleetreap
