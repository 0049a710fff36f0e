#include "kgym/service/reference_drift.hpp"

#include <cmath>

#include <fmt/format.h>

#include "kgym/service/hashing.hpp"

namespace kgym::service {

std::string reference_key(const std::string& environment, const std::string& device_label,
                          const std::string& task_source, nlohmann::json options) {
  if (options.is_object()) {
    // Neither changes how fast the reference runs.
    options.erase("seed");
    options.erase("priority");
  }
  return sha256_hex(fmt::format("{}\n{}\n{}\n{}", environment, device_label,
                                sha256_hex(task_source), options.dump()));
}

nlohmann::json reference_check(const JobStore::ReferenceTiming& stored, double measured_ms,
                               double tolerance) {
  const double ratio = stored.median_ms > 0 ? measured_ms / stored.median_ms : 0.0;
  return {{"stored_median_ms", stored.median_ms},
          {"stored_samples", stored.samples},
          {"stored_at", stored.measured_at},
          {"measured_median_ms", measured_ms},
          {"ratio", ratio},
          {"tolerance", tolerance},
          {"drifted", !(std::abs(ratio - 1.0) <= tolerance)}};
}

}  // namespace kgym::service
