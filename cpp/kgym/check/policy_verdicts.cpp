#include "kgym/check/policy_verdicts.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kgym::check {
namespace {

using nlohmann::json;

bool strict_only_rule(const std::string& rule) {
  return rule == "torch-compute" || rule == "low-triton-share";
}

void add_reason(std::vector<std::string>& reasons, const std::string& rule) {
  if (std::find(reasons.begin(), reasons.end(), rule) == reasons.end()) reasons.push_back(rule);
}

json verdict(const json& r, std::vector<std::string> reasons) {
  return {{"status", r.value("status", "infra_error")},
          {"correct", r.value("correct", false)},
          {"hacked", r.value("hacked", false)},
          {"reasons", std::move(reasons)}};
}

json rejected(std::vector<std::string> reasons) {
  return {{"status", "rejected"},
          {"correct", false},
          {"hacked", true},
          {"reasons", std::move(reasons)}};
}

const json& findings_of(const json& r) {
  static const json empty = json::array();
  const auto it = r.find("findings");
  return it != r.end() && it->is_array() ? *it : empty;
}

// What strict would add to a hybrid run's Result.
std::vector<std::string> strict_reasons(const json& r) {
  std::vector<std::string> reasons;
  for (const auto& f : findings_of(r)) {
    if (f.is_object() && f.value("rule", "") == "torch-compute")
      add_reason(reasons, "torch-compute");
  }
  const json judge = r.value("judge", json(nullptr));
  if (judge.is_object() && judge.contains("torch_ops") && judge["torch_ops"].is_array() &&
      !judge["torch_ops"].empty()) {
    add_reason(reasons, "torch-compute");
  }
  const json profile = r.value("profile", json(nullptr));
  if (!non_triton_compute_kernels(profile).empty()) add_reason(reasons, "torch-compute");
  if (profile.is_object() && profile.value("available", false) &&
      profile.contains("triton_share") && profile["triton_share"].is_number() &&
      profile["triton_share"].get<double>() < kStrictMinTritonShare) {
    add_reason(reasons, "low-triton-share");
  }
  return reasons;
}

}  // namespace

std::vector<std::string> non_triton_compute_kernels(const json& profile) {
  std::vector<std::string> names;
  if (!profile.is_object() || !profile.value("available", false)) return names;
  const auto kernels = profile.value("kernels", json::array());
  if (!kernels.is_array()) return names;
  for (const auto& k : kernels) {
    if (!k.is_object() || k.value("triton", false)) continue;
    std::string name = k.value("name", "");
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // torch's copies and fills (contiguous(), zeros, a cast): moving data, not computing.
    const bool moves_data =
        lower.find("copy") != std::string::npos || lower.find("memcpy") != std::string::npos ||
        lower.find("memset") != std::string::npos || lower.find("fill") != std::string::npos;
    if (!moves_data && names.size() < 16) names.push_back(std::move(name));
  }
  return names;
}

json policy_verdicts(const json& r, const std::string& ran_under) {
  if (ran_under == "hybrid") {
    auto reasons = strict_reasons(r);
    return {{"hybrid", verdict(r, {})},
            {"strict", reasons.empty() ? verdict(r, {}) : rejected(std::move(reasons))}};
  }
  std::vector<std::string> strict_only, others;
  for (const auto& f : findings_of(r)) {
    if (!f.is_object() || f.value("severity", "") != "reject") continue;
    const auto rule = f.value("rule", "");
    add_reason(strict_only_rule(rule) ? strict_only : others, rule);
  }
  json hybrid = nullptr;  // unknown: strict stopped before the checks hybrid would still run
  if (strict_only.empty()) {
    hybrid = verdict(r, {});
  } else if (!others.empty()) {
    hybrid = rejected({});  // by rules both policies share: none of the reasons is strict-only
  }
  return {{"strict", verdict(r, strict_only)}, {"hybrid", hybrid}};
}

}  // namespace kgym::check
