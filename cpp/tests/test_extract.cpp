#include <gtest/gtest.h>

#include "kgym/text/extract.hpp"

using kgym::text::extract_candidate;
using kgym::text::ExtractRule;

TEST(Extract, LastPythonBlockWins) {
  const auto e = extract_candidate(
      "First try:\n```python\nold = 1\n```\nBetter:\n```python\nclass ModelNew: pass\n```\n");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, "class ModelNew: pass\n");
  EXPECT_EQ(e.rule_used, "fenced_block");
}

TEST(Extract, SkipsNonPythonBlocks) {
  const auto e = extract_candidate("```python\nx = 1\n```\nOutput:\n```text\nhello\n```\n");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, "x = 1\n");
}

TEST(Extract, BareFenceCountsAsPython) {
  const auto e = extract_candidate("```\nimport triton\n```");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, "import triton\n");
}

TEST(Extract, AnswerTagPreferredAndUnwrapsFence) {
  const auto e = extract_candidate(
      "<think>```python\nscratch\n```</think>\n<answer>\n```python\nclass ModelNew: pass\n```\n"
      "</answer>");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, "class ModelNew: pass\n");
  EXPECT_EQ(e.rule_used, "answer_tag");
}

TEST(Extract, AnswerTagWithoutFence) {
  const auto e = extract_candidate("<answer>\nimport torch\nclass ModelNew: pass\n</answer>",
                                   ExtractRule::kAnswerTag);
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, "import torch\nclass ModelNew: pass\n");
}

TEST(Extract, UnclosedAnswerTagStillYieldsContent) {
  const auto e = extract_candidate("<answer>\nclass ModelNew: pass");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, "class ModelNew: pass\n");
}

TEST(Extract, UnclosedFenceTakesRestOfText) {
  const auto e = extract_candidate("Here:\n```python\nclass ModelNew: pass\n");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, "class ModelNew: pass\n");
}

TEST(Extract, LongerFencesAndTildes) {
  const auto e = extract_candidate("~~~~python\na = '```'\n~~~~\n");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code, "a = '```'\n");
}

TEST(Extract, PlainSourceInAutoMode) {
  const auto e = extract_candidate("import torch\nclass ModelNew: pass\n");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.rule_used, "whole");
}

TEST(Extract, ClearErrors) {
  EXPECT_FALSE(extract_candidate("").ok);
  EXPECT_EQ(extract_candidate("   \n").error, "the completion is empty");
  const auto prose = extract_candidate("I cannot help with that.");
  EXPECT_FALSE(prose.ok);
  EXPECT_NE(prose.error.find("no code found"), std::string::npos);
  EXPECT_FALSE(extract_candidate("no tags here", ExtractRule::kAnswerTag).ok);
  EXPECT_FALSE(extract_candidate("<answer>  </answer>", ExtractRule::kAnswerTag).ok);
  EXPECT_FALSE(extract_candidate("```python\n\n```", ExtractRule::kLastPythonBlock).ok);
}

TEST(Extract, RuleNamesRoundTrip) {
  for (const char* name : {"auto", "last_python_block", "answer_tag", "whole"}) {
    const auto rule = kgym::text::parse_extract_rule(name);
    ASSERT_TRUE(rule.has_value());
    EXPECT_EQ(kgym::text::extract_rule_name(*rule), name);
  }
  EXPECT_FALSE(kgym::text::parse_extract_rule("regex").has_value());
}

TEST(Extract, HugeInputIsHandled) {
  std::string big(2'000'000, 'x');
  big = "```python\n" + big + "\n```\n";
  const auto e = extract_candidate(big);
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.code.size(), 2'000'001u);
}
