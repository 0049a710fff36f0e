// Rejection sampling and rollout/trainer mismatch correction (docs/rl-maths.md).
//
// Profiling-based rejection sampling (PRS, Dr. Kernel): a correct sample is kept with probability
// clip((PR - tau) / s, 0, 1); an incorrect one is always kept. Draws are counter-based: sample i
// with key k_i keeps iff uniform01(seed, k_i) < p_i, so a decision does not depend on batch order
// or size, and the same (seed, key) always gives the same decision. Applied per (trajectory,
// turn) sample: rejection is turn-level.
//
// Mismatch correction, with rho_t = pi_train(y_t) / pi_rollout(y_t) = exp(logp_train -
// logp_rollout) over the tokens of each sequence that the mask selects:
//   geometric rejection  keep a sequence iff lo <= exp(mean_t log rho_t) <= hi and no
//                        rho_t < veto (defaults 0.999, 1.001, 1e-4)
//   token TIS            w_t = min(rho_t, cap)        (a weight; the trainer stops its gradient)
//   token MIS            m_t = [lo <= rho_t <= hi]
//   sequence MIS         m = [lo <= exp(sum_t log rho_t) <= hi]
// Tokens outside the mask get weight 0 / mask 0 and are ignored (their log-probs may be anything);
// a sequence with no selected token has mean log ratio 0 (ratio 1).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kgym::rl {

// splitmix64 finaliser.
std::uint64_t mix64(std::uint64_t x);
// A uniform double in [0, 1) from (seed, key): the top 53 bits of
// mix64(seed ^ mix64(key + 0x9E3779B97F4A7C15)) divided by 2^53.
double uniform01(std::uint64_t seed, std::uint64_t key);

enum class MissingPr { kKeep, kDrop, kError };
std::optional<MissingPr> parse_missing_pr(std::string_view name);

struct PrsOptions {
  double tau = 0.3;  // PR at which the keep probability starts to rise
  double s = 0.1;    // width of the ramp: PR >= tau + s is always kept
  std::uint64_t seed = 0;
  // What to do with a correct sample whose PR is unknown (NaN: no profile, e.g. a CPU machine).
  MissingPr missing = MissingPr::kKeep;
};

// The keep probability of one sample (pr NaN = unknown). Validates options and pr.
double prs_keep_probability(bool correct, double pr, const PrsOptions& options);

// Batch PRS. correct and pr are per sample; keys (optional, else the index) key the draws.
// Fills keep (0/1) and, if non-empty, prob. Throws std::invalid_argument on bad input.
void prs_sample(std::span<const std::uint8_t> correct, std::span<const double> pr,
                std::span<const std::uint64_t> keys, const PrsOptions& options,
                std::span<std::uint8_t> keep, std::span<double> prob);

// Token log-probabilities of a batch of sequences, concatenated; sequence b is
// [offsets[b], offsets[b+1]). mask is optional (all tokens selected when empty).
template <typename T>
struct TokenLogProbs {
  std::span<const T> logp_train = {};
  std::span<const T> logp_rollout = {};
  std::span<const std::int64_t> offsets = {};  // size B + 1, offsets[0] == 0, non-decreasing
  std::span<const std::uint8_t> mask = {};     // optional, per token
};

struct GeometricOptions {
  double lo = 0.999;
  double hi = 1.001;
  double veto = 1e-4;  // a token with rho_t below this vetoes its sequence (0 disables)
};

// Per sequence: keep (0/1), the geometric-mean ratio, and whether a token vetoed it.
template <typename T>
void geometric_rejection(const TokenLogProbs<T>& lp, const GeometricOptions& options,
                         std::span<std::uint8_t> keep, std::span<double> geo_ratio,
                         std::span<std::uint8_t> vetoed);

// Per token: min(rho_t, cap); 0 outside the mask.
template <typename T>
void token_tis_weights(const TokenLogProbs<T>& lp, double cap, std::span<double> weights);

// Per token: 1 if lo <= rho_t <= hi (and selected by the mask), else 0.
template <typename T>
void token_mis_mask(const TokenLogProbs<T>& lp, double lo, double hi, std::span<std::uint8_t> out);

// Per sequence: 1 if lo <= exp(sum_t log rho_t) <= hi, else 0; also the summed log ratio.
template <typename T>
void sequence_mis_mask(const TokenLogProbs<T>& lp, double lo, double hi,
                       std::span<std::uint8_t> keep, std::span<double> log_ratio);

}  // namespace kgym::rl
