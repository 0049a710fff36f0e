// kgym::rl returns and advantages against hand-computed values and a direct reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "kgym/rl/advantages.hpp"

namespace {

using kgym::rl::AdvantageOptions;
using kgym::rl::AdvantageOutputs;
using kgym::rl::Batch;
using kgym::rl::Estimator;

std::vector<double> run(const Batch& batch, Estimator est, double gamma = 1.0, double eps = 1e-6) {
  AdvantageOptions opt;
  opt.estimator = est;
  opt.gamma = gamma;
  opt.eps = eps;
  return kgym::rl::compute_advantages(batch, opt);
}

TEST(Advantages, GrpoOneGroup) {
  const std::vector<double> r = {1.0, 2.0, 3.0, 6.0};
  const std::vector<std::int64_t> g = {0, 0, 0, 0};
  const auto a = run({r, g}, Estimator::kGrpo, 1.0, 0.0);
  const double mean = 3.0;
  const double sd = std::sqrt((4.0 + 1.0 + 0.0 + 9.0) / 4.0);
  for (std::size_t i = 0; i < r.size(); ++i) EXPECT_DOUBLE_EQ(a[i], (r[i] - mean) / sd);
}

TEST(Advantages, DrGrpoAndRloo) {
  const std::vector<double> r = {1.0, 2.0, 3.0, 6.0, 5.0, 5.0};
  const std::vector<std::int64_t> g = {7, 7, 7, 7, 9, 9};
  const auto dr = run({r, g}, Estimator::kDrGrpo);
  EXPECT_DOUBLE_EQ(dr[0], -2.0);
  EXPECT_DOUBLE_EQ(dr[3], 3.0);
  EXPECT_EQ(dr[4], 0.0);  // all-equal group: exactly 0
  const auto rloo = run({r, g}, Estimator::kRloo);
  // r_i - mean of the others == N/(N-1) * (r_i - mean)
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(rloo[i], 4.0 / 3.0 * (r[i] - 3.0));
  EXPECT_EQ(rloo[4], 0.0);
  EXPECT_EQ(rloo[5], 0.0);
}

TEST(Advantages, GroupOfOne) {
  const std::vector<double> r = {0.7};
  const std::vector<std::int64_t> g = {3};
  EXPECT_EQ(run({r, g}, Estimator::kGrpo)[0], 0.0);
  EXPECT_EQ(run({r, g}, Estimator::kDrGrpo)[0], 0.0);
  EXPECT_EQ(run({r, g}, Estimator::kRloo)[0], 0.7);  // no baseline: A = G
  EXPECT_EQ(run({r, g}, Estimator::kTrloo)[0], 0.7);
}

TEST(Advantages, TurnReturnsWithGamma) {
  // trajectory 0: turns 0,1,2 ; trajectory 1: turns 0,2 (turn 1 absent), given out of order
  const std::vector<double> r = {1.0, 2.0, 4.0, 10.0, 20.0};
  const std::vector<std::int64_t> traj = {0, 1, 0, 1, 0};
  const std::vector<std::int64_t> turn = {2, 2, 1, 0, 0};
  const auto g = kgym::rl::turn_returns(r, traj, turn, 0.5);
  EXPECT_DOUBLE_EQ(g[0], 1.0);                // traj 0 turn 2
  EXPECT_DOUBLE_EQ(g[2], 4.0 + 0.5 * 1.0);    // traj 0 turn 1
  EXPECT_DOUBLE_EQ(g[4], 20.0 + 0.5 * 4.5);   // traj 0 turn 0
  EXPECT_DOUBLE_EQ(g[1], 2.0);                // traj 1 turn 2
  EXPECT_DOUBLE_EQ(g[3], 10.0 + 0.25 * 2.0);  // traj 1 turn 0: gamma^(2-0)
}

TEST(Advantages, TrlooByPromptAndTurnWithMasks) {
  // One prompt, three trajectories, two turns; trajectory 2 stops after turn 0, and trajectory
  // 1's turn 1 is invalid (e.g. rejected by PRS): it keeps its reward in returns but leaves the
  // baseline.
  const std::vector<double> r = {1.0, 0.0, 2.0, 3.0, 1.0};
  const std::vector<std::int64_t> group = {0, 0, 0, 0, 0};
  const std::vector<std::int64_t> traj = {0, 1, 2, 0, 1};
  const std::vector<std::int64_t> turn = {0, 0, 0, 1, 1};
  const std::vector<std::uint8_t> valid = {1, 1, 1, 1, 0};
  std::vector<double> adv(5), ret(5);
  std::vector<std::int64_t> nv(5);
  AdvantageOptions opt;
  opt.estimator = Estimator::kTrloo;
  kgym::rl::compute_advantages(Batch{r, group, traj, turn, valid}, opt,
                               AdvantageOutputs{adv, ret, nv});
  // returns: traj0: G0 = 4, G1 = 3 ; traj1: G0 = 1, G1 = 1 ; traj2: G0 = 2
  EXPECT_DOUBLE_EQ(ret[0], 4.0);
  EXPECT_DOUBLE_EQ(ret[1], 1.0);
  EXPECT_DOUBLE_EQ(ret[2], 2.0);
  EXPECT_DOUBLE_EQ(ret[3], 3.0);
  EXPECT_DOUBLE_EQ(ret[4], 1.0);
  // turn 0: N = 3
  EXPECT_DOUBLE_EQ(adv[0], 4.0 - (1.0 + 2.0) / 2.0);
  EXPECT_DOUBLE_EQ(adv[1], 1.0 - (4.0 + 2.0) / 2.0);
  EXPECT_DOUBLE_EQ(adv[2], 2.0 - (4.0 + 1.0) / 2.0);
  // turn 1: only trajectory 0 is valid: N_t = 1, A = G
  EXPECT_DOUBLE_EQ(adv[3], 3.0);
  EXPECT_EQ(adv[4], 0.0);
  EXPECT_EQ(nv[0], 3);
  EXPECT_EQ(nv[3], 1);
  EXPECT_EQ(nv[4], 1);
}

TEST(Advantages, MatchesDirectReferenceOnRandomBatches) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-2.0, 3.0);
  std::bernoulli_distribution coin(0.8);
  for (int iter = 0; iter < 200; ++iter) {
    const std::size_t prompts = 1 + static_cast<std::size_t>(iter % 5);
    const std::size_t samples = 1 + static_cast<std::size_t>(iter % 6);
    const std::size_t turns = 1 + static_cast<std::size_t>(iter % 3);
    std::vector<double> r;
    std::vector<std::int64_t> group, traj, turn;
    std::vector<std::uint8_t> valid;
    for (std::size_t p = 0; p < prompts; ++p) {
      for (std::size_t s = 0; s < samples; ++s) {
        const std::size_t len = 1 + rng() % turns;  // trajectories end early
        for (std::size_t t = 0; t < len; ++t) {
          r.push_back(std::round(u(rng) * 4.0) / 4.0);
          group.push_back(static_cast<std::int64_t>(p));
          traj.push_back(static_cast<std::int64_t>(p * 100 + s));
          turn.push_back(static_cast<std::int64_t>(t));
          valid.push_back(coin(rng) ? 1 : 0);
        }
      }
    }
    const double gamma = iter % 2 ? 1.0 : 0.9;
    const auto g = kgym::rl::turn_returns(r, traj, turn, gamma);
    for (const Estimator est :
         {Estimator::kGrpo, Estimator::kDrGrpo, Estimator::kRloo, Estimator::kTrloo}) {
      AdvantageOptions opt;
      opt.estimator = est;
      opt.gamma = gamma;
      const auto adv = kgym::rl::compute_advantages(Batch{r, group, traj, turn, valid}, opt);
      // Reference: per (prompt, turn), the valid returns.
      std::map<std::pair<std::int64_t, std::int64_t>, std::vector<double>> members;
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (valid[i]) members[{group[i], turn[i]}].push_back(g[i]);
      }
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (!valid[i]) {
          ASSERT_EQ(adv[i], 0.0);
          continue;
        }
        const auto& xs = members[{group[i], turn[i]}];
        const double n = static_cast<double>(xs.size());
        double sum = 0.0;
        for (double x : xs) sum += x;
        const double mean = sum / n;
        double var = 0.0;
        for (double x : xs) var += (x - mean) * (x - mean);
        const double sd = std::sqrt(var / n);
        double want = 0.0;
        switch (est) {
          case Estimator::kGrpo:
            want = (g[i] - mean) / (sd + 1e-6);
            break;
          case Estimator::kDrGrpo:
            want = g[i] - mean;
            break;
          default:
            want = xs.size() == 1 ? g[i] : g[i] - (sum - g[i]) / (n - 1.0);
        }
        ASSERT_NEAR(adv[i], want, 1e-9 * (1.0 + std::abs(want))) << "iteration " << iter;
      }
    }
  }
}

TEST(Advantages, RejectsBadInput) {
  const std::vector<double> r = {1.0, 2.0};
  const std::vector<std::int64_t> g = {0, 0};
  const std::vector<std::int64_t> g1 = {0};
  EXPECT_THROW(run({r, g1}, Estimator::kGrpo), std::invalid_argument);
  EXPECT_THROW(run({{}, {}}, Estimator::kGrpo), std::invalid_argument);
  const std::vector<double> bad = {1.0, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(run({bad, g}, Estimator::kGrpo), std::invalid_argument);
  const std::vector<double> inf = {std::numeric_limits<double>::infinity(), 1.0};
  EXPECT_THROW(run({inf, g}, Estimator::kRloo), std::invalid_argument);
  EXPECT_THROW(run({r, g}, Estimator::kGrpo, 1.5), std::invalid_argument);
  EXPECT_THROW(run({r, g}, Estimator::kGrpo, 1.0, -1.0), std::invalid_argument);
  // duplicate (trajectory, turn)
  const std::vector<std::int64_t> traj = {5, 5};
  const std::vector<std::int64_t> turn = {1, 1};
  EXPECT_THROW(run({r, g, traj, turn}, Estimator::kTrloo), std::invalid_argument);
  // negative turn
  const std::vector<std::int64_t> neg = {0, -1};
  EXPECT_THROW(run({r, g, traj, neg}, Estimator::kTrloo), std::invalid_argument);
  // a trajectory in two prompts
  const std::vector<std::int64_t> g2 = {0, 1};
  const std::vector<std::int64_t> turn2 = {0, 1};
  EXPECT_THROW(run({r, g2, traj, turn2}, Estimator::kTrloo), std::invalid_argument);
  // trajectories without turns
  EXPECT_THROW(run({r, g, traj, {}}, Estimator::kTrloo), std::invalid_argument);
  try {
    run({bad, g}, Estimator::kGrpo);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("index 1"), std::string::npos) << e.what();
  }
}

}  // namespace
