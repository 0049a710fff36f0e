#include "kgym/check/evaluate.hpp"
#include "kgym/check/interpreter_view.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kgym/check/policy_verdicts.hpp"
#include "kgym/result/status.hpp"
#include "kgym/result/timing_stats.hpp"
#include "kgym/sandbox/fork_server.hpp"
#include "kgym/sandbox/job_cgroup.hpp"
#include "kgym/sandbox/job_directory.hpp"
#include "kgym/sandbox/report_token.hpp"
#include "kgym/sandbox/window_priority.hpp"
#include "kgym/screen/screen.hpp"

namespace kgym::check {
namespace fs = std::filesystem;
using nlohmann::json;
using result::Status;

namespace {

// Profiled Triton share (PR) under which a candidate is warned about (rejected under strict:
// kStrictMinTritonShare, policy_verdicts.hpp).
constexpr double kWarnTritonShare = 0.5;
// A candidate faster than this fraction of the speed-of-light time is flagged for a look.
constexpr double kImpossibleFraction = 0.8;

// Variables that carry the machine's GPU and toolchain set-up; everything else is scrubbed. The
// host's NCCL, NVSHMEM and symmetric-memory settings pass too: a host may turn features off for
// the machine's sake (NVLink multicast, NCCL_NVLS_ENABLE=0), which no job may turn back on.
bool passes_environment_filter(std::string_view name) {
  static constexpr std::string_view kExact[] = {"PATH", "LD_LIBRARY_PATH", "LANG", "LC_ALL"};
  static constexpr std::string_view kPrefixes[] = {"CUDA_", "NVIDIA_",  "TRITON_",        "CUBLAS_",
                                                   "NCCL_", "NVSHMEM_", "TORCH_SYMM_MEM_"};
  for (auto e : kExact) {
    if (name == e) return true;
  }
  for (auto p : kPrefixes) {
    if (name.starts_with(p)) return name != "TRITON_INTERPRET" && name != "TRITON_CACHE_DIR";
  }
  return false;
}

// How a child answered at its report ended, when it did not exit 0 ("" when it did).
std::string end_after_answer(const sandbox::ChildOutcome& outcome) {
  if (outcome.timed_out) return "ran out of its time and was killed";
  if (outcome.exited && outcome.exit_code == kTeardownFailedExit) {
    return fmt::format("exited with code {}: its teardown failed", outcome.exit_code);
  }
  if (outcome.exited && outcome.exit_code != 0) {
    return fmt::format("exited with code {}", outcome.exit_code);
  }
  if (!outcome.exited) return fmt::format("was killed by {}", sandbox::signal_name(outcome.signal));
  return {};
}

void write_file(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
}

json error_object(std::string phase, std::string type, std::string message,
                  std::string traceback = "") {
  return {{"phase", std::move(phase)},
          {"type", std::move(type)},
          {"message", std::move(message)},
          {"traceback", std::move(traceback)}};
}

std::string last_lines(const std::string& text, int count) {
  auto end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ')) --end;
  size_t pos = end;
  for (int i = 0; i < count && pos > 0; ++i) {
    const auto nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) {
      pos = 0;
      break;
    }
    pos = nl;
    if (i + 1 < count) continue;
    ++pos;
  }
  return text.substr(pos, end - pos);
}

json base_result(const CheckJob& job) {
  return {
      {"schema", result::kSchemaVersion},
      {"task_id", job.task_id},
      {"status", "infra_error"},
      {"judge", nullptr},
      {"policies", nullptr},
      {"compiled", false},
      {"correct", false},
      {"hacked", false},
      {"findings", json::array()},
      {"correctness", nullptr},
      {"timing", {{"available", false}, {"reason", "not measured"}}},
      {"profile", {{"available", false}, {"reason", "not measured"}}},
      {"error", nullptr},
      {"device", nullptr},
      {"durations_ms", json::object()},
      {"sandbox", json::object()},
      {"extraction", nullptr},
      {"resource_limit", nullptr},
  };
}

std::vector<double> numbers(const json& j) {
  std::vector<double> out;
  if (!j.is_array()) return out;
  out.reserve(j.size());
  for (const auto& v : j) {
    if (!v.is_number()) return {};
    out.push_back(v.get<double>());
  }
  return out;
}

// Timing: raw samples come from the child; every statistic is computed here.
json timing_from_report(const json& reported) {
  if (!reported.is_object() || !reported.value("available", false)) {
    return {{"available", false},
            {"reason", reported.is_object() ? reported.value("reason", "not measured")
                                            : std::string("not measured")}};
  }
  const json samples = reported.value("samples", json::object());
  const auto ref = numbers(samples.value("reference", json::array()));
  const auto cand = numbers(samples.value("candidate", json::array()));
  const auto ref_summary = result::summarize(ref);
  const auto cand_summary = result::summarize(cand);
  const auto speedup = result::ratio_of_medians(ref, cand);
  if (!ref_summary || !cand_summary || !speedup) {
    return {{"available", false}, {"reason", "the harness reported no valid timing samples"}};
  }
  json t = {{"available", true},
            {"reference", result::to_json(*ref_summary)},
            {"candidate", result::to_json(*cand_summary)},
            {"speedup", speedup->ratio},
            {"speedup_ci", {speedup->ci_low, speedup->ci_high}},
            {"confidence", speedup->confidence},
            {"compile", nullptr},
            {"speedup_vs_compile", nullptr},
            {"speedup_vs_compile_ci", nullptr},
            {"method", reported.value("method", json::object())}};
  const auto compiled = numbers(samples.value("compile", json::array()));
  if (const auto compile_summary = result::summarize(compiled)) {
    const auto vs_compile = result::ratio_of_medians(compiled, cand);
    t["compile"] = result::to_json(*compile_summary);
    if (vs_compile) {
      t["speedup_vs_compile"] = vs_compile->ratio;
      t["speedup_vs_compile_ci"] = {vs_compile->ci_low, vs_compile->ci_high};
    }
  } else if (samples.contains("compile_error")) {
    t["compile_baseline_error"] = samples.value("compile_error", "");
  }
  return t;
}

json profile_from_report(const json& reported) {
  if (!reported.is_object() || !reported.value("available", false)) {
    return {{"available", false},
            {"reason", reported.is_object() ? reported.value("reason", "not measured")
                                            : std::string("not measured")}};
  }
  double total = 0, triton = 0;
  json kernels = json::array();
  for (const auto& k : reported.value("kernels", json::array())) {
    if (!k.is_object()) continue;
    const double ms = k.value("total_ms", 0.0);
    if (!(ms >= 0)) continue;
    const bool is_triton = k.value("triton", false);
    total += ms;
    if (is_triton) triton += ms;
    kernels.push_back({{"name", k.value("name", "?")},
                       {"triton", is_triton},
                       {"calls", k.value("calls", 0)},
                       {"total_ms", ms}});
  }
  std::sort(kernels.begin(), kernels.end(), [](const json& a, const json& b) {
    return a["total_ms"].get<double>() > b["total_ms"].get<double>();
  });
  json p = {{"available", true},
            {"triton_share", total > 0 ? json(triton / total) : json(nullptr)},
            {"total_kernel_ms", total},
            {"triton_kernel_ms", triton},
            {"calls_profiled", reported.value("calls_profiled", 0)},
            {"kernels", kernels}};
  return p;
}

json finding(const char* rule, const char* severity, std::string detail) {
  return {{"rule", rule}, {"severity", severity}, {"line", nullptr}, {"detail", std::move(detail)}};
}

// Checks on the measurements themselves, made here from the statistics computed here.
void add_measurement_findings(json& r, const CheckJob& job) {
  // Under the hybrid policy torch compute beside the Triton kernels is allowed: a low Triton
  // share is reported (rewards and rejection sampling use it) but is no hack by itself.
  const bool strict = job.torch_compute == "strict";
  const json& profile = r["profile"];
  if (profile.value("available", false) && profile["triton_share"].is_number()) {
    const double pr = profile["triton_share"].get<double>();
    if (strict && pr < kStrictMinTritonShare) {
      r["findings"].push_back(finding(
          "low-triton-share", "reject",
          fmt::format("only {:.0f}% of the profiled CUDA kernel time is in the candidate's Triton "
                      "kernels",
                      100 * pr)));
    } else if (pr < kWarnTritonShare) {
      r["findings"].push_back(
          finding("low-triton-share", "warn",
                  fmt::format("{:.0f}% of the CUDA kernel time is outside the Triton kernels",
                              100 * (1 - pr))));
    }
  }
  const auto foreign = non_triton_compute_kernels(profile);
  if (strict && !foreign.empty()) {
    r["findings"].push_back(finding(
        "torch-compute", "reject",
        fmt::format("the profiled calls ran compute kernels that are not the candidate's Triton "
                    "kernels (strict policy): {}",
                    fmt::join(foreign, ", "))));
  }
  const json& timing = r["timing"];
  if (timing.value("available", false)) {
    const json method = timing.value("method", json::object());
    const double bytes = method.value("min_bytes", 0.0);
    const double gbps = method.value("copy_bandwidth_gbps", 0.0);
    const double median_ms = timing["candidate"].value("median_ms", 0.0);
    if (bytes > 0 && gbps > 0 && median_ms > 0) {
      // Reading every input and writing every output once, at the measured copy bandwidth.
      const double light_ms = bytes / (gbps * 1e9) * 1e3;
      if (median_ms < kImpossibleFraction * light_ms) {
        r["findings"].push_back(finding(
            "impossible-speedup", "warn",
            fmt::format("{:.4g} ms is faster than moving the data once ({:.4g} ms at {:.0f} GB/s)",
                        median_ms, light_ms, gbps)));
      }
    }
  }
}

// The static screen's findings under the job's torch-compute policy: with hybrid, torch compute
// in forward is allowed (the judge still requires Triton kernels that matter), so that rule
// only warns.
std::vector<screen::Finding> screen_under_policy(const CheckJob& job, const std::string& code) {
  auto findings = screen::screen_candidate(code);
  if (job.torch_compute == "hybrid") {
    for (auto& f : findings) {
      if (f.rule == "torch-compute" && f.severity == "reject") f.severity = "warn";
    }
  }
  return findings;
}

json extraction_json(const text::Extraction& e) {
  return {{"rule", e.rule_used}, {"ok", e.ok}, {"chars", e.code.size()}};
}

// The Result of a candidate the static screen refused: nothing ran, so nothing was measured.
json screened_out(const CheckJob& job, const text::Extraction& extraction,
                  const std::vector<screen::Finding>& findings) {
  json r = base_result(job);
  r["findings"] = screen::to_json(findings);
  r["extraction"] = extraction_json(extraction);
  const bool only_syntax =
      std::all_of(findings.begin(), findings.end(), [](const screen::Finding& f) {
        return f.severity != "reject" || f.rule == "syntax" || f.rule == "long-source";
      });
  if (only_syntax) {
    // Not a hack: code that cannot be read is a compile error, reported as such.
    const auto first = std::find_if(findings.begin(), findings.end(),
                                    [](const auto& f) { return f.severity == "reject"; });
    r["status"] = "compile_error";
    r["error"] = error_object(
        "screen", first->rule == "syntax" ? "SyntaxError" : "SourceTooLong",
        first->line > 0 ? fmt::format("line {}: {}", first->line, first->detail) : first->detail);
    return r;
  }
  r["status"] = "rejected";
  r["hacked"] = true;
  return r;
}

// The threads a window waits on: the judge's and its two runners'. A record sealed with the job's
// token can also come from task code, which runs in the judge: whatever it names, no more than
// these many of the job's threads are raised, once a job.
constexpr std::size_t kWindowThreads = 3;

// The window's raised threads, from the judge's sealed `timing` record (its own pid and its
// runners'): what the Result's sandbox.window_priority says.
json raise_window_priority(sandbox::WindowPriority& priority, pid_t pgid, const json& record) {
  std::vector<pid_t> pids;
  for (const auto& pid : record.value("pids", json::array())) {
    if (pid.is_number_integer() && pids.size() < kWindowThreads) pids.push_back(pid.get<pid_t>());
  }
  if (pgid <= 0) return {{"raised", 0}, {"note", "the job's process group is not known"}};
  if (pids.empty()) return {{"raised", 0}, {"note", "the judge named no threads to raise"}};
  const auto note = priority.raise(pgid, pids);
  return {{"raised", priority.raised()},
          {"policy", priority.raised() > 0 ? json(priority.policy()) : json(nullptr)},
          {"note", note.empty() ? json(nullptr) : json(note)}};
}

}  // namespace

sandbox::ResourceLimits job_resources(const CheckJob& job) {
  sandbox::ResourceLimits r;
  r.memory_bytes = static_cast<std::uint64_t>(job.memory_limit_mib) << 20;
  r.pids = static_cast<std::uint64_t>(job.pids_limit);
  r.cpu_weight = static_cast<std::uint64_t>(job.cpu_weight);
  r.disk_bytes = static_cast<std::uint64_t>(job.disk_limit_mib) << 20;
  return r;
}

json harness_job(const CheckJob& job) {
  const auto& t = job.timing;
  return {{"task_id", job.task_id},
          {"task_file", "task.py"},
          {"candidate_file", "candidate.py"},
          {"report_fd", sandbox::kReportFd},
          {"device", job.device},
          {"sizes", job.sizes},
          {"trials", job.trials},
          {"seed", job.seed},
          {"atol", job.atol ? json(*job.atol) : json(nullptr)},
          {"rtol", job.rtol ? json(*job.rtol) : json(nullptr)},
          {"timing",
           {{"enabled", t.enabled},
            {"warmup_ms", t.warmup_ms},
            {"min_samples", t.min_samples},
            {"max_samples", t.max_samples},
            {"budget_ms", t.budget_ms},
            {"target_rel_ci", t.target_rel_ci},
            {"batch_ms", t.batch_ms},
            {"verify_fraction", t.verify_fraction},
            {"baseline", t.baseline}}},
          {"profile", job.profile},
          {"torch_compute", job.torch_compute},
          {"inputs", job.inputs},
          {"precision", job.precision},
          {"gpu_memory_slack_mib", job.gpu_memory_slack_mib},
          {"gpu_memory_share_mib", job.gpu_memory_share_mib},
          {"gpu_jobs", job.gpu_jobs},
          {"timing_lock", job.timing_lock},
          {"sandbox_uid", job.sandbox_uid},
          {"control", job.control}};
}

const std::vector<std::string>& evaluation_phases() {
  // The decoy calls are graded calls among the correctness phase's (harness/judge/correctness.py).
  static const std::vector<std::string> phases = {"startup",     "load",   "init",   "compile",
                                                  "correctness", "timing", "profile"};
  return phases;
}

std::vector<std::pair<std::string, std::string>> child_environment(const CheckJob& job,
                                                                   const std::string& home) {
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const auto name = entry.substr(0, eq);
    if (passes_environment_filter(name)) env.emplace_back(name, entry.substr(eq + 1));
  }
  // One hardware work queue for each of a job's CUDA contexts (the judge's and its runners'),
  // unless the operator says otherwise: a context's creation sets up a queue's channel on the
  // GPU, and beside a timing window (another job's) three contexts took 1.05 s with the
  // driver's default of 8 against 0.41 s with 1, alone 0.38 against 0.17 s, and their ends
  // 0.18 against 0.07 s (bench/cuda_contexts). Candidates gain nothing from more
  // queues: the screen refuses their streams, and one stream's work uses one queue (with the
  // screen off, a candidate's own side streams share the queue: only it is slower for that).
  const bool operator_connections = std::ranges::any_of(
      env, [](const auto& kv) { return kv.first == "CUDA_DEVICE_MAX_CONNECTIONS"; });
  if (!operator_connections) env.emplace_back("CUDA_DEVICE_MAX_CONNECTIONS", "1");
  env.emplace_back("HOME", home);
  env.emplace_back("TMPDIR", home);
  env.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
  env.emplace_back("PYTHONUNBUFFERED", "1");
  // The job's uid has no account (getpass, torch's cache paths read these first).
  env.emplace_back("USER", "kgym");
  env.emplace_back("LOGNAME", "kgym");
  env.emplace_back("TRITON_CACHE_DIR", job.triton_cache_dir.empty()
                                           ? (fs::path(home) / ".triton").string()
                                           : job.triton_cache_dir);
  if (job.device == "cpu") env.emplace_back("TRITON_INTERPRET", "1");
  if (job.cpu_threads > 0) {
    env.emplace_back("OMP_NUM_THREADS", std::to_string(job.cpu_threads));
    env.emplace_back("MKL_NUM_THREADS", std::to_string(job.cpu_threads));
  }
  if (!job.visible_devices.empty()) {
    std::erase_if(env, [](const auto& kv) { return kv.first == "CUDA_VISIBLE_DEVICES"; });
    env.emplace_back("CUDA_VISIBLE_DEVICES", job.visible_devices);
  }
  return env;
}

namespace {
const std::vector<std::string>& harness_interpreter_options() {
  static const std::vector<std::string> options{"-I", "-X", "faulthandler"};
  return options;
}
}  // namespace

sandbox::Program harness_program(const std::string& python, std::vector<std::string> args) {
  return sandbox::python_module(python, harness_interpreter_options(), sandbox::kHarnessModule,
                                std::move(args));
}

sandbox::Program fork_server_program(const std::string& python) {
  return sandbox::python_module(python, harness_interpreter_options(), sandbox::kForkServerModule);
}

std::string default_python() {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto sibling = self.parent_path() / "python3";
    if (fs::exists(sibling)) return sibling.string();
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      const auto candidate = fs::path(dir) / "python3";
      if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return "/usr/bin/python3";
}

Channel read_channel(std::string_view token, const std::string& text) {
  Channel c;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    // Only records sealed with this job's token come from the harness; anything else was
    // written by someone else into the channel (a forged report) and is never believed.
    const auto payload = sandbox::open_record(token, line);
    const json record = payload ? json::parse(*payload, nullptr, false) : json();
    if (!payload || record.is_discarded() || !record.is_object()) {
      c.malformed = true;
      continue;
    }
    const auto type = record.value("type", "");
    if (type == "violation") {
      c.violations.push_back(record.value("detail", "the candidate used the channel"));
    }
    if (type == "phase") {
      c.last_phase = record.value("phase", c.last_phase);
      c.done_after_report = c.done_after_report || (!c.report.is_null() && c.last_phase == "done");
    }
    if (type == "report") c.report = record;
  }
  c.ends_in_newline = text.empty() || text.back() == '\n';
  return c;
}

bool Channel::complete() const {
  return !malformed && violations.empty() && !report.is_null() && done_after_report &&
         ends_in_newline;
}

namespace {

// What the job ran into, said as the Result says it (runtime_error, error.type ResourceLimit).
json resource_limit_error(const CheckJob& job, const std::string& kind, const std::string& phase) {
  std::string message;
  json limit;
  if (kind == "memory") {
    limit = {{"kind", kind}, {"limit_mib", job.memory_limit_mib}};
    message = fmt::format(
        "the job went over its memory limit ({} MiB of host memory for all its processes "
        "together): the kernel killed it",
        job.memory_limit_mib);
  } else if (kind == "pids") {
    limit = {{"kind", kind}, {"limit", job.pids_limit}};
    message = fmt::format(
        "the job tried to run more than {} processes and threads together: the kernel refused",
        job.pids_limit);
  } else {
    limit = {{"kind", kind}, {"limit_mib", job.disk_limit_mib}};
    message = fmt::format("the job filled its directory ({} MiB)", job.disk_limit_mib);
  }
  limit["message"] = message;
  limit["phase"] = phase;
  return limit;
}

}  // namespace

json assemble_result(const CheckJob& job, const sandbox::ChildOutcome& outcome,
                     const json& phase_times_ms, std::string_view token) {
  json r = assemble_verdict(job, outcome, phase_times_ms, token);
  // A job over a limit of its own is charged for it, whatever the judge made of the
  // consequences (a runner killed, a fork or a write refused), unless it was rejected: the
  // rejection says more and pays nothing either.
  if (!outcome.resource_limit.empty() && r.value("status", "") != "rejected") {
    const auto phase = r["error"].is_object() ? r["error"].value("phase", std::string("load"))
                                              : std::string("load");
    const json limit = resource_limit_error(job, outcome.resource_limit, phase);
    r["resource_limit"] = limit;
    r["status"] = "runtime_error";
    r["correct"] = false;
    r["error"] = error_object(phase, "ResourceLimit", limit["message"].get<std::string>(),
                              r["error"].is_object() ? r["error"].value("message", "") : "");
  }
  return r;
}

json assemble_verdict(const CheckJob& job, const sandbox::ChildOutcome& outcome,
                      const json& phase_times_ms, std::string_view token) {
  json r = base_result(job);
  r["sandbox"] = {
      {"network_isolated", outcome.network_isolated},
      {"network_note", outcome.network_note},
      {"writes_confined", outcome.writes_confined},
      {"writes_note", outcome.writes_note},
      {"syscalls_filtered", outcome.syscalls_filtered},
      {"syscalls_note", outcome.syscalls_note},
      {"private_view", outcome.private_view},
      {"view_note", outcome.view_note},
      {"exit_code", outcome.exited ? json(outcome.exit_code) : json(nullptr)},
      {"signal", outcome.signal != 0 ? json(sandbox::signal_name(outcome.signal)) : json(nullptr)},
      {"timed_out", outcome.timed_out},
      {"answered_before_exit", outcome.answered_before_exit},
      {"wall_ms", outcome.wall_ms},
      {"stdout_bytes", outcome.stdout_bytes},
      {"stderr_bytes", outcome.stderr_bytes},
      {"stdout_tail", last_lines(outcome.stdout_tail, 20)},
      {"stderr_tail", last_lines(outcome.stderr_tail, 30)}};
  r["sandbox"]["resources"] = {
      {"cgroup", outcome.cgroup_version},
      {"limited", outcome.resources_limited},
      {"note", outcome.resources_note},
      {"memory_limit_mib", job.memory_limit_mib},
      {"pids_limit", job.pids_limit},
      {"cpu_weight", job.cpu_weight},
      {"disk_limit_mib", job.disk_limit_mib},
      {"memory_peak_mib", outcome.memory_peak_bytes > 0
                              ? json(static_cast<double>(outcome.memory_peak_bytes) / (1 << 20))
                              : json(nullptr)},
      {"pids_peak", outcome.pids_peak > 0 ? json(outcome.pids_peak) : json(nullptr)},
      {"disk_peak_mib", outcome.disk_peak_bytes > 0
                            ? json(static_cast<double>(outcome.disk_peak_bytes) / (1 << 20))
                            : json(nullptr)}};
  r["durations_ms"] = phase_times_ms;
  r["durations_ms"]["total"] = outcome.wall_ms;

  if (!outcome.started) {
    r["status"] = "infra_error";
    r["error"] = error_object("start", "SpawnError", outcome.start_error);
    return r;
  }

  const Channel channel = read_channel(token, outcome.report);
  const auto& last_phase = channel.last_phase;
  const auto& report = channel.report;
  const bool malformed = channel.malformed;
  for (const auto& detail : channel.violations) {
    r["findings"].push_back({{"rule", "report-channel-tampering"},
                             {"severity", "reject"},
                             {"line", nullptr},
                             {"detail", detail}});
  }

  const auto phase_suffix = fmt::format(" during phase '{}'", last_phase);
  if (outcome.timed_out) {
    r["status"] = "timeout";
    r["error"] = error_object(last_phase, "Timeout",
                              fmt::format("the evaluation exceeded its {:.0f} s limit{}",
                                          job.timeout_seconds, phase_suffix));
    r["compiled"] = last_phase == "timing" || last_phase == "profile";
    return r;
  }
  if (malformed && report.is_null()) {
    // Forged records and no genuine report: a spoofing attempt, whatever way the child ended.
    r["status"] = "rejected";
    r["hacked"] = true;
    r["findings"].push_back(
        {{"rule", "report-channel-tampering"},
         {"severity", "reject"},
         {"line", nullptr},
         {"detail", "records without the job's token on the report channel, and no report"}});
    return r;
  }
  if (outcome.report_truncated) {
    r["status"] = "crashed";
    r["error"] = error_object(last_phase, "ReportOverflow",
                              "the child flooded the report channel and was killed");
    return r;
  }
  // A failed teardown after a complete report (kTeardownFailedExit) leaves the verdict whole,
  // whether the Result was answered at the report or at the exit.
  const bool clean_exit =
      outcome.answered_before_exit ||
      (outcome.exited && (outcome.exit_code == 0 ||
                          (outcome.exit_code == kTeardownFailedExit && channel.complete())));
  if (!clean_exit || report.is_null()) {
    r["status"] = "crashed";
    std::string how = outcome.signal != 0
                          ? fmt::format("killed by {}", sandbox::signal_name(outcome.signal))
                          : fmt::format("exited with code {}", outcome.exit_code);
    if (clean_exit) how = "exited without a result";
    const auto tail = last_lines(outcome.stderr_tail, 12);
    r["error"] = error_object(
        last_phase,
        outcome.signal != 0 ? sandbox::signal_name(outcome.signal) : std::string("Exit"),
        fmt::format("the evaluation process {}{}", how, phase_suffix), tail);
    return r;
  }
  if (malformed) {
    r["findings"].push_back(
        {{"rule", "report-channel-tampering"},
         {"severity", "reject"},
         {"line", nullptr},
         {"detail", "records without the job's token on the report channel (a forged report)"}});
  }

  // From here the report is the harness' word; validate every field we use.
  const auto reported_status = result::parse_status(report.value("status", ""));
  if (!reported_status) {
    r["status"] = "infra_error";
    r["error"] = error_object("report", "ProtocolError", "the harness reported an unknown status");
    return r;
  }
  Status status = *reported_status;
  r["compiled"] = report.value("compiled", false);
  r["correct"] = report.value("correct", false);
  r["correctness"] = report.value("correctness", json(nullptr));
  r["device"] = report.value("device", json(nullptr));
  r["error"] = report.value("error", json(nullptr));
  for (const auto& f : report.value("findings", json::array())) {
    if (f.is_object() && f.contains("rule")) r["findings"].push_back(f);
  }
  if (report.contains("durations_ms") && report["durations_ms"].is_object()) {
    for (const auto& [k, v] : report["durations_ms"].items()) {
      if (v.is_number()) r["durations_ms"]["harness_" + k] = v;
    }
  }
  r["timing"] = timing_from_report(report.value("timing", json(nullptr)));
  r["profile"] = profile_from_report(report.value("profile", json(nullptr)));
  // The judge's own limit: the job over its share of the GPU's memory (harness/gpu_memory.py).
  if (const auto it = report.find("resource_limit"); status == Status::kRuntimeError &&
                                                     it != report.end() && it->is_object() &&
                                                     it->value("kind", "") == "gpu_memory") {
    const auto limit = it->value("limit_mib", json(nullptr));
    r["resource_limit"] = {{"kind", "gpu_memory"},
                           {"limit_mib", limit.is_number() ? limit : json(nullptr)},
                           {"message", it->value("message", "").substr(0, 1000)},
                           {"phase", it->value("phase", "").substr(0, 40)}};
  }

  if (report.contains("judge") && report["judge"].is_object()) r["judge"] = report["judge"];
  // The job's write fence is the judge's own (see evaluate): its record says whether it holds.
  if (r["judge"].is_object() && r["judge"].contains("writes_confined")) {
    r["sandbox"]["writes_confined"] = r["judge"]["writes_confined"] == true;
    r["sandbox"]["writes_note"] = r["judge"].value("writes_note", "");
  } else if (!outcome.writes_confined && outcome.writes_note.empty()) {
    r["sandbox"]["writes_note"] = "the judge ended before it drew its write fence";
  }
  add_measurement_findings(r, job);

  bool rejected = false;
  for (const auto& f : r["findings"]) {
    if (f.value("severity", "") == "reject") rejected = true;
  }
  if (rejected) {
    status = Status::kRejected;
    r["hacked"] = true;
    r["correct"] = false;
  }
  if (status != Status::kOk) r["correct"] = false;
  if (status == Status::kOk && !r["correct"].get<bool>()) status = Status::kIncorrect;
  r["status"] = result::status_name(status);
  return r;
}

PreparedCandidate prepare(const CheckJob& job) {
  PreparedCandidate p;
  p.extraction = text::extract_candidate(job.candidate_text, job.extract_rule);
  if (!p.extraction.ok) {
    json r = base_result(job);
    r["status"] = "compile_error";
    r["error"] = error_object("extract", "ExtractionError", p.extraction.error);
    r["extraction"] = {{"rule", text::extract_rule_name(job.extract_rule)}, {"ok", false}};
    r["policies"] = policy_verdicts(r, job.torch_compute);
    p.settled = std::move(r);
    return p;
  }
  // The static screen: a candidate with a reject finding never runs.
  if (job.screen) {
    p.findings = screen_under_policy(job, p.extraction.code);
    if (screen::has_reject(p.findings)) {
      p.settled = screened_out(job, p.extraction, p.findings);
      (*p.settled)["policies"] = policy_verdicts(*p.settled, job.torch_compute);
    }
  }
  return p;
}

json evaluate(const CheckJob& job, const PhaseCallback& on_phase, const Launcher& launch,
              const std::function<void(int pgid)>& on_started, const ResultCallback& on_answer) {
  return run_prepared(job, prepare(job), on_phase, launch, on_started, on_answer);
}

bool gpu_visible(const fs::path& dev) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible != nullptr) {
    const std::string_view v(visible);
    if (v.find_first_not_of(" \t") == std::string_view::npos || v == "-1") return false;
  }
  std::error_code ec;
  if (!fs::exists(dev / "nvidiactl", ec)) return false;
  for (const auto& entry : fs::directory_iterator(dev, ec)) {
    const auto name = entry.path().filename().string();
    if (name.size() > 6 && name.starts_with("nvidia") &&
        name.find_first_not_of("0123456789", 6) == std::string::npos)
      return true;
  }
  return false;
}

std::string default_timing_lock(const CheckJob& job, const fs::path& dev) {
  // `auto` runs on the GPU wherever the harness sees one (harness/__main__.py, gpu_visible):
  // such a job times too, and must take the GPU's lock like any other.
  if (job.device == "cpu" || (job.device != "cuda" && !gpu_visible(dev))) return {};
  std::string gpu = job.visible_devices;
  if (gpu.empty() && std::getenv("CUDA_VISIBLE_DEVICES") != nullptr)
    gpu = std::getenv("CUDA_VISIBLE_DEVICES");
  return gpu_timing_lock(gpu.substr(0, gpu.find(',')));  // the judge uses the first visible GPU
}

std::string gpu_timing_lock(std::string gpu) {
  if (gpu.empty()) gpu = "0";
  for (char& c : gpu) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-') c = '_';
  }
  fs::path dir;
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run != nullptr && *run == '/') {
    dir = fs::path(run) / "kgym";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    dir = fs::path(home) / ".cache" / "kgym" / "locks";
  } else {
    return {};
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return {};
  const auto lock = (dir / fmt::format("gpu{}.timing.lock", gpu)).string();
  for (const auto& path : {lock, lock + ".gate", lock + ".start"}) {
    std::ofstream touch(path, std::ios::app);
    if (!touch) return {};
  }
  return lock;
}

json run_prepared(const CheckJob& requested, const PreparedCandidate& prepared,
                  const PhaseCallback& on_phase, const Launcher& launch,
                  const std::function<void(int pgid)>& on_started, const ResultCallback& on_answer,
                  std::string* ended_after_answer) {
  if (prepared.settled) return *prepared.settled;
  CheckJob job = requested;
  if (job.timing_lock.empty()) job.timing_lock = default_timing_lock(job);
  const auto& extraction = prepared.extraction;

  const fs::path scratch =
      !job.scratch_dir.empty()
          ? fs::path(job.scratch_dir)
          : fs::path(std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp");
  const sandbox::ResourceLimits resources = job_resources(job);
  std::unique_ptr<sandbox::JobDirectory> directory;
  // What a supervisor killed mid-job left in the shared temporary directory (a `kgym check`
  // killed with -9: its files, its tmpfs still mounted) goes before this job's directory is
  // made. A service's or worker's scratch is its own, swept once at its start.
  if (job.scratch_dir.empty()) sandbox::sweep_abandoned_job_directories(scratch.string());
  try {
    // Removed, with everything in it, when this returns: a finished job leaves only its Result.
    directory = std::make_unique<sandbox::JobDirectory>(scratch.string(), resources.disk_bytes);
  } catch (const std::exception& e) {
    json r = base_result(job);
    r["error"] = error_object("start", "ScratchError", e.what());
    return r;
  }
  const fs::path workdir = directory->path();

  json r;
  try {
    write_file(workdir / "task.py", job.task_source);
    write_file(workdir / "candidate.py", extraction.code);
    write_file(workdir / "job.json", harness_job(job).dump());
  } catch (const std::exception& e) {
    r = base_result(job);
    r["error"] = error_object("start", "ScratchError", e.what());
    return r;
  }

  sandbox::ChildSpec spec;
  spec.program = harness_program(job.python.empty() ? default_python() : job.python, {"job.json"});
  spec.env = child_environment(job, workdir.string());
  spec.workdir = workdir.string();
  if (!job.triton_cache_dir.empty()) {
    // A cache shared between jobs must exist before the fence is drawn around it.
    std::error_code ec;
    fs::create_directories(job.triton_cache_dir, ec);
    spec.writable_paths.push_back(job.triton_cache_dir);
  }
  spec.limits.wall_seconds = job.timeout_seconds;
  spec.limits.private_view = job.private_view;
  spec.limits.resources = resources;
  // Where no pids controller holds the job's processes and threads, RLIMIT_NPROC on its own uid
  // does, at the same limit (job_cgroup.hpp).
  if (resources.pids > 0 && !sandbox::cgroup_support().has_pids()) {
    spec.limits.max_processes = std::min(spec.limits.max_processes, resources.pids);
  }
  // Without a tmpfs of its own the directory's size is not watched (it is the host's disk).
  if (!directory->size_limited()) spec.limits.resources.disk_bytes = 0;
  // The harness draws its own write fences (the judge before task code, each runner before the
  // code it runs): a fence around the whole job would also forbid the candidate runner's mount
  // of its private /proc (Landlock refuses mount to a fenced process), which CUDA needs.
  spec.limits.confine_writes = false;
  spec.limits.sandbox_uid = job.sandbox_uid;
  if (job.private_view) {
    const auto& installed = interpreter_view(spec.program.executable);
    spec.view_readonly = installed.readonly;
    spec.view_hidden = installed.hidden;
    // The GPU's timing lock, its gate and its start gate (flock works on read-only
    // descriptors); nothing else of the service's state directory. A lock made by an older
    // kgym may have no start gate: the harness then starts without it.
    if (!job.timing_lock.empty()) {
      spec.view_readonly.push_back(job.timing_lock);
      spec.view_readonly.push_back(job.timing_lock + ".gate");
      if (fs::exists(job.timing_lock + ".start"))
        spec.view_readonly.push_back(job.timing_lock + ".start");
    }
  }
  spec.token = sandbox::make_report_token();

  // Phase durations are measured here, outside the candidate's process.
  const auto start = std::chrono::steady_clock::now();
  json phase_times = json::object();
  std::string current_phase = "startup";
  auto mark = start;
  // The timing window's threads run raised while it lasts (sandbox/window_priority.hpp), once a
  // job: from its first `timing` record to the next record.
  sandbox::WindowPriority window_priority;
  json window_priority_record = nullptr;
  pid_t job_pgid = -1;
  auto on_line = [&](const std::string& line) {
    const auto payload = sandbox::open_record(spec.token, line);
    if (!payload) return;
    const json record = json::parse(*payload, nullptr, false);
    if (record.is_discarded() || !record.is_object() || record.value("type", "") != "phase") return;
    window_priority.lower();  // any record after the window's first ends its priority
    if (record.value("phase", "") == "timing" && window_priority_record.is_null())
      window_priority_record = raise_window_priority(window_priority, job_pgid, record);
    const auto now = std::chrono::steady_clock::now();
    phase_times[current_phase] = phase_times.value(current_phase, 0.0) +
                                 std::chrono::duration<double, std::milli>(now - mark).count();
    mark = now;
    const std::string phase = record.value("phase", "?");
    const auto& known = evaluation_phases();
    if (phase != "done" && std::find(known.begin(), known.end(), phase) == known.end()) return;
    current_phase = phase;
    if (on_phase) on_phase(current_phase);
  };
  spec.on_started = [&on_started, &job_pgid](pid_t pgid) {
    job_pgid = pgid;
    if (on_started) on_started(static_cast<int>(pgid));
  };
  // The Result from the child's outcome and the phases' times up to now.
  auto result_of = [&](const sandbox::ChildOutcome& outcome) {
    json times = phase_times;
    times[current_phase] =
        times.value(current_phase, 0.0) +
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - mark).count();
    times.erase("done");
    json result = assemble_result(job, outcome, times, spec.token);
    result["sandbox"]["window_priority"] = window_priority_record;
    result["sandbox"]["resources"]["disk_limited"] = directory->size_limited();
    result["sandbox"]["resources"]["disk_note"] = directory->note();
    for (const auto& f : screen::to_json(prepared.findings)) {
      result["findings"].push_back(f);  // the screen's warnings
    }
    result["extraction"] = extraction_json(extraction);
    result["policies"] = policy_verdicts(result, job.torch_compute);
    return result;
  };
  // The answer at the report channel's end: the harness sends its report and `done`, closes the
  // channel, and only then ends its runners (inside the GPU hold the job ended in) and exits.
  // Nothing after the channel's end can change the Result: no record can come any more, and
  // the exit's own fields are the only ones not known yet (answered_before_exit says so).
  std::optional<json> answered;
  if (on_answer) {
    spec.on_report_end = [&](const sandbox::ChildOutcome& so_far) {
      const double wall_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (answered || so_far.timed_out || so_far.report_truncated ||
          wall_ms > job.timeout_seconds * 1e3 ||
          !read_channel(spec.token, so_far.report).complete())
        return;
      sandbox::ChildOutcome early = so_far;
      early.answered_before_exit = true;
      early.wall_ms = wall_ms;
      try {
        json result = result_of(early);
        if (on_answer(result)) answered = std::move(result);
      } catch (...) {
        // Not answered: the Result waits for the exit, as without the callback. (The child's
        // supervision must go on whatever the caller did with it.)
      }
    };
  }
  const auto outcome = launch ? launch(spec, on_line) : sandbox::run_child(spec, on_line);
  window_priority.lower();
  if (answered) {
    // What the child did after its answer cannot change the Result, but its end is the teardown
    // (runners, arenas, the GPU hold): a crash or a time-out there is the operator's to see.
    if (ended_after_answer != nullptr) *ended_after_answer = end_after_answer(outcome);
    return *answered;  // what the caller was given; the child has ended since
  }
  return result_of(outcome);
}

}  // namespace kgym::check
