// The two clocks the service stamps its records with. The wall clock (CLOCK_REALTIME) is what
// clients see in created_at and finished_at; it can be stepped by anyone with the right, by NTP,
// or be wrong from boot. Ages that decide what is deleted are taken from the boot clock
// (CLOCK_BOOTTIME: seconds since this boot, suspend included), which nothing can step, whenever
// the record was stamped during the same boot (docs/service-api.md, "Storage").
#pragma once

#include <string>

namespace kgym::service {

struct Stamp {
  double wall = 0;  // unix seconds
  double boot = 0;  // seconds since the machine booted (CLOCK_BOOTTIME)
};

Stamp clock_now();

// This boot's identity (/proc/sys/kernel/random/boot_id), "" where the kernel does not say:
// stamps of the boot clock compare only within one boot.
std::string current_boot_id();

}  // namespace kgym::service
