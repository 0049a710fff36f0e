#include "kgym/service/reference_drift.hpp"

#include <gtest/gtest.h>

using kgym::service::JobStore;
using kgym::service::reference_check;
using kgym::service::reference_key;
using nlohmann::json;

TEST(ReferenceKey, IgnoresSeedAndPriorityOnly) {
  const json options = {{"seed", 1}, {"priority", 3}, {"trials", 5}, {"baseline", "eager"}};
  const auto key = reference_key("cuda|torch 2.11", "gpu0", "class Model: ...", options);
  EXPECT_EQ(key.size(), 64u);
  json reseeded = options;
  reseeded["seed"] = 99;
  reseeded["priority"] = -1;
  EXPECT_EQ(reference_key("cuda|torch 2.11", "gpu0", "class Model: ...", reseeded), key);
  json compiled = options;
  compiled["baseline"] = "compile";
  EXPECT_NE(reference_key("cuda|torch 2.11", "gpu0", "class Model: ...", compiled), key);
  EXPECT_NE(reference_key("cuda|torch 2.12", "gpu0", "class Model: ...", options), key);
  EXPECT_NE(reference_key("cuda|torch 2.11", "gpu1", "class Model: ...", options), key);
  EXPECT_NE(reference_key("cuda|torch 2.11", "gpu0", "class Model: pass", options), key);
}

TEST(ReferenceCheck, FlagsOnlyWhatLeavesTheTolerance) {
  const JobStore::ReferenceTiming stored{2.0, 200, 1700000000.0};
  auto same = reference_check(stored, 2.1, 0.10);
  EXPECT_FALSE(same["drifted"].get<bool>());
  EXPECT_DOUBLE_EQ(same["ratio"].get<double>(), 1.05);
  EXPECT_EQ(same["stored_samples"], 200);
  EXPECT_TRUE(reference_check(stored, 2.5, 0.10)["drifted"].get<bool>());
  EXPECT_TRUE(reference_check(stored, 1.7, 0.10)["drifted"].get<bool>());
  // A stored median of zero cannot be compared with: that is drift, not a pass.
  EXPECT_TRUE(reference_check({0.0, 0, 0.0}, 1.0, 0.10)["drifted"].get<bool>());
}

TEST(ReferenceCheck, RoundTripsThroughTheStore) {
  JobStore store(":memory:");
  const auto key = reference_key("env", "gpu0", "src", json::object());
  EXPECT_FALSE(store.reference_timing(key).has_value());
  store.put_reference_timing(key, {1.25, 120, 42.0});
  const auto got = store.reference_timing(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_DOUBLE_EQ(got->median_ms, 1.25);
  EXPECT_EQ(got->samples, 120);
  store.put_reference_timing(key, {1.5, 80, 43.0});  // the latest measurement replaces it
  EXPECT_DOUBLE_EQ(store.reference_timing(key)->median_ms, 1.5);
}
