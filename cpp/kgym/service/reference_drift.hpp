// The reference-timing store's use: every measured Result's reference median is compared with
// the last one measured for the same task, options, device and software. Timing stays
// interleaved (reference and candidate in the same window), which is what makes a speedup
// precise; the stored medians catch what interleaving cannot: a GPU whose clocks, neighbours or
// software changed between evaluations, so that speedups from different times are not comparable.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kgym/service/job_store.hpp"

namespace kgym::service {

// Stable across seeds and candidates; changes with the task source, its options (sizes,
// baseline), the worker's device and the software fingerprint.
std::string reference_key(const std::string& environment, const std::string& device_label,
                          const std::string& task_source, nlohmann::json options);

// The `timing.reference_check` object: stored and measured medians, their ratio and whether it
// is outside 1 ± tolerance.
nlohmann::json reference_check(const JobStore::ReferenceTiming& stored, double measured_ms,
                               double tolerance);

}  // namespace kgym::service
