#include "kgym/rl/advantages.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace kgym::rl {

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

void check_length(std::size_t n, std::size_t got, std::string_view name, bool optional) {
  if (optional && got == 0) return;
  if (got != n) fail(fmt::format("{} has {} entries but rewards has {}", name, got, n));
}

void check_rewards(std::span<const double> rewards) {
  if (rewards.empty()) fail("empty batch: at least one sample is needed");
  for (std::size_t i = 0; i < rewards.size(); ++i) {
    if (!std::isfinite(rewards[i])) {
      fail(fmt::format("reward at index {} is not finite ({})", i, rewards[i]));
    }
  }
}

void check_turns(std::span<const std::int64_t> turn_ids) {
  for (std::size_t i = 0; i < turn_ids.size(); ++i) {
    if (turn_ids[i] < 0) fail(fmt::format("turn id at index {} is negative ({})", i, turn_ids[i]));
  }
}

void check_gamma(double gamma) {
  if (!(gamma >= 0.0 && gamma <= 1.0)) fail(fmt::format("gamma must lie in [0, 1], got {}", gamma));
}

// Indices sorted by (key1, key2), ties kept in input order (a stable sort). Two layouts that
// trainers produce are linear: rows already in key order, and rows grouped by key1 (e.g. prompt-
// major, then trajectory, then turn) whose key2 values span a small range (turn ids), which are
// counting-sorted segment by segment. Anything else falls back to std::stable_sort.
std::vector<std::size_t> sorted_by(std::size_t n, std::span<const std::int64_t> key1,
                                   std::span<const std::int64_t> key2) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto k2 = [&](std::size_t i) { return key2.empty() ? std::int64_t{0} : key2[i]; };
  bool sorted = true;
  bool key1_sorted = true;
  for (std::size_t i = 1; i < n && key1_sorted; ++i) {
    key1_sorted = key1[i - 1] <= key1[i];
    sorted = sorted && key1_sorted && (key1[i - 1] < key1[i] || k2(i - 1) <= k2(i));
  }
  if (sorted) return order;
  if (key1_sorted && !key2.empty()) {
    std::vector<std::size_t> counts;
    std::size_t begin = 0;
    while (begin < n) {
      std::size_t end = begin + 1;
      std::int64_t lo = key2[begin];
      std::int64_t hi = key2[begin];
      while (end < n && key1[end] == key1[begin]) {
        lo = std::min(lo, key2[end]);
        hi = std::max(hi, key2[end]);
        ++end;
      }
      const std::size_t m = end - begin;
      // key2 holds turn ids, validated >= 0, so hi - lo cannot overflow.
      if (static_cast<std::uint64_t>(hi - lo) <= 4 * m + 16) {
        const auto range = static_cast<std::size_t>(hi - lo) + 1;
        counts.assign(range + 1, 0);
        for (std::size_t i = begin; i < end; ++i) {
          ++counts[static_cast<std::size_t>(key2[i] - lo) + 1];
        }
        for (std::size_t r = 1; r <= range; ++r) counts[r] += counts[r - 1];
        for (std::size_t i = begin; i < end; ++i) {
          order[begin + counts[static_cast<std::size_t>(key2[i] - lo)]++] = i;
        }
      } else {
        std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(begin),
                         order.begin() + static_cast<std::ptrdiff_t>(end),
                         [&](std::size_t x, std::size_t y) { return key2[x] < key2[y]; });
      }
      begin = end;
    }
    return order;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (key1[x] != key1[y]) return key1[x] < key1[y];
    return k2(x) < k2(y);
  });
  return order;
}

// Fills G (size n) from R along each trajectory. Validates duplicate turns and, when group_ids is
// given, that a trajectory stays within one prompt.
void fill_returns(std::span<const double> rewards, std::span<const std::int64_t> traj_ids,
                  std::span<const std::int64_t> turn_ids, std::span<const std::int64_t> group_ids,
                  double gamma, std::span<double> out) {
  const std::size_t n = rewards.size();
  const std::vector<std::size_t> order = sorted_by(n, traj_ids, turn_ids);
  std::size_t end = n;
  while (end > 0) {
    // [begin, end) is one trajectory in order; walk it backwards.
    std::size_t begin = end - 1;
    while (begin > 0 && traj_ids[order[begin - 1]] == traj_ids[order[end - 1]]) --begin;
    double acc = 0.0;
    std::int64_t next_turn = 0;
    for (std::size_t k = end; k > begin; --k) {
      const std::size_t i = order[k - 1];
      const std::int64_t turn = turn_ids[i];
      if (k < end) {
        const std::size_t later = order[k];
        if (turn == next_turn) {
          fail(fmt::format("trajectory {} has turn {} twice (indices {} and {})", traj_ids[i], turn,
                           std::min(i, later), std::max(i, later)));
        }
        if (!group_ids.empty() && group_ids[i] != group_ids[later]) {
          fail(fmt::format("trajectory {} spans two groups ({} and {})", traj_ids[i], group_ids[i],
                           group_ids[later]));
        }
        const double discount =
            gamma == 1.0 ? 1.0 : std::pow(gamma, static_cast<double>(next_turn - turn));
        acc = rewards[i] + discount * acc;
      } else {
        acc = rewards[i];
      }
      out[i] = acc;
      next_turn = turn;
    }
    end = begin;
  }
}

void check_options(const AdvantageOptions& options, bool has_turns) {
  check_gamma(options.gamma);
  if (!(options.eps >= 0.0 && std::isfinite(options.eps))) {
    fail(fmt::format("eps must be finite and >= 0, got {}", options.eps));
  }
  if (options.estimator == Estimator::kTrloo && has_turns && !options.group_by_turn) {
    fail("trloo groups by (prompt, turn): group_by_turn cannot be false");
  }
}

// Advantages of one group: values[k] for the members idx[k] that are valid.
void group_advantages(const AdvantageOptions& options, std::span<const std::size_t> members,
                      std::span<const double> values, std::span<const std::uint8_t> valid,
                      const AdvantageOutputs& out) {
  double sum = 0.0;
  double lo = 0.0;
  double hi = 0.0;
  std::int64_t count = 0;
  for (const std::size_t i : members) {
    if (!valid.empty() && valid[i] == 0) continue;
    const double v = values[i];
    if (count == 0) {
      lo = hi = v;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    sum += v;
    ++count;
  }
  const auto n = static_cast<double>(count);
  double mean = count > 0 ? sum / n : 0.0;
  double scale = 1.0;  // GRPO's 1 / (std + eps)
  if (options.estimator == Estimator::kGrpo && count > 0 && lo != hi) {
    double sq = 0.0;
    for (const std::size_t i : members) {
      if (!valid.empty() && valid[i] == 0) continue;
      const double d = values[i] - mean;
      sq += d * d;
    }
    const double dof = options.unbiased_std ? n - 1.0 : n;
    const double stdev = dof > 0.0 ? std::sqrt(sq / dof) : 0.0;
    const double denom = stdev + options.eps;
    scale = denom > 0.0 ? 1.0 / denom : 0.0;
  }
  for (const std::size_t i : members) {
    if (!out.n_valid.empty()) out.n_valid[i] = count;
    if (!valid.empty() && valid[i] == 0) {
      out.advantages[i] = 0.0;
      continue;
    }
    const double v = values[i];
    double a = 0.0;
    switch (options.estimator) {
      case Estimator::kGrpo:
        a = lo == hi ? 0.0 : (v - mean) * scale;
        break;
      case Estimator::kDrGrpo:
        a = lo == hi ? 0.0 : v - mean;
        break;
      case Estimator::kRloo:
      case Estimator::kTrloo:
        if (count == 1) {
          a = v;  // no other sample: the baseline is 0
        } else if (lo == hi) {
          a = 0.0;
        } else {
          a = v - (sum - v) / (n - 1.0);
        }
        break;
    }
    out.advantages[i] = a;
  }
}

}  // namespace

std::optional<Estimator> parse_estimator(std::string_view name) {
  if (name == "grpo") return Estimator::kGrpo;
  if (name == "dr_grpo" || name == "grpo_no_std") return Estimator::kDrGrpo;
  if (name == "rloo") return Estimator::kRloo;
  if (name == "trloo") return Estimator::kTrloo;
  return std::nullopt;
}

std::string_view estimator_name(Estimator estimator) {
  switch (estimator) {
    case Estimator::kGrpo:
      return "grpo";
    case Estimator::kDrGrpo:
      return "dr_grpo";
    case Estimator::kRloo:
      return "rloo";
    case Estimator::kTrloo:
      return "trloo";
  }
  return "?";
}

std::vector<double> turn_returns(std::span<const double> rewards,
                                 std::span<const std::int64_t> traj_ids,
                                 std::span<const std::int64_t> turn_ids, double gamma) {
  check_rewards(rewards);
  const std::size_t n = rewards.size();
  check_length(n, traj_ids.size(), "traj_ids", false);
  check_length(n, turn_ids.size(), "turn_ids", false);
  check_turns(turn_ids);
  check_gamma(gamma);
  std::vector<double> out(n);
  fill_returns(rewards, traj_ids, turn_ids, {}, gamma, out);
  return out;
}

void compute_advantages(const Batch& batch, const AdvantageOptions& options,
                        const AdvantageOutputs& out) {
  check_rewards(batch.rewards);
  const std::size_t n = batch.rewards.size();
  check_length(n, batch.group_ids.size(), "group_ids", false);
  check_length(n, batch.traj_ids.size(), "traj_ids", true);
  check_length(n, batch.turn_ids.size(), "turn_ids", true);
  check_length(n, batch.valid.size(), "valid", true);
  check_length(n, out.advantages.size(), "advantages (output)", false);
  check_length(n, out.returns.size(), "returns (output)", true);
  check_length(n, out.n_valid.size(), "n_valid (output)", true);
  check_turns(batch.turn_ids);
  check_options(options, !batch.turn_ids.empty());
  if (!batch.traj_ids.empty() && batch.turn_ids.empty()) {
    fail("traj_ids need turn_ids: returns are sums over a trajectory's turns");
  }

  // Values: turn returns along trajectories, or the rewards themselves.
  std::vector<double> owned;
  std::span<const double> values = batch.rewards;
  if (!batch.traj_ids.empty()) {
    std::span<double> g = out.returns;
    if (g.empty()) {
      owned.resize(n);
      g = owned;
    }
    fill_returns(batch.rewards, batch.traj_ids, batch.turn_ids, batch.group_ids, options.gamma, g);
    values = g;
  } else if (!out.returns.empty()) {
    std::copy(batch.rewards.begin(), batch.rewards.end(), out.returns.begin());
  }

  // Groups: (prompt, turn) or prompt.
  const bool by_turn = options.group_by_turn && !batch.turn_ids.empty();
  const std::span<const std::int64_t> key2 =
      by_turn ? batch.turn_ids : std::span<const std::int64_t>{};
  const std::vector<std::size_t> order = sorted_by(n, batch.group_ids, key2);
  std::size_t begin = 0;
  while (begin < n) {
    std::size_t end = begin + 1;
    const std::size_t first = order[begin];
    while (end < n && batch.group_ids[order[end]] == batch.group_ids[first] &&
           (!by_turn || batch.turn_ids[order[end]] == batch.turn_ids[first])) {
      ++end;
    }
    group_advantages(options, std::span<const std::size_t>(order).subspan(begin, end - begin),
                     values, batch.valid, out);
    begin = end;
  }
}

std::vector<double> compute_advantages(const Batch& batch, const AdvantageOptions& options) {
  std::vector<double> adv(batch.rewards.size());
  compute_advantages(batch, options, AdvantageOutputs{adv, {}, {}});
  return adv;
}

}  // namespace kgym::rl
