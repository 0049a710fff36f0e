#include "kgym/result/feedback.hpp"

#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace kgym::result {
namespace {

std::string head_lines(const std::string& text, int count) {
  std::istringstream in(text);
  std::string line, out;
  for (int i = 0; i < count && std::getline(in, line); ++i) {
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

// The last lines of a traceback name the failing line of the candidate and the exception,
// which is what a model needs to fix it.
std::string tail_lines(const std::string& text, int count) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  const size_t first = lines.size() > static_cast<size_t>(count) ? lines.size() - count : 0;
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) {
    if (!out.empty()) out += '\n';
    out += lines[i];
  }
  return out;
}

void render_rejection(const Result& r, std::string& out) {
  out += "Rejected by the integrity checks; no reward for speed:\n";
  for (const auto& f : r.findings) {
    if (f.severity != Severity::kReject) continue;
    const auto line = f.line ? fmt::format(" (line {})", *f.line) : std::string();
    out += fmt::format("- [{}]{} {}\n", f.rule, line, f.detail);
  }
}

void render_error(const ErrorInfo& error, const FeedbackOptions& options, std::string& out) {
  out += fmt::format("Error in phase '{}': {}: {}\n", error.phase, error.type,
                     head_lines(error.message, options.max_error_lines));
  const auto tb = tail_lines(error.traceback, options.max_error_lines);
  if (!tb.empty()) out += tb + "\n";
}

void render_correctness(const Correctness& c, const std::string& status, std::string& out) {
  if (status == "incorrect" || c.passed < c.trials) {
    out += fmt::format("Correctness: {} of {} trials passed", c.passed, c.trials);
    if (c.first_failed_trial) {
      out += fmt::format(" (first failure: trial {})", *c.first_failed_trial);
    }
    out += "\n";
    if (c.mismatch) out += *c.mismatch + "\n";
  } else {
    out += fmt::format("Correctness: all {} trials passed\n", c.trials);
  }
  if (c.max_abs_error) {
    out += fmt::format("Max abs error {:.3g} (atol {:.3g}), max rel error {:.3g} (rtol {:.3g})\n",
                       *c.max_abs_error, c.atol, c.max_rel_error.value_or(0.0), c.rtol);
  }
}

double median_ms(const std::optional<SampleSummary>& summary) {
  return summary ? summary->median_ms : 0.0;
}

void render_timing(const Timing& timing, std::string& out) {
  if (!timing.available) {
    out += fmt::format("Timing unavailable: {}\n", timing.reason.value_or("not measured"));
    return;
  }
  out += fmt::format("Speedup over PyTorch eager: {:.2f}x (reference {:.4g} ms, yours {:.4g} ms)\n",
                     timing.speedup.value_or(0.0), median_ms(timing.reference),
                     median_ms(timing.candidate));
  if (timing.speedup_vs_compile) {
    out += fmt::format("Speedup over torch.compile: {:.2f}x\n", *timing.speedup_vs_compile);
  }
}

void render_profile(const Profile& profile, const FeedbackOptions& options, std::string& out) {
  if (profile.triton_share) {
    out += fmt::format("Triton share of CUDA kernel time (PR): {:.2f}\n", *profile.triton_share);
  }
  const double total = profile.total_kernel_ms;
  int shown = 0;
  for (const auto& k : profile.kernels) {
    if (shown++ >= options.max_kernels || total <= 0) break;
    out += fmt::format("- {} kernel {}: {:.0f}% of kernel time\n",
                       k.triton ? "Triton" : "non-Triton", k.name, 100.0 * k.total_ms / total);
  }
}

// Feedback is what a model sees next: a damaged result still says what can be read of it.
Result readable(const nlohmann::json& result) {
  try {
    return read_result(result);
  } catch (const ResultError&) {
    return read_result_leniently(result);
  }
}

}  // namespace

std::string render_feedback(const Result& r, const FeedbackOptions& options) {
  std::string out = fmt::format("Status: {}\n", r.status);
  if (r.status == "rejected") render_rejection(r, out);
  if (r.error) render_error(*r.error, options, out);
  if (r.correctness) render_correctness(*r.correctness, r.status, out);
  // Speed and profile only mean something for a correct, honest candidate.
  if (r.status == "ok" && r.timing) render_timing(*r.timing, out);
  if (r.status == "ok" && r.profile && r.profile->available) {
    render_profile(*r.profile, options, out);
  }
  for (const auto& f : r.findings) {
    if (f.severity == Severity::kWarn) {
      out += fmt::format("Warning [{}]: {}\n", f.rule, f.detail);
    }
  }
  if (out.size() > options.max_chars) {
    out.resize(options.max_chars);
    out += "\n[feedback truncated]";
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string render_feedback(const nlohmann::json& result, const FeedbackOptions& options) {
  return render_feedback(readable(result), options);
}

}  // namespace kgym::result
