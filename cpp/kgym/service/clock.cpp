#include "kgym/service/clock.hpp"

#include <time.h>

#include <fstream>

namespace kgym::service {

namespace {
double seconds_of(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
}  // namespace

Stamp clock_now() { return {seconds_of(CLOCK_REALTIME), seconds_of(CLOCK_BOOTTIME)}; }

std::string current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace kgym::service
