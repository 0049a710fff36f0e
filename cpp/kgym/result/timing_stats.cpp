#include "kgym/result/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace kgym::result {
namespace {

bool all_valid(std::span<const double> values) {
  return std::all_of(values.begin(), values.end(),
                     [](double v) { return std::isfinite(v) && v > 0.0; });
}

double median_of(std::vector<double>& values) {
  std::sort(values.begin(), values.end());
  return sorted_quantile(values, 0.5);
}

}  // namespace

double sorted_quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<size_t>(std::floor(pos));
  const auto upper = std::min(lower + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * frac;
}

std::optional<SampleSummary> summarize(std::span<const double> samples_ms) {
  if (samples_ms.empty() || !all_valid(samples_ms)) return std::nullopt;
  std::vector<double> sorted(samples_ms.begin(), samples_ms.end());
  std::sort(sorted.begin(), sorted.end());
  SampleSummary s;
  s.samples = sorted.size();
  s.median_ms = sorted_quantile(sorted, 0.5);
  s.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.samples);
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  s.p25_ms = sorted_quantile(sorted, 0.25);
  s.p75_ms = sorted_quantile(sorted, 0.75);
  std::vector<double> deviations(sorted.size());
  std::transform(sorted.begin(), sorted.end(), deviations.begin(),
                 [&](double v) { return std::abs(v - s.median_ms); });
  s.mad_ms = median_of(deviations);
  s.cv = 1.4826 * s.mad_ms / s.median_ms;
  return s;
}

std::optional<RatioEstimate> ratio_of_medians(std::span<const double> reference_ms,
                                              std::span<const double> candidate_ms,
                                              double confidence, int resamples,
                                              std::uint64_t seed) {
  if (reference_ms.empty() || candidate_ms.empty() || !all_valid(reference_ms) ||
      !all_valid(candidate_ms) || resamples < 1 || !(confidence > 0.0 && confidence < 1.0)) {
    return std::nullopt;
  }
  std::vector<double> ref(reference_ms.begin(), reference_ms.end());
  std::vector<double> cand(candidate_ms.begin(), candidate_ms.end());
  RatioEstimate estimate;
  estimate.ratio = median_of(ref) / median_of(cand);
  estimate.confidence = confidence;
  estimate.resamples = resamples;

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick_ref(0, ref.size() - 1);
  std::uniform_int_distribution<size_t> pick_cand(0, cand.size() - 1);
  std::vector<double> ratios(static_cast<size_t>(resamples));
  std::vector<double> ref_draw(ref.size());
  std::vector<double> cand_draw(cand.size());
  for (auto& ratio : ratios) {
    for (auto& v : ref_draw) v = ref[pick_ref(rng)];
    for (auto& v : cand_draw) v = cand[pick_cand(rng)];
    ratio = median_of(ref_draw) / median_of(cand_draw);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - confidence) / 2.0;
  estimate.ci_low = sorted_quantile(ratios, tail);
  estimate.ci_high = sorted_quantile(ratios, 1.0 - tail);
  return estimate;
}

nlohmann::json to_json(const SampleSummary& s) {
  return {{"samples", s.samples}, {"median_ms", s.median_ms}, {"mean_ms", s.mean_ms},
          {"min_ms", s.min_ms},   {"max_ms", s.max_ms},       {"p25_ms", s.p25_ms},
          {"p75_ms", s.p75_ms},   {"mad_ms", s.mad_ms},       {"cv", s.cv}};
}

}  // namespace kgym::result
