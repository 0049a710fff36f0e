// kgym::rl rejection sampling (PRS) and rollout/trainer mismatch correction.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kgym/rl/rejection.hpp"

namespace {

using kgym::rl::PrsOptions;

TEST(Prs, KeepProbability) {
  const PrsOptions o;  // tau 0.3, s 0.1
  EXPECT_EQ(kgym::rl::prs_keep_probability(false, 0.0, o), 1.0);
  EXPECT_EQ(kgym::rl::prs_keep_probability(false, std::nan(""), o), 1.0);
  EXPECT_EQ(kgym::rl::prs_keep_probability(true, 0.1, o), 0.0);
  EXPECT_EQ(kgym::rl::prs_keep_probability(true, 0.3, o), 0.0);
  EXPECT_NEAR(kgym::rl::prs_keep_probability(true, 0.35, o), 0.5, 1e-12);
  EXPECT_EQ(kgym::rl::prs_keep_probability(true, 0.9, o), 1.0);
  EXPECT_EQ(kgym::rl::prs_keep_probability(true, std::nan(""), o), 1.0);  // missing: keep
  PrsOptions drop = o;
  drop.missing = kgym::rl::MissingPr::kDrop;
  EXPECT_EQ(kgym::rl::prs_keep_probability(true, std::nan(""), drop), 0.0);
  PrsOptions strict = o;
  strict.missing = kgym::rl::MissingPr::kError;
  EXPECT_THROW(kgym::rl::prs_keep_probability(true, std::nan(""), strict), std::invalid_argument);
  EXPECT_THROW(kgym::rl::prs_keep_probability(true, 1.5, o), std::invalid_argument);
  PrsOptions bad = o;
  bad.s = 0.0;
  EXPECT_THROW(kgym::rl::prs_keep_probability(true, 0.5, bad), std::invalid_argument);
}

TEST(Prs, SeededAndKeyed) {
  const std::size_t n = 20000;
  std::vector<std::uint8_t> correct(n, 1);
  std::vector<double> pr(n, 0.35);  // keep probability 0.5
  std::vector<std::uint8_t> keep(n), keep2(n);
  std::vector<double> prob(n);
  PrsOptions o;
  o.seed = 99;
  kgym::rl::prs_sample(correct, pr, {}, o, keep, prob);
  kgym::rl::prs_sample(correct, pr, {}, o, keep2, {});
  EXPECT_EQ(keep, keep2);  // same seed, same decisions
  std::size_t kept = 0;
  for (auto k : keep) kept += k;
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(n), 0.5, 0.02);
  // decision i is uniform01(seed, i) < p
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(keep[i], kgym::rl::uniform01(99, i) < prob[i] ? 1 : 0);
  }
  // keyed draws do not depend on position
  std::vector<std::uint64_t> keys = {5, 6, 7};
  std::vector<std::uint64_t> rev = {7, 6, 5};
  std::vector<std::uint8_t> c3 = {1, 1, 1};
  std::vector<double> p3 = {0.35, 0.35, 0.35};
  std::vector<std::uint8_t> k1(3), k2(3);
  kgym::rl::prs_sample(c3, p3, keys, o, k1, {});
  kgym::rl::prs_sample(c3, p3, rev, o, k2, {});
  EXPECT_EQ(k1[0], k2[2]);
  EXPECT_EQ(k1[2], k2[0]);
  // uniform01 lies in [0, 1)
  for (std::uint64_t k = 0; k < 1000; ++k) {
    const double x = kgym::rl::uniform01(1, k);
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
}

TEST(Mismatch, GeometricRejection) {
  // seq 0: identical (ratio 1) ; seq 1: geo ratio e^0.01 ; seq 2: a vetoing token ;
  // seq 3: empty ; seq 4: masked-out garbage only
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> train = {-1.0, -2.0, -0.5, -0.5, -20.0, -1.0, nan};
  const std::vector<double> roll = {-1.0, -2.0, -0.51, -0.51, -1.0, -1.0, 0.0};
  const std::vector<std::int64_t> off = {0, 2, 4, 6, 6, 7};
  const std::vector<std::uint8_t> mask = {1, 1, 1, 1, 1, 1, 0};
  std::vector<std::uint8_t> keep(5), vetoed(5);
  std::vector<double> geo(5);
  kgym::rl::TokenLogProbs<double> lp{train, roll, off, mask};
  kgym::rl::geometric_rejection(lp, {}, keep, geo, vetoed);
  EXPECT_EQ(keep[0], 1);
  EXPECT_DOUBLE_EQ(geo[0], 1.0);
  EXPECT_EQ(keep[1], 0);
  EXPECT_NEAR(geo[1], std::exp(0.01), 1e-12);
  EXPECT_EQ(keep[2], 0);
  EXPECT_EQ(vetoed[2], 1);
  EXPECT_EQ(keep[3], 1);
  EXPECT_EQ(keep[4], 1);
  // Without a mask the NaN is an error.
  kgym::rl::TokenLogProbs<double> unmasked{train, roll, off, {}};
  EXPECT_THROW(kgym::rl::geometric_rejection(unmasked, {}, keep, geo, vetoed),
               std::invalid_argument);
}

TEST(Mismatch, TisAndMis) {
  const std::vector<float> train = {0.0f, -1.0f, -3.0f, -0.1f};
  const std::vector<float> roll = {-1.0f, -1.0f, -1.0f, -0.1f};
  const std::vector<std::int64_t> off = {0, 3, 4};
  kgym::rl::TokenLogProbs<float> lp{train, roll, off, {}};
  std::vector<double> w(4);
  kgym::rl::token_tis_weights(lp, 2.0, w);
  EXPECT_DOUBLE_EQ(w[0], 2.0);  // e^1 capped at 2
  EXPECT_DOUBLE_EQ(w[1], 1.0);
  EXPECT_NEAR(w[2], std::exp(-2.0), 1e-7);
  std::vector<std::uint8_t> m(4);
  kgym::rl::token_mis_mask(lp, 0.5, 2.0, m);
  EXPECT_EQ(m, (std::vector<std::uint8_t>{0, 1, 0, 1}));
  std::vector<std::uint8_t> sk(2);
  std::vector<double> slr(2);
  kgym::rl::sequence_mis_mask(lp, 0.5, 2.0, sk, slr);
  EXPECT_NEAR(slr[0], 1.0 + 0.0 - 2.0, 1e-6);  // e^-1 < 0.5
  EXPECT_EQ(sk[0], 0);
  EXPECT_EQ(sk[1], 1);
}

TEST(Mismatch, RejectsBadLayout) {
  const std::vector<double> a = {0.0, 0.0};
  const std::vector<double> b = {0.0};
  std::vector<double> w(2);
  const std::vector<std::int64_t> off = {0, 2};
  EXPECT_THROW(kgym::rl::token_tis_weights(kgym::rl::TokenLogProbs<double>{a, b, off, {}}, 2.0, w),
               std::invalid_argument);
  const std::vector<std::int64_t> bad_off = {0, 3};
  EXPECT_THROW(
      kgym::rl::token_tis_weights(kgym::rl::TokenLogProbs<double>{a, a, bad_off, {}}, 2.0, w),
      std::invalid_argument);
  const std::vector<std::int64_t> dec = {0, 2, 1, 2};
  std::vector<std::uint8_t> k(3);
  EXPECT_THROW(
      kgym::rl::sequence_mis_mask(kgym::rl::TokenLogProbs<double>{a, a, dec, {}}, 0.5, 2.0, k, {}),
      std::invalid_argument);
  EXPECT_THROW(kgym::rl::token_tis_weights(kgym::rl::TokenLogProbs<double>{a, a, off, {}}, 0.0, w),
               std::invalid_argument);
}

}  // namespace
