// Both policies' verdicts from one run (policy_verdicts.hpp).
#include <gtest/gtest.h>

#include "kgym/check/policy_verdicts.hpp"

namespace {
using kgym::check::policy_verdicts;
using nlohmann::json;

json result(const std::string& status, json findings = json::array(), json judge = nullptr,
            json profile = {{"available", false}}) {
  const bool ok = status == "ok";
  return {{"status", status},     {"correct", ok},  {"hacked", status == "rejected"},
          {"findings", findings}, {"judge", judge}, {"profile", profile}};
}

json warn(const char* rule) { return {{"rule", rule}, {"severity", "warn"}}; }
json reject(const char* rule) { return {{"rule", rule}, {"severity", "reject"}}; }

TEST(PolicyVerdicts, HybridRunOfAnHonestTritonKernelIsOkUnderBoth) {
  const auto v = policy_verdicts(result("ok", json::array(), {{"torch_ops", json::array()}},
                                        {{"available", true}, {"triton_share", 0.97}}),
                                 "hybrid");
  EXPECT_EQ(v["hybrid"]["status"], "ok");
  EXPECT_EQ(v["strict"]["status"], "ok");
  EXPECT_TRUE(v["strict"]["correct"].get<bool>());
}

TEST(PolicyVerdicts, HybridRunWithTorchComputeIsRejectedByStrict) {
  const auto v = policy_verdicts(
      result("ok", json::array({warn("torch-compute")}), {{"torch_ops", {"aten::mm"}}},
             {{"available", true}, {"triton_share", 0.15}}),
      "hybrid");
  EXPECT_EQ(v["hybrid"]["status"], "ok");
  EXPECT_EQ(v["strict"]["status"], "rejected");
  EXPECT_TRUE(v["strict"]["hacked"].get<bool>());
  EXPECT_EQ(v["strict"]["reasons"], json({"torch-compute", "low-triton-share"}));
}

TEST(PolicyVerdicts, TorchOpsAloneDecideStrictEvenWhenTheScreenSawNothing) {
  const auto v =
      policy_verdicts(result("incorrect", json::array(), {{"torch_ops", {"aten::add"}}}), "hybrid");
  EXPECT_EQ(v["hybrid"]["status"], "incorrect");
  EXPECT_EQ(v["strict"]["status"], "rejected");
  EXPECT_EQ(v["strict"]["reasons"], json({"torch-compute"}));
}

TEST(PolicyVerdicts, StrictRunThatPassedIsTheHybridVerdictToo) {
  const auto v = policy_verdicts(result("ok", json::array({warn("low-triton-share")})), "strict");
  EXPECT_EQ(v["strict"]["status"], "ok");
  EXPECT_EQ(v["hybrid"]["status"], "ok");
}

TEST(PolicyVerdicts, StrictRejectionForTorchComputeLeavesHybridUnknown) {
  const auto v =
      policy_verdicts(result("rejected", json::array({reject("torch-compute")})), "strict");
  EXPECT_EQ(v["strict"]["status"], "rejected");
  EXPECT_EQ(v["strict"]["reasons"], json({"torch-compute"}));
  EXPECT_TRUE(v["hybrid"].is_null());
}

TEST(PolicyVerdicts, AHackRejectedUnderStrictIsRejectedUnderHybridToo) {
  const auto v = policy_verdicts(
      result("rejected", json::array({reject("torch-compute"), reject("decoy-kernel")})), "strict");
  EXPECT_EQ(v["hybrid"]["status"], "rejected");
  EXPECT_EQ(v["hybrid"]["reasons"], json::array());  // reasons name strict-only rules only
}

TEST(PolicyVerdicts, MalformedResultsDoNotThrow) {
  EXPECT_NO_THROW(policy_verdicts(json::object(), "hybrid"));
  EXPECT_NO_THROW(policy_verdicts({{"findings", 3}, {"judge", "x"}, {"profile", 1}}, "strict"));
}

}  // namespace

namespace {
using kgym::check::non_triton_compute_kernels;

json profiled(json kernels) { return {{"available", true}, {"kernels", std::move(kernels)}}; }

TEST(NonTritonComputeKernels, TorchComputeInTheTimedCallsIsFoundCopiesAreNot) {
  const auto p = profiled(json::array(
      {{{"name", "relu_kernel"}, {"triton", true}},
       {{"name", "void at::native::vectorized_elementwise_kernel<4, at::native::softmax>"},
        {"triton", false}},
       {{"name", "void at::native::direct_copy_kernel_cuda"}, {"triton", false}},
       {{"name", "void at::native::FillFunctor<float>"}, {"triton", false}},
       {{"name", "Memset (Device)"}, {"triton", false}}}));
  EXPECT_EQ(non_triton_compute_kernels(p),
            std::vector<std::string>{
                "void at::native::vectorized_elementwise_kernel<4, at::native::softmax>"});
}

TEST(NonTritonComputeKernels, AHybridRunWithATorchKernelInItsTimedCallsFailsStrict) {
  const auto v =
      policy_verdicts(result("ok", json::array(), {{"torch_ops", json::array()}},
                             profiled(json::array({{{"name", "sm90_xmma_gemm"}, {"triton", false}},
                                                   {{"name", "epilogue"}, {"triton", true}}}))),
                      "hybrid");
  EXPECT_EQ(v["hybrid"]["status"], "ok");
  EXPECT_EQ(v["strict"]["status"], "rejected");
  EXPECT_EQ(v["strict"]["reasons"], json({"torch-compute"}));
}

TEST(NonTritonComputeKernels, UnavailableOrMalformedProfilesFindNothing) {
  EXPECT_TRUE(non_triton_compute_kernels(json{{"available", false}}).empty());
  EXPECT_TRUE(non_triton_compute_kernels(json{{"available", true}, {"kernels", 3}}).empty());
  EXPECT_TRUE(non_triton_compute_kernels(json(nullptr)).empty());
}
}  // namespace
