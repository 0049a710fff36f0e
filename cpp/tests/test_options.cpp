// The options table: every edge (job JSON, service options, OpenAPI, CLIs) derives from it, so
// its own consistency is what keeps them in agreement.
#include <set>

#include <gtest/gtest.h>

#include "kgym/check/job.hpp"
#include "kgym/check/options.hpp"

namespace {
using kgym::check::OptionKind;
using nlohmann::json;

TEST(Options, NamesAreUniqueAndJobOptionsAreBound) {
  std::set<std::string> names, flags;
  for (const auto& spec : kgym::check::option_table()) {
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    if (!spec.cli.empty()) {
      EXPECT_TRUE(flags.insert(spec.cli).second) << spec.cli;
    }
    EXPECT_FALSE(spec.help.empty()) << spec.name;
    if (spec.job) {
      EXPECT_TRUE(spec.set && spec.get) << spec.name;
    }
    if (spec.kind == OptionKind::kChoice) {
      EXPECT_FALSE(spec.choices.empty()) << spec.name;
    }
    if (spec.kind == OptionKind::kInteger || spec.kind == OptionKind::kNumber) {
      EXPECT_LE(spec.min, spec.max) << spec.name;
    }
  }
}

TEST(Options, DefaultsAreValidAndAreWhatAFreshJobHolds) {
  const kgym::check::CheckJob fresh;
  const json of_fresh = kgym::check::options_of(fresh, false);
  for (const auto& spec : kgym::check::option_table()) {
    EXPECT_NO_THROW(kgym::check::validated_option(spec, spec.fallback)) << spec.name;
    if (spec.job) {
      EXPECT_EQ(of_fresh.at(spec.name), spec.fallback) << spec.name;
    }
  }
}

TEST(Options, ValuesAreCheckedByKindBoundsAndChoices) {
  const auto& trials = *kgym::check::find_option("trials");
  EXPECT_EQ(kgym::check::validated_option(trials, json(nullptr)), 5);
  EXPECT_EQ(kgym::check::validated_option(trials, 7), 7);
  EXPECT_THROW(kgym::check::validated_option(trials, 0), std::invalid_argument);
  EXPECT_THROW(kgym::check::validated_option(trials, 101), std::invalid_argument);
  EXPECT_THROW(kgym::check::validated_option(trials, 2.5), std::invalid_argument);
  EXPECT_THROW(kgym::check::validated_option(trials, "5"), std::invalid_argument);
  const auto& baseline = *kgym::check::find_option("baseline");
  EXPECT_THROW(kgym::check::validated_option(baseline, "fast"), std::invalid_argument);
  const auto& budget = *kgym::check::find_option("timing_budget_ms");
  EXPECT_THROW(kgym::check::validated_option(budget, json(1e300 * 1e300)), std::invalid_argument);
  try {
    kgym::check::validated_option(trials, 0, "options.");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "options.trials: must be between 1 and 100");
  }
  EXPECT_EQ(kgym::check::find_option("no_such_option"), nullptr);
}

TEST(Options, ServiceOnlyLeavesLocalOptionsAlone) {
  kgym::check::CheckJob job;
  kgym::check::apply_options(job, {{"atol", 0.5}, {"trials", 9}}, "", true);
  EXPECT_FALSE(job.atol.has_value());  // not a service option: the caller rejects it
  EXPECT_EQ(job.trials, 9);
  const json view = kgym::check::options_of(job, true);
  EXPECT_FALSE(view.contains("atol"));
  EXPECT_FALSE(view.contains("priority"));  // the service's own, not the job's
  EXPECT_TRUE(view.contains("torch_compute"));
}

TEST(Options, SchemaCarriesBoundsDefaultsAndChoices) {
  const json schema = kgym::check::options_schema(true);
  EXPECT_EQ(schema["trials"]["type"], "integer");
  EXPECT_EQ(schema["trials"]["minimum"], 1);
  EXPECT_EQ(schema["trials"]["maximum"], 100);
  EXPECT_EQ(schema["trials"]["default"], 5);
  EXPECT_EQ(schema["torch_compute"]["enum"], json({"strict", "hybrid"}));
  EXPECT_TRUE(schema.contains("priority"));
  EXPECT_FALSE(schema.contains("atol"));
  EXPECT_TRUE(kgym::check::options_schema(false).contains("atol"));
}

}  // namespace
