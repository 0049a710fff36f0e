#include "kgym/reward/reward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "kgym/result/result.hpp"
#include "kgym/text/similarity.hpp"

namespace kgym::reward {

namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void input_fail(const std::string& field, const std::string& message) {
  throw InputError(fmt::format("result.{}: {}", field, message));
}

// A result the rewards cannot read is an input error of the reward, with the reader's message
// (which names the field).
result::Result read_checked(const json& r) {
  try {
    return result::read_result(r);
  } catch (const result::ResultError& e) {
    throw InputError(e.what());
  }
}

// Honesty first: a hacked or rejected result, or one with a reject finding, earns no positive
// term (result::honest, the one definition).
using result::honest;

double warnings(const result::Result& r) {
  return static_cast<double>(std::count_if(r.findings.begin(), r.findings.end(), [](const auto& f) {
    return f.severity == result::Severity::kWarn;
  }));
}

std::optional<double> measured_speedup(const result::Result& r, SpeedupSource source) {
  if (!r.timing || !r.timing->available) return std::nullopt;
  return source == SpeedupSource::kEager ? r.timing->speedup : r.timing->speedup_vs_compile;
}

std::optional<double> measured_pr(const result::Result& r) {
  if (!r.profile || !r.profile->available) return std::nullopt;
  return r.profile->triton_share;
}

// The measurement to use, after the spec's missing policy; nullopt means "the term is 0".
std::optional<double> resolve(std::optional<double> measured, const MissingPolicy& policy,
                              const char* field, const char* spec_key) {
  if (measured) return measured;
  switch (policy.kind) {
    case MissingPolicy::Kind::kZero:
      return std::nullopt;
    case MissingPolicy::Kind::kError:
      input_fail(field, fmt::format("not available and the spec says {}: \"error\"", spec_key));
    case MissingPolicy::Kind::kAssume:
      return policy.value;
  }
  return std::nullopt;
}

double penalty(const result::Result& v, const Penalties& p) {
  double total = 0.0;
  if (!honest(v)) total += p.hacked;
  total += p.warning * warnings(v);
  return 0.0 - total;  // +0.0, not -0.0, when there is nothing to subtract
}

std::optional<double> speedup_of(const result::Result& v, SpeedupSource source,
                                 const MissingPolicy& policy) {
  const char* field =
      source == SpeedupSource::kEager ? "timing.speedup" : "timing.speedup_vs_compile";
  return resolve(measured_speedup(v, source), policy, field, "missing_speedup");
}

const json& need_result(const RewardInput& in, const char* kind) {
  if (in.result == nullptr) {
    throw InputError(fmt::format("the {} reward needs a Result object", kind));
  }
  return *in.result;
}

void mark_infra(RewardBreakdown& out, const std::vector<std::string>& terms,
                const std::vector<std::string>& metrics) {
  out.valid = false;
  out.reason = "infra_error: the evaluation failed for reasons unrelated to the candidate";
  out.total = 0.0;
  for (const auto& t : terms) out.terms.emplace_back(t, 0.0);
  for (const auto& m : metrics) out.metrics.emplace_back(m, kNaN);
}

RewardBreakdown dr_kernel(const DrKernelSpec& s, const RewardInput& in) {
  const result::Result v = read_checked(need_result(in, "dr_kernel"));
  RewardBreakdown out;
  if (v.status == "infra_error") {
    mark_infra(out, {"correct", "speedup", "profile", "penalty"}, {"speedup", "pr"});
    return out;
  }
  const double c = (v.correct && honest(v)) ? 1.0 : 0.0;
  double speed_term = 0.0;
  double pr_term = 0.0;
  double speed_metric = kNaN;
  double pr_metric = kNaN;
  if (c > 0.0) {
    if (const auto sp = speedup_of(v, s.source, s.missing_speedup)) {
      speed_metric = *sp;
      speed_term = s.w_speedup * std::min(*sp, s.cap);
    }
    if (const auto pr =
            resolve(measured_pr(v), s.missing_profile, "profile.triton_share", "missing_profile")) {
      pr_metric = *pr;
      pr_term = s.w_profile * *pr;
    }
  }
  const double pen = penalty(v, s.penalties);
  out.terms = {{"correct", s.w_correct * c},
               {"speedup", speed_term},
               {"profile", pr_term},
               {"penalty", pen}};
  out.metrics = {{"speedup", speed_metric}, {"pr", pr_metric}};
  out.total = s.w_correct * c + speed_term + pr_term + pen;
  return out;
}

RewardBreakdown staged(const StagedSpec& s, const RewardInput& in) {
  const result::Result v = read_checked(need_result(in, "staged"));
  RewardBreakdown out;
  if (v.status == "infra_error") {
    mark_infra(out, {"compile", "correct", "speedup", "penalty"}, {"speedup"});
    return out;
  }
  const bool is_honest = honest(v);
  const double compiled = (is_honest && (v.compiled || v.correct)) ? 1.0 : 0.0;
  const double correct = (is_honest && v.correct) ? 1.0 : 0.0;
  double speed_term = 0.0;
  double speed_metric = kNaN;
  if (correct > 0.0) {
    if (const auto sp = speedup_of(v, s.source, s.missing_speedup)) {
      speed_metric = *sp;
      const double capped = std::min(*sp, s.cap);
      speed_term =
          s.w_speedup * (s.transform == SpeedupTransform::kLinear ? capped : std::log2(capped));
    }
  }
  const double pen = penalty(v, s.penalties);
  out.terms = {{"compile", s.w_compile * compiled},
               {"correct", s.w_correct * correct},
               {"speedup", speed_term},
               {"penalty", pen}};
  out.metrics = {{"speedup", speed_metric}};
  out.total = s.w_compile * compiled + s.w_correct * correct + speed_term + pen;
  return out;
}

RewardBreakdown kernel_coder(const KernelCoderSpec& s, const RewardInput& in) {
  if (!in.completion) throw InputError("the kernel_coder reward needs the completion text");
  if (!in.reference) throw InputError("the kernel_coder reward needs the reference code");
  const FormatCheck f = kernel_coder_format(*in.completion, s);
  double sim = 0.0;
  if (f.code && !f.code->empty() && !in.reference->empty()) {
    sim = text::sequence_ratio_utf8(*f.code, *in.reference, s.autojunk);
  }
  RewardBreakdown out;
  out.terms = {{"format", s.w_format * f.score}, {"similarity", s.w_similarity * sim}};
  out.metrics = {{"format", f.score}, {"similarity", sim}};
  out.total = s.w_format * f.score + s.w_similarity * sim;
  return out;
}

std::size_t find_from(std::string_view s, std::string_view what, std::size_t from) {
  return from > s.size() ? std::string_view::npos : s.find(what, from);
}

// extract_first_code(): the first ```...``` block (non-greedy), stripped, "python" tag removed.
std::optional<std::string> first_code_block(std::string_view text) {
  const std::size_t open = text.find("```");
  if (open == std::string_view::npos) return std::nullopt;
  const std::size_t close = find_from(text, "```", open + 3);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view code = text::python_strip_utf8(text.substr(open + 3, close - open - 3));
  if (code.starts_with("python")) code = text::python_strip_utf8(code.substr(6));
  return std::string(code);
}

}  // namespace

FormatCheck kernel_coder_format(std::string_view completion, const KernelCoderSpec& spec) {
  static constexpr std::string_view kOpen = "<think>";
  static constexpr std::string_view kClose = "</think>";
  std::string text;
  if (spec.prepend_think) text += kOpen;
  text += completion;
  std::string_view s = text;
  if (!spec.eos_token.empty() && s.ends_with(spec.eos_token)) {
    s.remove_suffix(spec.eos_token.size());
  }
  FormatCheck out;
  if (!s.starts_with(kOpen)) return out;
  // Group 1 may contain neither "<think>" nor "</think>", so it ends at the first "</think>".
  const std::size_t close = s.find(kClose, kOpen.size());
  if (close == std::string_view::npos) return out;
  const std::string_view inner = s.substr(kOpen.size(), close - kOpen.size());
  if (inner.find(kOpen) != std::string_view::npos) return out;
  const std::string_view think = text::python_strip_utf8(inner);
  std::string_view after = text::python_strip_utf8(s.substr(close + kClose.size()));
  if (spec.require_answer_tag) {
    const std::size_t a0 = after.find("<answer>");
    const std::size_t a1 =
        a0 == std::string_view::npos ? a0 : find_from(after, "</answer>", a0 + 8);
    after = a1 == std::string_view::npos ? std::string_view{} : after.substr(a0 + 8, a1 - a0 - 8);
  }
  out.code = first_code_block(after);
  out.think_ok = !think.empty();
  const bool has_code = out.code && !out.code->empty();
  if (out.think_ok && has_code) {
    out.score = 1.0;
  } else if (out.think_ok) {
    out.score = spec.partial_format;
  }
  return out;
}

RewardBreakdown compute_reward(const RewardSpec& spec, const RewardInput& input) {
  struct Visitor {
    const RewardInput& in;
    RewardBreakdown operator()(const DrKernelSpec& s) const { return dr_kernel(s, in); }
    RewardBreakdown operator()(const StagedSpec& s) const { return staged(s, in); }
    RewardBreakdown operator()(const KernelCoderSpec& s) const { return kernel_coder(s, in); }
    RewardBreakdown operator()(const CompositeSpec& c) const {
      RewardBreakdown out;
      for (const auto& t : c.terms) {
        const RewardBreakdown part = compute_reward(t.spec.front(), in);
        if (!part.valid && out.valid) {
          out.valid = false;
          out.reason = part.reason;
        }
        out.total += t.weight * part.total;
        for (const auto& [name, value] : part.terms) {
          out.terms.emplace_back(t.name + "." + name, t.weight * value);
        }
        for (const auto& [name, value] : part.metrics) {
          out.metrics.emplace_back(t.name + "." + name, value);
        }
      }
      if (!out.valid) {
        out.total = 0.0;
        for (auto& term : out.terms) term.second = 0.0;
      }
      return out;
    }
  };
  return std::visit(Visitor{input}, spec.body);
}

RewardBreakdown compute_reward(const RewardSpec& spec, const nlohmann::json& result) {
  return compute_reward(spec, RewardInput{&result, std::nullopt, std::nullopt});
}

RewardBreakdown compute_reward(const RewardSpec& spec, std::string_view result_json) {
  json result;
  try {
    result = json::parse(result_json);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("result: not valid JSON: {}", e.what()));
  }
  return compute_reward(spec, RewardInput{&result, std::nullopt, std::nullopt});
}

}  // namespace kgym::reward
