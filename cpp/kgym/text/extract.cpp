#include "kgym/text/extract.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace kgym::text {
namespace {

struct Block {
  std::string_view info;  // the word after the opening fence, lower-cased comparisons only
  std::string_view body;
  bool closed = true;
};

bool is_python_info(std::string_view info) {
  // A bare fence counts as python; so do the usual spellings.
  static constexpr std::array<std::string_view, 5> kNames = {"", "python", "py", "python3",
                                                             "triton"};
  std::string lowered(info);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(kNames.begin(), kNames.end(), lowered) != kNames.end();
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// Splits text into lines (views), keeping the line content without its newline.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Fences are lines whose first non-blank characters are three or more backticks or tildes.
// A closing fence must use the same character and be at least as long as the opening one.
std::vector<Block> find_blocks(std::string_view text) {
  std::vector<Block> blocks;
  const auto lines = split_lines(text);
  size_t i = 0;
  while (i < lines.size()) {
    const auto stripped = trim(lines[i]);
    const char fence_char = stripped.empty() ? '\0' : stripped.front();
    if (fence_char != '`' && fence_char != '~') {
      ++i;
      continue;
    }
    const auto run = stripped.find_first_not_of(fence_char);
    const size_t fence_len = run == std::string_view::npos ? stripped.size() : run;
    if (fence_len < 3) {
      ++i;
      continue;
    }
    auto info = trim(stripped.substr(fence_len));
    info = info.substr(0, std::min(info.find_first_of(" \t{"), info.size()));
    const char* body_begin = i + 1 < lines.size() ? lines[i + 1].data() : text.data() + text.size();
    size_t j = i + 1;
    bool closed = false;
    for (; j < lines.size(); ++j) {
      const auto candidate = trim(lines[j]);
      if (candidate.size() >= fence_len &&
          candidate.find_first_not_of(fence_char) == std::string_view::npos) {
        closed = true;
        break;
      }
    }
    const char* body_end = j < lines.size() ? lines[j].data() : text.data() + text.size();
    if (body_end > body_begin && closed) --body_end;  // drop the newline before the fence
    blocks.push_back(
        {info, std::string_view(body_begin, static_cast<size_t>(body_end - body_begin)), closed});
    i = j + 1;
  }
  return blocks;
}

std::optional<std::string_view> last_answer(std::string_view text) {
  constexpr std::string_view kOpen = "<answer>";
  constexpr std::string_view kClose = "</answer>";
  const auto open = text.rfind(kOpen);
  if (open == std::string_view::npos) return std::nullopt;
  const auto body_start = open + kOpen.size();
  const auto close = text.find(kClose, body_start);
  // An unclosed tag (a completion cut off by the token limit) still yields its content.
  const auto body_end = close == std::string_view::npos ? text.size() : close;
  return text.substr(body_start, body_end - body_start);
}

bool looks_like_python_code(std::string_view text) {
  return text.find("class ModelNew") != std::string_view::npos ||
         text.find("import ") != std::string_view::npos ||
         text.find("def ") != std::string_view::npos;
}

Extraction fail(std::string message) { return {false, {}, {}, std::move(message)}; }

Extraction from_blocks(std::string_view text, const char* empty_message) {
  const auto blocks = find_blocks(text);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (!is_python_info(it->info)) continue;
    const auto body = trim(it->body);
    if (body.empty()) continue;
    std::string code(it->body);
    if (!code.empty() && code.back() != '\n') code.push_back('\n');
    return {true, std::move(code), "fenced_block", {}};
  }
  return fail(empty_message);
}

Extraction from_answer(std::string_view text) {
  const auto answer = last_answer(text);
  if (!answer) return fail("no <answer> tag in the completion");
  if (trim(*answer).empty()) return fail("the <answer> tag is empty");
  // Answers often wrap their code in a fence; take the fenced code when there is one.
  auto fenced = from_blocks(*answer, "");
  if (fenced.ok) {
    fenced.rule_used = "answer_tag";
    return fenced;
  }
  std::string code(trim(*answer));
  code.push_back('\n');
  return {true, std::move(code), "answer_tag", {}};
}

}  // namespace

std::optional<ExtractRule> parse_extract_rule(std::string_view name) {
  if (name == "auto") return ExtractRule::kAuto;
  if (name == "last_python_block") return ExtractRule::kLastPythonBlock;
  if (name == "answer_tag") return ExtractRule::kAnswerTag;
  if (name == "whole") return ExtractRule::kWhole;
  return std::nullopt;
}

std::string_view extract_rule_name(ExtractRule rule) {
  switch (rule) {
    case ExtractRule::kAuto:
      return "auto";
    case ExtractRule::kLastPythonBlock:
      return "last_python_block";
    case ExtractRule::kAnswerTag:
      return "answer_tag";
    case ExtractRule::kWhole:
      return "whole";
  }
  return "auto";
}

Extraction extract_candidate(std::string_view completion, ExtractRule rule) {
  if (trim(completion).empty()) return fail("the completion is empty");
  switch (rule) {
    case ExtractRule::kWhole: {
      std::string code(completion);
      if (code.back() != '\n') code.push_back('\n');
      return {true, std::move(code), "whole", {}};
    }
    case ExtractRule::kAnswerTag:
      return from_answer(completion);
    case ExtractRule::kLastPythonBlock:
      return from_blocks(completion, "no fenced python code block in the completion");
    case ExtractRule::kAuto:
      break;
  }
  if (last_answer(completion)) return from_answer(completion);
  auto fenced = from_blocks(completion, "no fenced python code block in the completion");
  if (fenced.ok) return fenced;
  if (looks_like_python_code(completion)) {
    std::string code(completion);
    if (code.back() != '\n') code.push_back('\n');
    return {true, std::move(code), "whole", {}};
  }
  return fail("no code found: expected a fenced python block, an <answer> tag or Python source");
}

}  // namespace kgym::text
