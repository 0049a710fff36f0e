// kgym::reward: specs, Result-based rewards and Kernel Coder's format + similarity reward.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "kgym/reward/reward.hpp"
#include "kgym/reward/spec.hpp"

namespace {

using kgym::reward::compute_reward;
using kgym::reward::parse_reward_spec;
using kgym::reward::RewardInput;
using nlohmann::json;

json ok_result(double speedup, double pr) {
  return {
      {"status", "ok"},
      {"compiled", true},
      {"correct", true},
      {"hacked", false},
      {"findings", json::array()},
      {"timing", {{"available", true}, {"speedup", speedup}, {"speedup_ci", {speedup, speedup}}}},
      {"profile", {{"available", true}, {"triton_share", pr}}}};
}

double term(const kgym::reward::RewardBreakdown& b, const std::string& name) {
  for (const auto& [k, v] : b.terms) {
    if (k == name) return v;
  }
  ADD_FAILURE() << "no term " << name;
  return NAN;
}

std::string error_of(const json& spec) {
  try {
    parse_reward_spec(spec);
  } catch (const kgym::reward::SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(Reward, DrKernelFormula) {
  const auto spec = parse_reward_spec(json{{"kind", "dr_kernel"}});
  const json r = ok_result(1.8, 0.6);
  const auto b = compute_reward(spec, RewardInput{&r, {}, {}});
  EXPECT_TRUE(b.valid);
  EXPECT_DOUBLE_EQ(b.total, 1.0 + 1.8 + 0.6);
  EXPECT_DOUBLE_EQ(term(b, "speedup"), 1.8);
  // capped at 3
  const json fast = ok_result(10.0, 1.0);
  EXPECT_DOUBLE_EQ(compute_reward(spec, RewardInput{&fast, {}, {}}).total, 1.0 + 3.0 + 1.0);
  // weights and cap
  const auto w = parse_reward_spec(
      json{{"kind", "dr_kernel"}, {"weights", {{"correct", 2.0}, {"profile", 0.5}}}, {"cap", 1.5}});
  EXPECT_DOUBLE_EQ(compute_reward(w, RewardInput{&r, {}, {}}).total, 2.0 + 1.5 + 0.3);
}

TEST(Reward, HackedAndRejectedEarnNoSpeed) {
  const auto spec = parse_reward_spec(
      json{{"kind", "dr_kernel"}, {"penalties", {{"hacked", 1.0}, {"warning", 0.1}}}});
  json hacked = ok_result(2.5, 0.9);
  hacked["hacked"] = true;
  auto b = compute_reward(spec, RewardInput{&hacked, {}, {}});
  EXPECT_DOUBLE_EQ(b.total, -1.0);
  EXPECT_EQ(term(b, "speedup"), 0.0);
  json rejected = ok_result(2.5, 0.9);
  rejected["status"] = "rejected";
  rejected["findings"] = json::array(
      {{{"rule", "torch_in_forward"}, {"severity", "reject"}, {"line", 3}, {"detail", "x"}},
       {{"rule", "style"}, {"severity", "warn"}, {"line", 4}, {"detail", "y"}}});
  b = compute_reward(spec, RewardInput{&rejected, {}, {}});
  EXPECT_DOUBLE_EQ(b.total, -1.1);
  const auto staged = parse_reward_spec(json{{"kind", "staged"}});
  EXPECT_EQ(compute_reward(staged, RewardInput{&hacked, {}, {}}).total, 0.0);
}

TEST(Reward, MissingTimingAndInfraError) {
  const auto spec = parse_reward_spec(json{{"kind", "dr_kernel"}});
  json cpu = ok_result(1.0, 0.5);
  cpu["timing"] = {{"available", false}, {"speedup", nullptr}};
  cpu["profile"] = {{"available", false}, {"triton_share", nullptr}};
  auto b = compute_reward(spec, RewardInput{&cpu, {}, {}});
  EXPECT_DOUBLE_EQ(b.total, 1.0);
  EXPECT_TRUE(std::isnan(b.metrics[0].second));
  const auto strict = parse_reward_spec(json{{"kind", "dr_kernel"}, {"missing_speedup", "error"}});
  EXPECT_THROW(compute_reward(strict, RewardInput{&cpu, {}, {}}), kgym::reward::InputError);
  const auto assume = parse_reward_spec(
      json{{"kind", "dr_kernel"}, {"missing_speedup", 1.0}, {"missing_profile", 0.25}});
  EXPECT_DOUBLE_EQ(compute_reward(assume, RewardInput{&cpu, {}, {}}).total, 2.25);
  json infra = cpu;
  infra["status"] = "infra_error";
  b = compute_reward(spec, RewardInput{&infra, {}, {}});
  EXPECT_FALSE(b.valid);
  EXPECT_EQ(b.total, 0.0);
  EXPECT_EQ(b.terms.size(), 4u);
  // an incorrect sample never needs timing, even with missing_speedup: error
  json wrong = cpu;
  wrong["correct"] = false;
  wrong["status"] = "incorrect";
  EXPECT_EQ(compute_reward(strict, RewardInput{&wrong, {}, {}}).total, 0.0);
}

TEST(Reward, Staged) {
  const auto spec = parse_reward_spec(json{{"kind", "staged"}});
  const json r = ok_result(2.0, 0.5);
  EXPECT_DOUBLE_EQ(compute_reward(spec, RewardInput{&r, {}, {}}).total, 0.1 + 0.3 + 2.0);
  json wrong = r;
  wrong["correct"] = false;
  wrong["status"] = "incorrect";
  EXPECT_DOUBLE_EQ(compute_reward(spec, RewardInput{&wrong, {}, {}}).total, 0.1);
  json broken = wrong;
  broken["compiled"] = false;
  broken["status"] = "compile_error";
  EXPECT_EQ(compute_reward(spec, RewardInput{&broken, {}, {}}).total, 0.0);
  const auto log = parse_reward_spec(json{{"kind", "staged"}, {"speedup_transform", "log2"}});
  const json slow = ok_result(0.5, 0.5);
  EXPECT_DOUBLE_EQ(compute_reward(log, RewardInput{&slow, {}, {}}).total, 0.1 + 0.3 - 1.0);
}

TEST(Reward, KernelCoderFormat) {
  kgym::reward::KernelCoderSpec s;
  auto f = kgym::reward::kernel_coder_format("plan</think>\n```python\nimport triton\n```", s);
  EXPECT_EQ(f.score, 1.0);
  ASSERT_TRUE(f.code);
  EXPECT_EQ(*f.code, "import triton");
  f = kgym::reward::kernel_coder_format("plan</think> no code", s);
  EXPECT_EQ(f.score, 0.5);
  EXPECT_FALSE(f.code);
  f = kgym::reward::kernel_coder_format("   </think>```python\nx```", s);
  EXPECT_EQ(f.score, 0.0);  // empty think
  f = kgym::reward::kernel_coder_format("a<think>b</think>```x```", s);
  EXPECT_EQ(f.score, 0.0);  // nested think tag
  f = kgym::reward::kernel_coder_format("no closing tag", s);
  EXPECT_EQ(f.score, 0.0);
  s.eos_token = "<|endoftext|>";
  f = kgym::reward::kernel_coder_format("t</think>```python\ny = 1\n```<|endoftext|>", s);
  EXPECT_EQ(f.score, 1.0);
  s.require_answer_tag = true;
  f = kgym::reward::kernel_coder_format("t</think>```python\ny = 1\n```", s);
  EXPECT_EQ(f.score, 0.5);
  f = kgym::reward::kernel_coder_format("t</think><answer>```python\ny = 1\n```</answer>", s);
  EXPECT_EQ(f.score, 1.0);
}

TEST(Reward, KernelCoderTotal) {
  const auto spec = parse_reward_spec(json{{"kind", "kernel_coder"}});
  const std::string completion = "think</think>```python\nabcd\n```";
  const auto b = compute_reward(spec, RewardInput{nullptr, completion, std::string_view("bcde")});
  EXPECT_DOUBLE_EQ(b.total, 1.0 + 0.75);
  EXPECT_THROW(compute_reward(spec, RewardInput{nullptr, completion, {}}),
               kgym::reward::InputError);
}

TEST(Reward, Composite) {
  const auto spec = parse_reward_spec(
      json{{"kind", "composite"},
           {"terms",
            {{{"name", "kb"}, {"weight", 0.5}, {"spec", {{"kind", "kernel_coder"}}}},
             {{"name", "speed"}, {"spec", {{"kind", "dr_kernel"}}}}}}});
  const json r = ok_result(2.0, 0.5);
  const std::string completion = "think</think>```python\nabcd\n```";
  const auto b = compute_reward(spec, RewardInput{&r, completion, std::string_view("bcde")});
  EXPECT_DOUBLE_EQ(b.total, 0.5 * 1.75 + 3.5);
  EXPECT_EQ(b.terms[0].first, "kb.format");
  EXPECT_EQ(b.terms[2].first, "speed.correct");
}

TEST(Reward, SpecErrorsNameTheKey) {
  EXPECT_NE(error_of({{"kind", "dr_kernel"}, {"weights", {{"speed", 1}}}}).find("weights.speed"),
            std::string::npos);
  EXPECT_NE(error_of({{"kind", "dr_kernel"}, {"capp", 3}}).find("capp: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of({{"kind", "nope"}}).find("kind"), std::string::npos);
  EXPECT_NE(error_of({{"weights", {}}}).find("kind: missing"), std::string::npos);
  EXPECT_NE(error_of({{"kind", "dr_kernel"}, {"cap", "3"}}).find("cap: expected a number"),
            std::string::npos);
  EXPECT_NE(error_of({{"kind", "dr_kernel"}, {"cap", 0}}).find("cap"), std::string::npos);
  EXPECT_NE(error_of({{"kind", "staged"}, {"speedup_transform", "exp"}}).find("speedup_transform"),
            std::string::npos);
  EXPECT_NE(error_of({{"kind", "composite"}, {"terms", {{{"spec", {{"kind", "x"}}}}}}})
                .find("terms[0].spec.kind"),
            std::string::npos);
  EXPECT_NE(error_of({{"kind", "dr_kernel"}, {"missing_speedup", true}}).find("missing_speedup"),
            std::string::npos);
  EXPECT_THROW(parse_reward_spec(std::string_view("{not json")), kgym::reward::SpecError);
}

TEST(Reward, SpecRoundTrip) {
  const json in = {{"kind", "staged"}, {"cap", 5}, {"missing_speedup", 1.0}};
  const json out = kgym::reward::to_json(parse_reward_spec(in));
  EXPECT_EQ(out["cap"], 5.0);
  EXPECT_EQ(out["weights"]["compile"], 0.1);
  EXPECT_EQ(kgym::reward::to_json(parse_reward_spec(out)), out);
}

TEST(Reward, BadResultsNameTheField) {
  const auto spec = parse_reward_spec(json{{"kind", "dr_kernel"}});
  json r = ok_result(1.0, 0.5);
  r.erase("hacked");
  try {
    compute_reward(spec, RewardInput{&r, {}, {}});
    FAIL();
  } catch (const kgym::reward::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("result.hacked"), std::string::npos);
  }
  r = ok_result(-1.0, 0.5);
  EXPECT_THROW(compute_reward(spec, RewardInput{&r, {}, {}}), kgym::reward::InputError);
  r = ok_result(1.0, 1.5);
  EXPECT_THROW(compute_reward(spec, RewardInput{&r, {}, {}}), kgym::reward::InputError);
  r = ok_result(1.0, 0.5);
  r["status"] = "great";
  EXPECT_THROW(compute_reward(spec, RewardInput{&r, {}, {}}), kgym::reward::InputError);
  EXPECT_THROW(compute_reward(spec, "{"), kgym::reward::InputError);
  const json good = ok_result(2.0, 0.5);
  EXPECT_DOUBLE_EQ(compute_reward(spec, good).total, 3.5);
  EXPECT_DOUBLE_EQ(compute_reward(spec, good.dump()).total, 3.5);
}

}  // namespace
