// The verdict of one evaluation under both torch-compute policies, when one run determines it.
//
// The policies differ in exactly three rules, all strict-only: the screen's `torch-compute`
// (a warning under hybrid), the judge's record of torch operators computing part of the answer
// (judge.torch_ops; a `torch-compute` reject under strict), a non-Triton compute kernel in the
// profiled (timed) calls (also `torch-compute`), and a Triton share (PR) under 20%
// (`low-triton-share`). Every other check runs and decides the same way under both. So a hybrid
// run determines the strict verdict (rejected when any strict-only rule fires, else the same),
// and a strict run determines the hybrid one unless a strict-only rule stopped it before the
// other checks ran (then it is null: only a hybrid run can say). `kgym eval` reports both
// policies from one hybrid run this way, at no extra GPU time.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym::check {

// Under strict, a profiled Triton share (PR) below this is rejected (`low-triton-share`).
inline constexpr double kStrictMinTritonShare = 0.2;

// The profiled kernels that are neither the candidate's Triton kernels nor data movement
// (copies, fills): compute that strict refuses wherever it runs, in the timed calls too.
std::vector<std::string> non_triton_compute_kernels(const nlohmann::json& profile);

// {"strict": verdict, "hybrid": verdict or null}, verdict = {status, correct, hacked, reasons}
// where reasons are the strict-only rules that decided it. `ran_under`: the job's policy.
nlohmann::json policy_verdicts(const nlohmann::json& result, const std::string& ran_under);

}  // namespace kgym::check
