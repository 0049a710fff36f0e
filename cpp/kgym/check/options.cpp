#include "kgym/check/options.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kgym::check {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw std::invalid_argument(fmt::format("{}: {}", field, why));
}

OptionSpec choice(std::string name, std::vector<std::string> choices, std::string fallback,
                  std::string help, bool service, std::string cli) {
  OptionSpec s;
  s.name = std::move(name);
  s.kind = OptionKind::kChoice;
  s.fallback = std::move(fallback);
  s.choices = std::move(choices);
  s.help = std::move(help);
  s.service = service;
  s.cli = std::move(cli);
  return s;
}

OptionSpec number(std::string name, OptionKind kind, json fallback, double min, double max,
                  std::string help, bool service, std::string cli) {
  OptionSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.fallback = std::move(fallback);
  s.min = min;
  s.max = max;
  s.help = std::move(help);
  s.service = service;
  s.cli = std::move(cli);
  return s;
}

OptionSpec boolean(std::string name, bool fallback, std::string help, bool service,
                   std::string cli) {
  OptionSpec s;
  s.name = std::move(name);
  s.kind = OptionKind::kBoolean;
  s.fallback = fallback;
  s.help = std::move(help);
  s.service = service;
  s.cli = std::move(cli);
  return s;
}

// Binds an option to a CheckJob member of a plain type.
template <typename T>
OptionSpec bound(OptionSpec s, T CheckJob::*member) {
  s.set = [member](CheckJob& job, const json& v) { job.*member = v.get<T>(); };
  s.get = [member](const CheckJob& job) { return json(job.*member); };
  return s;
}

template <typename T>
OptionSpec bound_timing(OptionSpec s, T TimingOptions::*member) {
  s.set = [member](CheckJob& job, const json& v) { job.timing.*member = v.get<T>(); };
  s.get = [member](const CheckJob& job) { return json(job.timing.*member); };
  return s;
}

OptionSpec bound_tolerance(OptionSpec s, std::optional<double> CheckJob::*member) {
  s.set = [member](CheckJob& job, const json& v) {
    job.*member = v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
  };
  s.get = [member](const CheckJob& job) {
    return (job.*member) ? json(*(job.*member)) : json(nullptr);
  };
  return s;
}

std::vector<OptionSpec> make_table() {
  constexpr auto kInt = OptionKind::kInteger;
  constexpr auto kNum = OptionKind::kNumber;
  std::vector<OptionSpec> t;
  t.push_back(bound(choice("device", {"auto", "cpu", "cuda"}, "auto",
                           "where the candidate runs: auto (a GPU when one is visible), cpu "
                           "(Triton's interpreter, no timing) or cuda",
                           true, "device"),
                    &CheckJob::device));
  t.push_back(bound(choice("sizes", {"auto", "cpu", "gpu"}, "auto",
                           "task sizes: auto picks the task's CPU sizes on a CPU and its GPU "
                           "sizes on a GPU",
                           true, "sizes"),
                    &CheckJob::sizes));
  t.push_back(bound(
      number("trials", kInt, 5, 1, 100,
             "correctness trials, each on fresh inputs from the OS's entropy", true, "trials"),
      &CheckJob::trials));
  t.push_back(bound(
      number("seed", kInt, 0, 0, 2147483647.0,
             "seed of the weights' initialisation (inputs are never seeded by it)", true, "seed"),
      &CheckJob::seed));
  {
    auto s = choice("extract", {"auto", "last_python_block", "answer_tag", "whole"}, "auto",
                    "how the code is found in the candidate text (auto: a fenced block or an "
                    "<answer> tag, else the whole text)",
                    false, "extract");
    s.set = [](CheckJob& job, const json& v) {
      job.extract_rule = *text::parse_extract_rule(v.get<std::string>());
    };
    s.get = [](const CheckJob& job) { return json(text::extract_rule_name(job.extract_rule)); };
    t.push_back(std::move(s));
  }
  t.push_back(bound_tolerance(
      number("atol", kNum, nullptr, 0, 1e30, "absolute tolerance of the comparison", false, "atol"),
      &CheckJob::atol));
  t.push_back(bound_tolerance(
      number("rtol", kNum, nullptr, 0, 1e30, "relative tolerance of the comparison", false, "rtol"),
      &CheckJob::rtol));
  {
    auto s = choice("baseline", {"eager", "compile", "both", "none"}, "eager",
                    "timing baseline: PyTorch eager, torch.compile, both, or none (no timing)",
                    true, "baseline");
    s.set = [](CheckJob& job, const json& v) {
      const auto name = v.get<std::string>();
      job.timing.enabled = name != "none";
      if (name != "none") job.timing.baseline = name;
    };
    s.get = [](const CheckJob& job) {
      return json(job.timing.enabled ? job.timing.baseline : std::string("none"));
    };
    t.push_back(std::move(s));
  }
  t.push_back(bound_timing(
      number("timing_budget_ms", kNum, 4000.0, 100, 120000,
             "wall-time budget of the timing loop, milliseconds", true, "timing-budget-ms"),
      &TimingOptions::budget_ms));
  t.push_back(bound_timing(number("timing_warmup_ms", kNum, 25.0, 0, 10000,
                                  "warm-up per function before sampling, milliseconds", false, ""),
                           &TimingOptions::warmup_ms));
  t.push_back(bound_timing(number("timing_min_samples", kInt, 20, 3, 100000,
                                  "samples per function before the loop may stop", false, ""),
                           &TimingOptions::min_samples));
  t.push_back(
      bound_timing(number("timing_max_samples", kInt, 200, 3, 100000,
                          "samples per function at most (>= timing_min_samples)", false, ""),
                   &TimingOptions::max_samples));
  t.push_back(
      bound_timing(number("timing_target_rel_ci", kNum, 0.01, 1e-6, 1,
                          "stop once the median's 95% CI is this tight (relative)", false, ""),
                   &TimingOptions::target_rel_ci));
  t.push_back(
      bound_timing(number("timing_batch_ms", kNum, 10.0, 0.1, 1000,
                          "a timing sample lasts about this long (several calls)", false, ""),
                   &TimingOptions::batch_ms));
  t.push_back(
      bound_timing(number("timing_verify_fraction", kNum, 1.0, 0.01, 1,
                          "share of timed candidate calls whose outputs are checked", false, ""),
                   &TimingOptions::verify_fraction));
  t.push_back(
      bound(boolean("profile", true, "profile the candidate (PR, kernel table)", true, "profile"),
            &CheckJob::profile));
  t.push_back(bound(
      boolean("screen", true, "the static screen (off only for research on the runtime guards)",
              true, "screen"),
      &CheckJob::screen));
  t.push_back(bound(choice("torch_compute", {"strict", "hybrid"}, "strict",
                           "strict: the work is done by Triton kernels; hybrid: torch compute "
                           "is allowed beside Triton kernels that matter",
                           true, "torch-compute"),
                    &CheckJob::torch_compute));
  t.push_back(bound(choice("inputs", {"robust", "task"}, "robust",
                           "robust: correct on the task's inputs and on stress sets the judge "
                           "derives from them (scaled x1e3, x1e-3 and by a drawn power of ten, "
                           "offset, far, "
                           "sign-flipped and shifted where one-signed, special values, mostly "
                           "zeros, other sizes; sets a graded call passed come back in timed "
                           "slots); task: on the task's own inputs only, as KernelBench",
                           true, "inputs"),
                    &CheckJob::inputs));
  t.push_back(bound(choice("precision", {"faithful", "tolerant"}, "faithful",
                           "faithful: a float32 task is computed in float32 or tf32 (fp16, "
                           "bf16 and fp8 compute rejected); tolerant: any precision, reported",
                           true, "precision"),
                    &CheckJob::precision));
  // Not a service option: on a shared GPU, one client's slack is the other jobs' shortage.
  t.push_back(bound(number("gpu_memory_slack_mib", kInt, 4096, 0, 1048576,
                           "GPU memory (MiB) the candidate's processes may hold beyond what the "
                           "reference's runner holds (or more: twice a reference call's working "
                           "memory and the decoy check's copy, or as much again as that runner); "
                           "beyond it the candidate is killed and rejected (gpu-memory)",
                           false, "gpu-memory-slack-mib"),
                    &CheckJob::gpu_memory_slack_mib));
  // The job's limits as a whole, from the kernel: the operator's (serve and worker flags), never
  // a client's. A job over one ends runtime_error with a resource_limit.
  auto host = [](OptionSpec s) {
    s.host = true;
    return s;
  };
  t.push_back(host(bound(number("memory_limit_mib", kInt, 32768, 64, 4194304,
                                "host memory (MiB, swap included) of the job's processes "
                                "together: the judge, the task code, both runners and what they "
                                "start (its cgroup; the job directory's tmpfs counts too)",
                                false, "memory-limit-mib"),
                         &CheckJob::memory_limit_mib)));
  t.push_back(host(
      bound(number("pids_limit", kInt, 2048, 32, 4194304,
                   "processes and threads of the job together (its cgroup)", false, "pids-limit"),
            &CheckJob::pids_limit)));
  t.push_back(host(bound(number("cpu_weight", kInt, 100, 1, 10000,
                                "the job's CPU weight against other jobs (100: an equal share; "
                                "its cgroup)",
                                false, "cpu-weight"),
                         &CheckJob::cpu_weight)));
  t.push_back(host(bound(number("disk_limit_mib", kInt, 2048, 16, 1048576,
                                "size of the job's writable directory (MiB; a tmpfs of its own "
                                "when the supervisor runs as root)",
                                false, "disk-limit-mib"),
                         &CheckJob::disk_limit_mib)));
  t.push_back(host(bound(number("gpu_memory_share_mib", kInt, 0, 0, 1048576,
                                "GPU memory (MiB) the job's processes may hold together, read "
                                "from the driver (0: the GPU's memory divided by the jobs that "
                                "share the GPU)",
                                false, "gpu-memory-share-mib"),
                         &CheckJob::gpu_memory_share_mib)));
  t.push_back(bound(number("timeout_s", kNum, 300.0, 1, 1800,
                           "wall-time limit of the evaluation, seconds", true, "timeout"),
                    &CheckJob::timeout_seconds));
  {
    auto s =
        number("priority", kInt, 0, -1000, 1000, "queue priority (higher runs sooner)", true, "");
    s.job = false;
    t.push_back(std::move(s));
  }
  return t;
}

std::string kind_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::kInteger:
      return "integer";
    case OptionKind::kNumber:
      return "number";
    case OptionKind::kBoolean:
      return "boolean";
    case OptionKind::kChoice:
      return "choice";
  }
  return "?";
}

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = make_table();
  return table;
}

const OptionSpec* find_option(const std::string& name) {
  const auto& t = option_table();
  const auto it = std::find_if(t.begin(), t.end(), [&](const auto& s) { return s.name == name; });
  return it == t.end() ? nullptr : &*it;
}

json validated_option(const OptionSpec& spec, const json& value, const std::string& where) {
  const std::string field = where + spec.name;
  if (value.is_null()) return spec.fallback;
  switch (spec.kind) {
    case OptionKind::kBoolean:
      if (!value.is_boolean()) bad(field, "must be true or false");
      return value;
    case OptionKind::kChoice:
      if (!value.is_string() || std::find(spec.choices.begin(), spec.choices.end(),
                                          value.get<std::string>()) == spec.choices.end()) {
        bad(field, fmt::format("must be one of {}", fmt::join(spec.choices, ", ")));
      }
      return value;
    case OptionKind::kInteger: {
      if (!value.is_number_integer()) bad(field, "must be an integer");
      const double x = value.is_number_unsigned() ? static_cast<double>(value.get<std::uint64_t>())
                                                  : static_cast<double>(value.get<long long>());
      if (x < spec.min || x > spec.max) {
        bad(field, fmt::format("must be between {} and {}", spec.min, spec.max));
      }
      return value;
    }
    case OptionKind::kNumber: {
      if (!value.is_number()) bad(field, "must be a number");
      const double x = value.get<double>();
      if (!std::isfinite(x) || x < spec.min || x > spec.max) {
        bad(field, fmt::format("must be between {} and {}", spec.min, spec.max));
      }
      return value;
    }
  }
  return value;
}

void apply_options(CheckJob& job, const json& options, const std::string& where,
                   bool service_only) {
  for (const auto& spec : option_table()) {
    if (!spec.job || (service_only && !spec.service)) continue;
    const auto it = options.find(spec.name);
    if (it == options.end()) continue;
    spec.set(job, validated_option(spec, *it, where));
  }
  if (job.timing.max_samples < job.timing.min_samples) {
    bad(where + "timing_max_samples", "must be at least timing_min_samples");
  }
}

json options_of(const CheckJob& job, bool service_only) {
  json out = json::object();
  for (const auto& spec : option_table()) {
    if (spec.job && (!service_only || spec.service)) out[spec.name] = spec.get(job);
  }
  return out;
}

json options_schema(bool service_only) {
  json properties = json::object();
  for (const auto& spec : option_table()) {
    if (service_only && !spec.service) continue;
    json p = {{"description", spec.help}};
    switch (spec.kind) {
      case OptionKind::kBoolean:
        p["type"] = "boolean";
        break;
      case OptionKind::kChoice:
        p["enum"] = spec.choices;
        break;
      case OptionKind::kInteger:
      case OptionKind::kNumber:
        p["type"] = spec.kind == OptionKind::kInteger ? "integer" : "number";
        p["minimum"] = spec.min;
        p["maximum"] = spec.max;
        if (spec.kind == OptionKind::kInteger) {
          p["minimum"] = static_cast<long long>(spec.min);
          p["maximum"] = static_cast<long long>(spec.max);
        }
        break;
    }
    if (!spec.fallback.is_null()) p["default"] = spec.fallback;
    properties[spec.name] = std::move(p);
  }
  return properties;
}

json option_table_json() {
  json out = json::array();
  for (const auto& spec : option_table()) {
    out.push_back({{"name", spec.name},
                   {"kind", kind_name(spec.kind)},
                   {"default", spec.fallback},
                   {"min", spec.kind == OptionKind::kInteger || spec.kind == OptionKind::kNumber
                               ? json(spec.min)
                               : json(nullptr)},
                   {"max", spec.kind == OptionKind::kInteger || spec.kind == OptionKind::kNumber
                               ? json(spec.max)
                               : json(nullptr)},
                   {"choices", spec.choices},
                   {"help", spec.help},
                   {"service", spec.service},
                   {"job", spec.job},
                   {"host", spec.host},
                   {"cli", spec.cli}});
  }
  return out;
}

}  // namespace kgym::check
