// Returns over turns and group-relative advantages (docs/rl-maths.md).
//
// The batch is flat: one entry per (trajectory, turn) sample, with the prompt (group) it answers,
// the trajectory it belongs to and its turn index. Single-turn training passes no trajectory or
// turn ids: every sample is then its own one-turn trajectory.
//
//   returns   G[i,t] = sum_{t' >= t} gamma^(t' - t) * R[i,t']     over the turns trajectory i has
//   grouping  by (prompt, turn) when turn ids are given and group_by_turn is on, else by prompt
//   GRPO      A = (G - mean) / (std + eps)          (population std unless unbiased_std)
//   Dr. GRPO  A = G - mean
//   RLOO      A = G - (sum_{j != i} G_j) / (N - 1);  N = 1: A = G
//   TRLOO     RLOO on turn returns, grouped by (prompt, turn)
//
// Means and baselines run over the *valid* samples of a group only; invalid samples (filtered by
// rejection sampling, truncated, failed infrastructure...) get advantage 0 and do not enter any
// baseline, but their rewards still count in the returns of earlier turns of their trajectory.
// A group whose valid values are all equal gets advantages of exactly 0 (except RLOO's N = 1).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kgym::rl {

enum class Estimator { kGrpo, kDrGrpo, kRloo, kTrloo };

// "grpo", "dr_grpo", "rloo", "trloo" (also "grpo_no_std" for dr_grpo).
std::optional<Estimator> parse_estimator(std::string_view name);
std::string_view estimator_name(Estimator estimator);

struct AdvantageOptions {
  Estimator estimator = Estimator::kTrloo;
  double gamma = 1.0;         // discount over turns, in [0, 1]; Dr. Kernel uses 1
  double eps = 1e-6;          // GRPO's denominator guard, >= 0
  bool unbiased_std = false;  // GRPO: divide the variance by N - 1 instead of N
  bool group_by_turn = true;  // group by (prompt, turn) when turn ids are given; TRLOO needs it
};

// Non-owning views of the flat batch. Optional arrays are empty spans.
struct Batch {
  std::span<const double> rewards = {};          // R, finite
  std::span<const std::int64_t> group_ids = {};  // prompt of each sample
  std::span<const std::int64_t> traj_ids = {};   // optional: trajectory of each sample
  std::span<const std::int64_t> turn_ids = {};   // optional: turn index (>= 0) of each sample
  std::span<const std::uint8_t> valid = {};      // optional: 0 = excluded from estimation
};

// Outputs, each sized like the batch.
struct AdvantageOutputs {
  std::span<double> advantages = {};
  std::span<double> returns = {};  // optional: G used as the value (R itself without trajectories)
  std::span<std::int64_t> n_valid =
      {};  // optional: valid samples in this sample's group (N or N_t)
};

// Validates the batch (throws std::invalid_argument with a message naming the problem: empty
// batch, length mismatch, non-finite reward, negative turn, duplicate (trajectory, turn), a
// trajectory spread over two prompts, bad options) and fills the outputs.
void compute_advantages(const Batch& batch, const AdvantageOptions& options,
                        const AdvantageOutputs& out);

// Convenience: returns only the advantages.
std::vector<double> compute_advantages(const Batch& batch, const AdvantageOptions& options);

// G over turns for each sample (with gamma); traj_ids and turn_ids are required here.
std::vector<double> turn_returns(std::span<const double> rewards,
                                 std::span<const std::int64_t> traj_ids,
                                 std::span<const std::int64_t> turn_ids, double gamma);

}  // namespace kgym::rl
