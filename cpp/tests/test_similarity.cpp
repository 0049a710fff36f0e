// kgym::text similarity: exact agreement with CPython's difflib.SequenceMatcher.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kgym/text/similarity.hpp"

namespace {

using kgym::text::MatchBlock;

// A line-for-line transcription of difflib (isjunk=None) with ordered maps: the reference the
// fast implementation is checked against.
class NaiveMatcher {
 public:
  NaiveMatcher(std::u32string a, std::u32string b, bool autojunk)
      : a_(std::move(a)), b_(std::move(b)) {
    for (std::size_t i = 0; i < b_.size(); ++i) b2j_[b_[i]].push_back(i);
    if (autojunk && b_.size() >= 200) {
      const std::size_t ntest = b_.size() / 100 + 1;
      std::set<char32_t> popular;
      for (const auto& [elt, idxs] : b2j_) {
        if (idxs.size() > ntest) popular.insert(elt);
      }
      for (const char32_t elt : popular) b2j_.erase(elt);
    }
  }

  MatchBlock find_longest_match(std::size_t alo, std::size_t ahi, std::size_t blo,
                                std::size_t bhi) const {
    std::size_t besti = alo, bestj = blo, bestsize = 0;
    std::map<std::size_t, std::size_t> j2len;
    for (std::size_t i = alo; i < ahi; ++i) {
      std::map<std::size_t, std::size_t> newj2len;
      const auto it = b2j_.find(a_[i]);
      if (it != b2j_.end()) {
        for (const std::size_t j : it->second) {
          if (j < blo) continue;
          if (j >= bhi) break;
          std::size_t prev = 0;
          if (j > 0) {
            const auto p = j2len.find(j - 1);
            if (p != j2len.end()) prev = p->second;
          }
          const std::size_t k = newj2len[j] = prev + 1;
          if (k > bestsize) {
            besti = i - k + 1;
            bestj = j - k + 1;
            bestsize = k;
          }
        }
      }
      j2len = std::move(newj2len);
    }
    while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) {
      --besti;
      --bestj;
      ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi &&
           a_[besti + bestsize] == b_[bestj + bestsize]) {
      ++bestsize;
    }
    return {besti, bestj, bestsize};
  }

  std::vector<MatchBlock> blocks() const {
    std::vector<std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>> queue = {
        {0, a_.size(), 0, b_.size()}};
    std::vector<MatchBlock> found;
    while (!queue.empty()) {
      const auto [alo, ahi, blo, bhi] = queue.back();
      queue.pop_back();
      const MatchBlock m = find_longest_match(alo, ahi, blo, bhi);
      if (m.size == 0) continue;
      found.push_back(m);
      if (alo < m.a && blo < m.b) queue.emplace_back(alo, m.a, blo, m.b);
      if (m.a + m.size < ahi && m.b + m.size < bhi) {
        queue.emplace_back(m.a + m.size, ahi, m.b + m.size, bhi);
      }
    }
    std::sort(found.begin(), found.end(), [](const MatchBlock& x, const MatchBlock& y) {
      return std::tie(x.a, x.b, x.size) < std::tie(y.a, y.b, y.size);
    });
    std::vector<MatchBlock> merged;
    MatchBlock cur{0, 0, 0};
    for (const auto& m : found) {
      if (cur.a + cur.size == m.a && cur.b + cur.size == m.b) {
        cur.size += m.size;
      } else {
        if (cur.size) merged.push_back(cur);
        cur = m;
      }
    }
    if (cur.size) merged.push_back(cur);
    merged.push_back({a_.size(), b_.size(), 0});
    return merged;
  }

  double ratio() const {
    std::size_t m = 0;
    for (const auto& b : blocks()) m += b.size;
    const std::size_t t = a_.size() + b_.size();
    return t ? 2.0 * static_cast<double>(m) / static_cast<double>(t) : 1.0;
  }

 private:
  std::u32string a_, b_;
  std::map<char32_t, std::vector<std::size_t>> b2j_;
};

std::u32string random_string(std::mt19937_64& rng, std::size_t n, const std::u32string& alphabet) {
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::u32string s(n, U' ');
  for (auto& c : s) c = alphabet[pick(rng)];
  return s;
}

// Values printed by CPython 3.11's difflib for the same arguments.
TEST(Similarity, KnownDifflibValues) {
  using kgym::text::sequence_ratio;
  using kgym::text::sequence_ratio_utf8;
  EXPECT_EQ(sequence_ratio(U"abcd", U"bcde"), 0.75);
  EXPECT_EQ(sequence_ratio(U" abcd", U"abcd abcd"), 0.7142857142857143);
  EXPECT_EQ(sequence_ratio(U"abxcd", U"abcd"), 0.8888888888888888);
  EXPECT_EQ(sequence_ratio(U"", U""), 1.0);
  EXPECT_EQ(sequence_ratio(U"a", U""), 0.0);
  EXPECT_EQ(
      sequence_ratio(U"private Thread currentThread;", U"private volatile Thread currentThread;"),
      0.8656716417910447);
  EXPECT_EQ(sequence_ratio_utf8("h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93",
                                "hello world \xe2\x9c\x93\xe2\x9c\x93"),
            0.8148148148148148);
  const std::u32string xs(250, U'x');
  EXPECT_EQ(sequence_ratio(xs + U"abc", U"abc" + xs, true), 0.011857707509881422);
  EXPECT_EQ(sequence_ratio(xs + U"abc", U"abc" + xs, false), 0.9881422924901185);
}

TEST(Similarity, MatchingBlocksLikeDifflib) {
  const auto blocks = kgym::text::matching_blocks(U"abxcd", U"abcd");
  const std::vector<MatchBlock> want = {{0, 0, 2}, {3, 2, 2}, {5, 4, 0}};
  EXPECT_EQ(blocks, want);
  const auto tail = kgym::text::matching_blocks(U" abcd", U"abcd abcd");
  const std::vector<MatchBlock> want_tail = {{0, 4, 5}, {5, 9, 0}};
  EXPECT_EQ(tail, want_tail);
}

TEST(Similarity, AgreesWithTranscribedDifflibOnRandomInput) {
  std::mt19937_64 rng(1234);
  const std::vector<std::u32string> alphabets = {U"ab", U"abc \n", U"abcdefghij(){}[] \n\t=+",
                                                 U"x\u00e9\u4e2d\U0001F600 "};
  kgym::text::SequenceMatcher fast;
  for (int iter = 0; iter < 400; ++iter) {
    const auto& alpha = alphabets[static_cast<std::size_t>(iter) % alphabets.size()];
    std::uniform_int_distribution<std::size_t> len(0, iter % 8 == 0 ? 420 : 80);
    const std::u32string a = random_string(rng, len(rng), alpha);
    const std::u32string b = random_string(rng, len(rng), alpha);
    for (const bool autojunk : {false, true}) {
      const NaiveMatcher ref(a, b, autojunk);
      const std::span<const std::uint32_t> as(reinterpret_cast<const std::uint32_t*>(a.data()),
                                              a.size());
      const std::span<const std::uint32_t> bs(reinterpret_cast<const std::uint32_t*>(b.data()),
                                              b.size());
      fast.set_b(bs, autojunk);
      ASSERT_EQ(fast.ratio(as), ref.ratio()) << "iteration " << iter << " autojunk " << autojunk;
      ASSERT_EQ(fast.matching_blocks(as), ref.blocks()) << "iteration " << iter;
      ASSERT_EQ(kgym::text::sequence_ratio(a, b, autojunk), ref.ratio());
    }
  }
}

TEST(Similarity, ReusedMatcherAcrossManyFirstSequences) {
  std::mt19937_64 rng(7);
  const std::u32string b = random_string(rng, 300, U"abc d\n");
  kgym::text::SequenceMatcher m;
  const std::span<const std::uint32_t> bs(reinterpret_cast<const std::uint32_t*>(b.data()),
                                          b.size());
  m.set_b(bs, true);
  for (int i = 0; i < 50; ++i) {
    const std::u32string a = random_string(rng, 200 + static_cast<std::size_t>(i), U"abc d\n");
    const std::span<const std::uint32_t> as(reinterpret_cast<const std::uint32_t*>(a.data()),
                                            a.size());
    EXPECT_EQ(m.ratio(as), NaiveMatcher(a, b, true).ratio());
  }
}

TEST(Similarity, Lines) {
  const std::vector<std::string> a = {"x = 1", "y = 2", "z = 3"};
  const std::vector<std::string> b = {"x = 1", "z = 3"};
  // difflib.SequenceMatcher(None, a, b).ratio() == 0.8
  EXPECT_EQ(kgym::text::sequence_ratio_lines(a, b), 0.8);
}

TEST(Similarity, Utf8DecodingAndErrors) {
  EXPECT_EQ(kgym::text::utf8_to_code_points("a\xc3\xa9\xf0\x9f\x98\x80"), U"a\u00e9\U0001F600");
  EXPECT_THROW(kgym::text::utf8_to_code_points("\xc3"), std::invalid_argument);
  EXPECT_THROW(kgym::text::utf8_to_code_points("\xc0\xaf"), std::invalid_argument);  // overlong
  EXPECT_THROW(kgym::text::utf8_to_code_points("\xed\xa0\x80"),
               std::invalid_argument);  // surrogate
  EXPECT_THROW(kgym::text::utf8_to_code_points("\xff"), std::invalid_argument);
}

TEST(Similarity, PythonStrip) {
  EXPECT_EQ(kgym::text::python_strip_utf8(" \t\n x y \xc2\xa0\xe3\x80\x80"), "x y");
  EXPECT_EQ(kgym::text::python_strip_utf8("\x1c\x1f"), "");
  EXPECT_EQ(kgym::text::python_strip(U"\u2003abc\u200b"), U"abc\u200b");  // ZWSP is not space
}

}  // namespace
