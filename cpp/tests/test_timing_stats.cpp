#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kgym/result/timing_stats.hpp"

using kgym::result::ratio_of_medians;
using kgym::result::summarize;

TEST(TimingStats, SummaryOfKnownSamples) {
  const std::vector<double> samples = {5, 1, 4, 2, 3};
  const auto s = summarize(samples);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->samples, 5u);
  EXPECT_DOUBLE_EQ(s->median_ms, 3.0);
  EXPECT_DOUBLE_EQ(s->mean_ms, 3.0);
  EXPECT_DOUBLE_EQ(s->min_ms, 1.0);
  EXPECT_DOUBLE_EQ(s->max_ms, 5.0);
  EXPECT_DOUBLE_EQ(s->p25_ms, 2.0);
  EXPECT_DOUBLE_EQ(s->p75_ms, 4.0);
  EXPECT_DOUBLE_EQ(s->mad_ms, 1.0);
}

TEST(TimingStats, EvenCountMedianInterpolates) {
  const std::vector<double> samples = {1, 2, 3, 10};
  EXPECT_DOUBLE_EQ(summarize(samples)->median_ms, 2.5);
}

TEST(TimingStats, RejectsInvalidSamples) {
  EXPECT_FALSE(summarize(std::vector<double>{}).has_value());
  EXPECT_FALSE(summarize(std::vector<double>{1.0, -1.0}).has_value());
  EXPECT_FALSE(summarize(std::vector<double>{1.0, 0.0}).has_value());
  EXPECT_FALSE(summarize(std::vector<double>{1.0, std::nan("")}).has_value());
  EXPECT_FALSE(
      summarize(std::vector<double>{1.0, std::numeric_limits<double>::infinity()}).has_value());
}

TEST(TimingStats, RatioOfMediansAndInterval) {
  std::vector<double> ref, cand;
  for (int i = 0; i < 101; ++i) {
    ref.push_back(2.0 + 0.001 * (i % 7));
    cand.push_back(1.0 + 0.001 * (i % 5));
  }
  const auto r = ratio_of_medians(ref, cand);
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->ratio, 2.003 / 1.002, 1e-9);
  EXPECT_LE(r->ci_low, r->ratio);
  EXPECT_GE(r->ci_high, r->ratio);
  EXPECT_LT(r->ci_high - r->ci_low, 0.02);
  // Seeded: the same samples give the same interval.
  const auto again = ratio_of_medians(ref, cand);
  EXPECT_DOUBLE_EQ(again->ci_low, r->ci_low);
  EXPECT_DOUBLE_EQ(again->ci_high, r->ci_high);
}

TEST(TimingStats, WideSpreadGivesWideInterval) {
  const std::vector<double> ref = {1, 3, 1, 3, 1, 3, 1, 3, 2};
  const std::vector<double> cand = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  const auto r = ratio_of_medians(ref, cand);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->ratio, 2.0);
  EXPECT_LT(r->ci_low, 2.0);
  EXPECT_GT(r->ci_high, 2.0);
}

TEST(TimingStats, RatioRejectsBadInput) {
  const std::vector<double> ok = {1.0, 2.0};
  EXPECT_FALSE(ratio_of_medians({}, ok).has_value());
  EXPECT_FALSE(ratio_of_medians(ok, std::vector<double>{0.0}).has_value());
  EXPECT_FALSE(ratio_of_medians(ok, ok, 1.5).has_value());
}
