#include "kgym/service/interference.hpp"

#include <gtest/gtest.h>

#include "kgym/check/evaluate.hpp"

using kgym::service::attribute_after_control;
using kgym::service::candidate_code_ran;
using kgym::service::control_cleared;
using kgym::service::control_job;
using kgym::service::furthest_phase;
using nlohmann::json;

namespace {

// A Result as the supervisor assembles it: the phases it started, a status and an error.
json result_through(const std::vector<std::string>& phases, const std::string& status,
                    const std::string& error_phase = "", bool candidate_started = true) {
  json r = {
      {"status", status},          {"correct", false},
      {"hacked", false},           {"durations_ms", json::object()},
      {"findings", json::array()}, {"judge", {{"candidate_code_started", candidate_started}}}};
  for (const auto& p : phases) r["durations_ms"][p] = 10.0;
  r["durations_ms"]["total"] = 99.0;
  if (!error_phase.empty()) {
    r["error"] = {{"phase", error_phase},
                  {"type", "OutOfMemoryError"},
                  {"message", "the reference's runner failed: CUDA out of memory"}};
  }
  return r;
}

}  // namespace

TEST(Interference, ControlJobRunsTheTaskItselfAndChangesNothingElse) {
  kgym::check::CheckJob job;
  job.task_source = "import torch\nclass Model(torch.nn.Module):\n    pass\n";
  job.candidate_text = "```python\nclass ModelNew: ...\n```";
  job.device = "cuda";
  job.trials = 3;
  job.seed = 7;
  job.profile = true;
  job.timing.budget_ms = 250.0;
  job.torch_compute = "strict";
  const auto control = control_job(job);
  EXPECT_EQ(control.candidate_text.rfind(job.task_source, 0), 0u);  // the task's code first
  EXPECT_NE(control.candidate_text.find("class ModelNew(Model):"), std::string::npos);
  EXPECT_EQ(control.extract_rule, kgym::text::ExtractRule::kWhole);
  EXPECT_FALSE(control.screen);
  EXPECT_EQ(control.torch_compute, "hybrid");
  EXPECT_TRUE(control.control);
  EXPECT_FALSE(job.control);
  EXPECT_EQ(kgym::check::harness_job(control)["control"], true);
  EXPECT_EQ(kgym::check::harness_job(job)["control"], false);
  EXPECT_EQ(control.device, "cuda");
  EXPECT_EQ(control.trials, 3);
  EXPECT_EQ(control.seed, 7u);
  EXPECT_TRUE(control.profile);
  EXPECT_DOUBLE_EQ(control.timing.budget_ms, 250.0);
  EXPECT_EQ(control.task_source, job.task_source);
}

TEST(Interference, FurthestPhaseFollowsThePhaseOrderNotTheKeys) {
  EXPECT_EQ(furthest_phase(json(nullptr)), -1);
  EXPECT_EQ(furthest_phase(result_through({}, "infra_error")), -1);  // "total" is no phase
  const auto load = furthest_phase(result_through({"startup", "load"}, "infra_error"));
  const auto timing =
      furthest_phase(result_through({"timing", "startup", "init", "correctness"}, "ok"));
  EXPECT_GT(timing, load);
  EXPECT_GE(load, 0);
}

TEST(Interference, TheCandidateCanOnlyBeChargedOnceItsCodeRan) {
  // The judge's own record, not the phase: the task's Model fails in the judge during `init`,
  // before the candidate's runner is sent its code.
  EXPECT_FALSE(candidate_code_ran(
      result_through({"startup", "load", "init"}, "infra_error", "init", false)));
  EXPECT_TRUE(candidate_code_ran(result_through({"startup", "load", "init"}, "infra_error")));
  EXPECT_FALSE(candidate_code_ran(json{{"status", "infra_error"}, {"judge", nullptr}}));
  EXPECT_FALSE(candidate_code_ran(json(nullptr)));
}

TEST(Interference, ControlClearsOnlyAVerdictThatGotAsFar) {
  const auto failed =
      result_through({"startup", "load", "init", "correctness"}, "infra_error", "correctness");
  EXPECT_TRUE(control_cleared(
      result_through({"startup", "load", "init", "correctness", "timing", "profile"}, "ok"),
      failed));
  // A verdict on the stand-in after the same phases (the hybrid rule's rejection at profile).
  EXPECT_TRUE(control_cleared(
      result_through({"startup", "load", "init", "correctness", "timing", "profile"}, "rejected"),
      failed));
  // Stopped before the phase that failed: it says nothing about that phase.
  EXPECT_FALSE(control_cleared(result_through({"startup", "load", "init"}, "rejected"), failed));
  // The reference side failing alone, or a control that did not finish, clears nothing.
  for (const auto* status : {"infra_error", "timeout", "crashed"}) {
    EXPECT_FALSE(control_cleared(
        result_through({"startup", "load", "init", "correctness", "timing"}, status), failed))
        << status;
  }
  EXPECT_FALSE(control_cleared(json(nullptr), failed));
  EXPECT_FALSE(control_cleared(json::object(), failed));
}

TEST(Interference, AChargedFailureBecomesTheCandidatesRuntimeError) {
  auto failed = result_through({"startup", "load", "init"}, "infra_error", "init");
  failed["infra_retry"] = {{"first_error", failed["error"]}};
  // The stand-in is torch code: the judge records that it launched no Triton kernel, and goes on.
  auto control =
      result_through({"startup", "load", "init", "correctness", "timing", "profile"}, "rejected");
  control["findings"].push_back({{"rule", "no-triton-launch"}, {"severity", "reject"}});
  control["findings"].push_back({{"rule", "some-warning"}, {"severity", "warn"}});
  const auto r = attribute_after_control(failed, control, "strict");
  EXPECT_EQ(r["status"], "runtime_error");
  EXPECT_FALSE(r["correct"].get<bool>());
  EXPECT_EQ(r["error"]["type"], "CandidateInterference");
  EXPECT_EQ(r["error"]["phase"], "init");
  EXPECT_EQ(r["error"]["traceback"], "");  // every field of the schema: the reward reads them
  EXPECT_NE(r["error"]["message"].get<std::string>().find("CUDA out of memory"), std::string::npos);
  EXPECT_TRUE(r["infra_retry"]["charged"].get<bool>());
  EXPECT_EQ(r["infra_retry"]["second_error"], failed["error"]);
  EXPECT_EQ(r["infra_retry"]["first_error"], failed["error"]);
  EXPECT_EQ(r["infra_retry"]["control"]["status"], "rejected");
  EXPECT_EQ(r["infra_retry"]["control"]["reached"], "profile");
  EXPECT_EQ(r["infra_retry"]["control"]["rules"], json::array({"no-triton-launch"}));
  EXPECT_EQ(r["policies"]["strict"]["status"], "runtime_error");
}

TEST(Interference, AFailureTheControlSharesStaysAnInfraError) {
  auto failed = result_through({"startup", "load", "init"}, "infra_error", "init");
  failed["infra_retry"] = {{"first_error", failed["error"]}};
  const auto control = result_through({"startup", "load", "init"}, "infra_error", "init");
  const auto r = attribute_after_control(failed, control, "hybrid");
  EXPECT_EQ(r["status"], "infra_error");
  EXPECT_EQ(r["error"], failed["error"]);
  EXPECT_FALSE(r["infra_retry"]["charged"].get<bool>());
  EXPECT_EQ(r["infra_retry"]["control"]["status"], "infra_error");
  EXPECT_FALSE(r["infra_retry"].contains("second_error"));
  // Before the candidate's code ran, even a clean control charges nothing.
  auto early = result_through({"startup", "load", "init"}, "infra_error", "init", false);
  const auto clean =
      result_through({"startup", "load", "init", "correctness", "timing", "profile"}, "ok");
  EXPECT_EQ(attribute_after_control(early, clean, "hybrid")["status"], "infra_error");
  // A verdict that is not an infra_error is left as it is.
  const auto ok = result_through({"startup", "load", "init"}, "ok");
  EXPECT_EQ(attribute_after_control(ok, clean, "hybrid"), ok);
}

namespace {

// The candidate's own run out of GPU memory, on a GPU (or on the CPU).
json candidate_out_of_memory(const std::string& kind = "cuda") {
  json r = result_through({"load", "init", "compile", "correctness"}, "runtime_error");
  r["device"] = {{"kind", kind}};
  r["error"] = {{"phase", "correctness"},
                {"type", "OutOfMemoryError"},
                {"message", "CUDA out of memory. Tried to allocate 256.00 MiB."}};
  return r;
}

}  // namespace

TEST(Interference, OnlyARunOutOfGpuMemoryIsDoubtedBesideInfraErrors) {
  using kgym::service::doubtful_failure;
  using kgym::service::ran_out_of_gpu_memory;
  EXPECT_TRUE(ran_out_of_gpu_memory(candidate_out_of_memory()));
  EXPECT_TRUE(doubtful_failure(candidate_out_of_memory()));
  auto driver = candidate_out_of_memory();
  driver["error"]["type"] = "RuntimeError";
  driver["error"]["message"] = "Triton Error [CUDA]: CUDA_ERROR_OUT_OF_MEMORY";
  EXPECT_TRUE(ran_out_of_gpu_memory(driver));
  // Host memory, another error, or a verdict that is not a runtime error: the candidate's own.
  EXPECT_FALSE(ran_out_of_gpu_memory(candidate_out_of_memory("cpu")));
  auto other = candidate_out_of_memory();
  other["error"] = {{"phase", "correctness"}, {"type", "IndexError"}, {"message", "out of range"}};
  EXPECT_FALSE(ran_out_of_gpu_memory(other));
  auto rejected = candidate_out_of_memory();
  rejected["status"] = "rejected";
  EXPECT_FALSE(ran_out_of_gpu_memory(rejected));
  EXPECT_FALSE(doubtful_failure(other));
  EXPECT_TRUE(doubtful_failure(result_through({"load"}, "infra_error", "load")));
}

TEST(Interference, ACandidatesOwnRunOutOfGpuMemoryStandsWhenTheStandInGotAsFar) {
  const auto control = result_through({"load", "init", "compile", "correctness", "timing"}, "ok");
  const auto out = attribute_after_control(candidate_out_of_memory(), control, "hybrid");
  EXPECT_EQ(out["status"], "runtime_error");
  EXPECT_EQ(out["error"]["type"], "OutOfMemoryError");  // its own error, unchanged
  EXPECT_EQ(out["infra_retry"]["charged"], true);
  EXPECT_EQ(out["infra_retry"]["control"]["status"], "ok");
}

TEST(Interference, ARunOutOfGpuMemoryBesideAStarvedStandInIsNotCharged) {
  auto control = result_through({"load", "init"}, "infra_error", "init");
  const auto out = attribute_after_control(candidate_out_of_memory(), control, "hybrid");
  EXPECT_EQ(out["status"], "infra_error");
  EXPECT_EQ(out["error"]["type"], "GpuMemoryShortage");
  EXPECT_NE(out["error"]["message"].get<std::string>().find("CUDA out of memory"),
            std::string::npos);
  EXPECT_EQ(out["infra_retry"]["charged"], false);
  EXPECT_EQ(out["infra_retry"]["second_error"]["type"], "OutOfMemoryError");
  EXPECT_TRUE(out.contains("policies"));
}
