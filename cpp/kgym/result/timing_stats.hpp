// Timing statistics, computed by trusted code outside the candidate's process from the raw
// per-iteration samples the harness reports (docs/architecture.md, "Measuring").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym::result {

struct SampleSummary {
  size_t samples = 0;
  double median_ms = 0;
  double mean_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double p25_ms = 0;
  double p75_ms = 0;
  double mad_ms = 0;  // median absolute deviation from the median
  double cv = 0;      // robust coefficient of variation: 1.4826 * MAD / median
};

struct RatioEstimate {
  double ratio = 0;   // median(numerator) / median(denominator)
  double ci_low = 0;  // bootstrap percentile interval of the ratio of medians
  double ci_high = 0;
  double confidence = 0.95;
  int resamples = 0;
};

// Linear-interpolated quantile (as numpy's default) of already sorted values; q in [0, 1].
double sorted_quantile(std::span<const double> sorted, double q);

// Summarises samples; nullopt when there are none or any is not a finite positive number.
std::optional<SampleSummary> summarize(std::span<const double> samples_ms);

// Speedup = median(reference) / median(candidate) with a seeded bootstrap confidence interval,
// so the same samples always give the same interval.
std::optional<RatioEstimate> ratio_of_medians(std::span<const double> reference_ms,
                                              std::span<const double> candidate_ms,
                                              double confidence = 0.95, int resamples = 2000,
                                              std::uint64_t seed = 0x6b67796dULL);

nlohmann::json to_json(const SampleSummary& summary);

}  // namespace kgym::result
