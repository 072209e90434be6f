#include "fleetreap/fuser_output.h"

namespace fleetreap {

Status ParseFuserOutput(const std::string&, const std::string&, int,
                        FuserResult*) {
  return Status::Error(ErrorKind::kInternal, "not implemented");
}

}  // namespace fleetreap
