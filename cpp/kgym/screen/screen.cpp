#include "kgym/screen/screen.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kgym/screen/context.hpp"
#include "kgym/screen/rules.hpp"
#include "kgym/screen/structure.hpp"

namespace kgym::screen {

std::vector<Finding> screen_candidate(std::string_view source, const ScreenOptions& options) {
  std::vector<Finding> out;
  if (source.size() > options.max_source_bytes) {
    out.push_back({"long-source", "reject", 0,
                   fmt::format("the source is {} bytes (limit {})", source.size(),
                               options.max_source_bytes)});
    return out;
  }
  try {
    const Module m = analyse_structure(source);
    if (!m.ok) {
      out.push_back({"syntax", "reject", m.error_line, m.error});
      return out;
    }
    Context c(m, out);
    rules::run_all(c);
  } catch (const std::exception& e) {
    // Allocation failure or an internal error: refuse rather than let the candidate through.
    out.push_back({"syntax", "reject", 0,
                   fmt::format("the screen could not analyse the source: {}", e.what())});
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.line != b.line) return a.line < b.line;
    return a.rule < b.rule;
  });
  return out;
}

bool has_reject(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == "reject"; });
}

nlohmann::json to_json(const Finding& f) {
  return nlohmann::json{{"rule", f.rule},
                        {"severity", f.severity},
                        {"line", f.line > 0 ? nlohmann::json(f.line) : nlohmann::json(nullptr)},
                        {"detail", f.detail}};
}

nlohmann::json to_json(const std::vector<Finding>& fs) {
  auto a = nlohmann::json::array();
  for (const auto& f : fs) a.push_back(to_json(f));
  return a;
}

}  // namespace kgym::screen
