#include "kgym/rl/rejection.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace kgym::rl {

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

void check_prs_options(const PrsOptions& o) {
  if (!std::isfinite(o.tau)) fail(fmt::format("PRS tau must be finite, got {}", o.tau));
  if (!(o.s > 0.0 && std::isfinite(o.s))) {
    fail(fmt::format("PRS s must be finite and > 0, got {}", o.s));
  }
}

void check_bounds(double lo, double hi, std::string_view what) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo >= 0.0 && lo <= hi)) {
    fail(fmt::format("{}: need finite bounds with 0 <= lo <= hi, got lo={} hi={}", what, lo, hi));
  }
}

// Validates the token layout and the log-probs of selected tokens; returns the sequence count.
template <typename T>
std::size_t check_tokens(const TokenLogProbs<T>& lp) {
  const std::size_t n = lp.logp_train.size();
  if (lp.logp_rollout.size() != n) {
    fail(
        fmt::format("logp_rollout has {} tokens but logp_train has {}", lp.logp_rollout.size(), n));
  }
  if (!lp.mask.empty() && lp.mask.size() != n) {
    fail(fmt::format("mask has {} tokens but logp_train has {}", lp.mask.size(), n));
  }
  if (lp.offsets.empty()) fail("offsets must hold B + 1 entries (at least [0])");
  if (lp.offsets.front() != 0) fail(fmt::format("offsets[0] must be 0, got {}", lp.offsets[0]));
  for (std::size_t b = 1; b < lp.offsets.size(); ++b) {
    if (lp.offsets[b] < lp.offsets[b - 1]) {
      fail(fmt::format("offsets must be non-decreasing (offsets[{}]={} < offsets[{}]={})", b,
                       lp.offsets[b], b - 1, lp.offsets[b - 1]));
    }
  }
  if (static_cast<std::size_t>(lp.offsets.back()) != n) {
    fail(fmt::format("offsets[-1] is {} but there are {} tokens", lp.offsets.back(), n));
  }
  for (std::size_t t = 0; t < n; ++t) {
    if (!lp.mask.empty() && lp.mask[t] == 0) continue;
    const auto a = static_cast<double>(lp.logp_train[t]);
    const auto b = static_cast<double>(lp.logp_rollout[t]);
    if (!std::isfinite(a)) fail(fmt::format("logp_train[{}] is not finite ({})", t, a));
    if (!std::isfinite(b)) fail(fmt::format("logp_rollout[{}] is not finite ({})", t, b));
  }
  return lp.offsets.size() - 1;
}

template <typename T>
bool selected(const TokenLogProbs<T>& lp, std::size_t t) {
  return lp.mask.empty() || lp.mask[t] != 0;
}

template <typename T>
double log_rho(const TokenLogProbs<T>& lp, std::size_t t) {
  return static_cast<double>(lp.logp_train[t]) - static_cast<double>(lp.logp_rollout[t]);
}

void check_out(std::size_t want, std::size_t got, std::string_view name, bool optional) {
  if (optional && got == 0) return;
  if (got != want) fail(fmt::format("output {} has {} entries, expected {}", name, got, want));
}

}  // namespace

std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

double uniform01(std::uint64_t seed, std::uint64_t key) {
  const std::uint64_t bits = mix64(seed ^ mix64(key + 0x9E3779B97F4A7C15ULL));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

std::optional<MissingPr> parse_missing_pr(std::string_view name) {
  if (name == "keep") return MissingPr::kKeep;
  if (name == "drop") return MissingPr::kDrop;
  if (name == "error") return MissingPr::kError;
  return std::nullopt;
}

double prs_keep_probability(bool correct, double pr, const PrsOptions& options) {
  check_prs_options(options);
  if (!correct) return 1.0;
  if (std::isnan(pr)) {
    switch (options.missing) {
      case MissingPr::kKeep:
        return 1.0;
      case MissingPr::kDrop:
        return 0.0;
      case MissingPr::kError:
        fail("PRS: a correct sample has no PR (profile unavailable) and missing='error'");
    }
  }
  if (!(pr >= 0.0 && pr <= 1.0)) fail(fmt::format("PR must lie in [0, 1], got {}", pr));
  return std::clamp((pr - options.tau) / options.s, 0.0, 1.0);
}

void prs_sample(std::span<const std::uint8_t> correct, std::span<const double> pr,
                std::span<const std::uint64_t> keys, const PrsOptions& options,
                std::span<std::uint8_t> keep, std::span<double> prob) {
  check_prs_options(options);
  const std::size_t n = correct.size();
  if (n == 0) fail("empty batch: at least one sample is needed");
  if (pr.size() != n) fail(fmt::format("pr has {} entries but correct has {}", pr.size(), n));
  if (!keys.empty() && keys.size() != n) {
    fail(fmt::format("keys has {} entries but correct has {}", keys.size(), n));
  }
  check_out(n, keep.size(), "keep", false);
  check_out(n, prob.size(), "prob", true);
  for (std::size_t i = 0; i < n; ++i) {
    double p = 1.0;
    try {
      p = prs_keep_probability(correct[i] != 0, pr[i], options);
    } catch (const std::invalid_argument& e) {
      fail(fmt::format("sample {}: {}", i, e.what()));
    }
    const std::uint64_t key = keys.empty() ? static_cast<std::uint64_t>(i) : keys[i];
    keep[i] = uniform01(options.seed, key) < p ? 1 : 0;
    if (!prob.empty()) prob[i] = p;
  }
}

template <typename T>
void geometric_rejection(const TokenLogProbs<T>& lp, const GeometricOptions& options,
                         std::span<std::uint8_t> keep, std::span<double> geo_ratio,
                         std::span<std::uint8_t> vetoed) {
  check_bounds(options.lo, options.hi, "geometric rejection");
  if (!(options.veto >= 0.0 && std::isfinite(options.veto))) {
    fail(fmt::format("geometric rejection: veto must be finite and >= 0, got {}", options.veto));
  }
  const std::size_t nseq = check_tokens(lp);
  check_out(nseq, keep.size(), "keep", false);
  check_out(nseq, geo_ratio.size(), "geo_ratio", true);
  check_out(nseq, vetoed.size(), "vetoed", true);
  for (std::size_t b = 0; b < nseq; ++b) {
    double sum = 0.0;
    std::size_t count = 0;
    bool veto = false;
    const auto t0 = static_cast<std::size_t>(lp.offsets[b]);
    const auto t1 = static_cast<std::size_t>(lp.offsets[b + 1]);
    for (std::size_t t = t0; t < t1; ++t) {
      if (!selected(lp, t)) continue;
      const double d = log_rho(lp, t);
      sum += d;
      ++count;
      if (std::exp(d) < options.veto) veto = true;
    }
    const double geo = std::exp(count > 0 ? sum / static_cast<double>(count) : 0.0);
    keep[b] = (!veto && geo >= options.lo && geo <= options.hi) ? 1 : 0;
    if (!geo_ratio.empty()) geo_ratio[b] = geo;
    if (!vetoed.empty()) vetoed[b] = veto ? 1 : 0;
  }
}

template <typename T>
void token_tis_weights(const TokenLogProbs<T>& lp, double cap, std::span<double> weights) {
  if (!(cap > 0.0 && std::isfinite(cap))) {
    fail(fmt::format("token TIS: cap must be finite and > 0, got {}", cap));
  }
  check_tokens(lp);
  check_out(lp.logp_train.size(), weights.size(), "weights", false);
  for (std::size_t t = 0; t < weights.size(); ++t) {
    weights[t] = selected(lp, t) ? std::min(std::exp(log_rho(lp, t)), cap) : 0.0;
  }
}

template <typename T>
void token_mis_mask(const TokenLogProbs<T>& lp, double lo, double hi, std::span<std::uint8_t> out) {
  check_bounds(lo, hi, "token MIS");
  check_tokens(lp);
  check_out(lp.logp_train.size(), out.size(), "mask", false);
  for (std::size_t t = 0; t < out.size(); ++t) {
    if (!selected(lp, t)) {
      out[t] = 0;
      continue;
    }
    const double rho = std::exp(log_rho(lp, t));
    out[t] = (rho >= lo && rho <= hi) ? 1 : 0;
  }
}

template <typename T>
void sequence_mis_mask(const TokenLogProbs<T>& lp, double lo, double hi,
                       std::span<std::uint8_t> keep, std::span<double> log_ratio) {
  check_bounds(lo, hi, "sequence MIS");
  const std::size_t nseq = check_tokens(lp);
  check_out(nseq, keep.size(), "keep", false);
  check_out(nseq, log_ratio.size(), "log_ratio", true);
  for (std::size_t b = 0; b < nseq; ++b) {
    double sum = 0.0;
    const auto t0 = static_cast<std::size_t>(lp.offsets[b]);
    const auto t1 = static_cast<std::size_t>(lp.offsets[b + 1]);
    for (std::size_t t = t0; t < t1; ++t) {
      if (selected(lp, t)) sum += log_rho(lp, t);
    }
    const double ratio = std::exp(sum);
    keep[b] = (ratio >= lo && ratio <= hi) ? 1 : 0;
    if (!log_ratio.empty()) log_ratio[b] = sum;
  }
}

#define KGYM_INSTANTIATE(T)                                                               \
  template void geometric_rejection<T>(const TokenLogProbs<T>&, const GeometricOptions&,  \
                                       std::span<std::uint8_t>, std::span<double>,        \
                                       std::span<std::uint8_t>);                          \
  template void token_tis_weights<T>(const TokenLogProbs<T>&, double, std::span<double>); \
  template void token_mis_mask<T>(const TokenLogProbs<T>&, double, double,                \
                                  std::span<std::uint8_t>);                               \
  template void sequence_mis_mask<T>(const TokenLogProbs<T>&, double, double,             \
                                     std::span<std::uint8_t>, std::span<double>);
KGYM_INSTANTIATE(float)
KGYM_INSTANTIATE(double)
#undef KGYM_INSTANTIATE

}  // namespace kgym::rl
