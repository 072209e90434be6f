#include <cstdio>

#include "fleetreap/version.h"

int main() {
  std::printf("fleetreap %s\n", FLEETREAP_VERSION);
  return 0;
}
