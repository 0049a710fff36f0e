// The static screen: analyses a candidate's Python source before anything runs and reports
// findings by rule (docs/integrity-rules.md, "Static screen rules"; docs/screen.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym::screen {

struct Finding {
  std::string rule;
  std::string severity;  // "reject" | "warn"
  int line = 0;          // 1-based, 0 = whole file
  std::string detail;
};

struct ScreenOptions {
  std::size_t max_source_bytes = 1 << 20;
};

// Screens one candidate. Never throws on bad input (bad syntax is a `syntax` finding); findings
// are ordered by line, then rule.
std::vector<Finding> screen_candidate(std::string_view source, const ScreenOptions& options = {});

bool has_reject(const std::vector<Finding>& findings);

nlohmann::json to_json(const Finding& f);                // {"rule","severity","line","detail"}
nlohmann::json to_json(const std::vector<Finding>& fs);  // array

}  // namespace kgym::screen
