#include "kgym/result/feedback.hpp"

#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace kgym::result {
namespace {
using nlohmann::json;

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

double number(const json& j, const char* key, double fallback = 0.0) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

}  // namespace

std::string render_feedback(const json& r, const FeedbackOptions& options) {
  std::string out;
  const auto status = r.value("status", "infra_error");
  const json error = r.value("error", json(nullptr));
  const json correctness = r.value("correctness", json(nullptr));
  out += fmt::format("Status: {}\n", status);

  if (status == "rejected") {
    out += "Rejected by the integrity checks; no reward for speed:\n";
    for (const auto& f : r.value("findings", json::array())) {
      if (f.value("severity", "") != "reject") continue;
      const auto line = f.contains("line") && f["line"].is_number()
                            ? fmt::format(" (line {})", f["line"].get<int>())
                            : std::string();
      out += fmt::format("- [{}]{} {}\n", f.value("rule", "?"), line, f.value("detail", ""));
    }
  }
  if (error.is_object()) {
    out += fmt::format("Error in phase '{}': {}: {}\n", error.value("phase", "?"),
                       error.value("type", "Error"),
                       head_lines(error.value("message", ""), options.max_error_lines));
    const auto tb = tail_lines(error.value("traceback", ""), options.max_error_lines);
    if (!tb.empty()) out += tb + "\n";
  }
  if (correctness.is_object()) {
    const int trials = static_cast<int>(number(correctness, "trials"));
    const int passed = static_cast<int>(number(correctness, "passed"));
    if (status == "incorrect" || passed < trials) {
      out += fmt::format("Correctness: {} of {} trials passed", passed, trials);
      if (correctness.contains("first_failed_trial") &&
          correctness["first_failed_trial"].is_number()) {
        out +=
            fmt::format(" (first failure: trial {})", correctness["first_failed_trial"].get<int>());
      }
      out += "\n";
      const auto mismatch = correctness.value("mismatch", json(nullptr));
      if (mismatch.is_string()) out += mismatch.get<std::string>() + "\n";
    } else {
      out += fmt::format("Correctness: all {} trials passed\n", trials);
    }
    if (correctness.contains("max_abs_error") && correctness["max_abs_error"].is_number()) {
      out += fmt::format("Max abs error {:.3g} (atol {:.3g}), max rel error {:.3g} (rtol {:.3g})\n",
                         number(correctness, "max_abs_error"), number(correctness, "atol"),
                         number(correctness, "max_rel_error"), number(correctness, "rtol"));
    }
  }
  const json timing = r.value("timing", json(nullptr));
  if (status == "ok" && timing.is_object()) {
    if (timing.value("available", false)) {
      const json ref = timing.value("reference", json::object());
      const json cand = timing.value("candidate", json::object());
      out += fmt::format(
          "Speedup over PyTorch eager: {:.2f}x (reference {:.4g} ms, yours {:.4g} ms)\n",
          number(timing, "speedup"), number(ref, "median_ms"), number(cand, "median_ms"));
      if (timing.contains("speedup_vs_compile") && timing["speedup_vs_compile"].is_number()) {
        out += fmt::format("Speedup over torch.compile: {:.2f}x\n",
                           timing["speedup_vs_compile"].get<double>());
      }
    } else {
      out += fmt::format("Timing unavailable: {}\n", timing.value("reason", "not measured"));
    }
  }
  const json profile = r.value("profile", json(nullptr));
  if (status == "ok" && profile.is_object() && profile.value("available", false)) {
    if (profile.contains("triton_share") && profile["triton_share"].is_number()) {
      out += fmt::format("Triton share of CUDA kernel time (PR): {:.2f}\n",
                         profile["triton_share"].get<double>());
    }
    const double total = number(profile, "total_kernel_ms");
    int shown = 0;
    for (const auto& k : profile.value("kernels", json::array())) {
      if (shown++ >= options.max_kernels || total <= 0) break;
      out += fmt::format("- {} kernel {}: {:.0f}% of kernel time\n",
                         k.value("triton", false) ? "Triton" : "non-Triton", k.value("name", "?"),
                         100.0 * number(k, "total_ms") / total);
    }
  }
  for (const auto& f : r.value("findings", json::array())) {
    if (f.value("severity", "") == "warn") {
      out += fmt::format("Warning [{}]: {}\n", f.value("rule", "?"), f.value("detail", ""));
    }
  }
  if (out.size() > options.max_chars) {
    out.resize(options.max_chars);
    out += "\n[feedback truncated]";
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace kgym::result
