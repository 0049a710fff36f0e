// Feedback = g(result): the compact text a model sees on its next turn (docs/result-schema.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kgym/result/result.hpp"

namespace kgym::result {

struct FeedbackOptions {
  int max_error_lines = 8;  // lines of traceback shown
  size_t max_chars = 1500;  // hard cap on the whole text
  int max_kernels = 3;      // kernels listed from the profile
};

std::string render_feedback(const Result& result, const FeedbackOptions& options = {});
// The Result as JSON: read strictly; a damaged one still gets feedback, from what could be read
// of it (read_result_leniently), rather than none.
std::string render_feedback(const nlohmann::json& result, const FeedbackOptions& options = {});

}  // namespace kgym::result
