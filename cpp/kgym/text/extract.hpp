// Reduces a model completion to candidate source code (docs/architecture.md, "One evaluation").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kgym::text {

// Which part of a completion holds the candidate.
enum class ExtractRule {
  kAuto,             // <answer> content if present (its last fenced block, or all of it), else the
                     // last fenced python block, else the whole text if it already looks like code.
  kLastPythonBlock,  // the last ```python / ```py / bare ``` fenced block
  kAnswerTag,        // the content of the last <answer>...</answer> pair
  kWhole,            // the text as it is (a plain .py file)
};

struct Extraction {
  bool ok = false;
  std::string code;       // the candidate source when ok
  std::string rule_used;  // which rule produced it: "answer_tag", "fenced_block", "whole"
  std::string error;      // why nothing could be extracted, when !ok
};

std::optional<ExtractRule> parse_extract_rule(std::string_view name);
std::string_view extract_rule_name(ExtractRule rule);

Extraction extract_candidate(std::string_view completion, ExtractRule rule = ExtractRule::kAuto);

}  // namespace kgym::text
