// Text similarity: an exact, fast re-implementation of Python's difflib.SequenceMatcher ratio.
//
// Kernel Coder rewards a completion with difflib.SequenceMatcher(None, prediction, reference,
// autojunk=False).ratio(). kgym computes that number in C++ and must return the same double as
// CPython for the same arguments, so this is not "a" similarity but difflib's algorithm, step for
// step: the b2j index of the second sequence, the "popular element" rule (autojunk, for
// len(b) >= 200: elements occurring more than len(b) / 100 + 1 times are not indexed), the
// leftmost-longest match of find_longest_match (earliest in a, then earliest in b), its extension
// over popular elements, the recursive get_matching_blocks, and ratio = 2.0 * M / T
// (1.0 when both sequences are empty). Only isjunk=None is supported (the only form kgym uses).
//
// Sequences are sequences of uint32 symbols: Unicode code points for text (a Python str is a
// sequence of code points, so UTF-8 input is decoded first), or interned ids for lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kgym::text {

// One matching block: a[a .. a+size) == b[b .. b+size). Same meaning as difflib's Match.
struct MatchBlock {
  std::size_t a = 0;
  std::size_t b = 0;
  std::size_t size = 0;
  friend bool operator==(const MatchBlock&, const MatchBlock&) = default;
};

// Decodes UTF-8 into Unicode code points (what a Python str holds). Throws std::invalid_argument
// naming the byte offset on malformed input (overlong forms, surrogates, values above U+10FFFF and
// truncated sequences are all malformed).
std::u32string utf8_to_code_points(std::string_view utf8);
void utf8_to_code_points(std::string_view utf8, std::u32string& out);

// A reusable matcher. set_b() indexes the second sequence once; matches()/ratio()/blocks() then
// compare any number of first sequences against it (difflib caches b the same way). Buffers are
// reused between calls, so one matcher per thread is the fast way to score many pairs.
// Not thread-safe; cheap to construct.
class SequenceMatcher {
 public:
  SequenceMatcher() = default;

  // Indexes b (the second sequence, difflib's seq2). The span must stay valid until the next
  // set_b(). autojunk follows difflib's rule (on by default in difflib, off in Kernel Coder).
  void set_b(std::span<const std::uint32_t> b, bool autojunk);

  // M: the total size of the matching blocks between a and the current b.
  std::size_t matches(std::span<const std::uint32_t> a);
  // difflib's ratio(): 2.0 * M / (len(a) + len(b)), 1.0 if both are empty.
  double ratio(std::span<const std::uint32_t> a);
  // difflib's get_matching_blocks(): sorted, adjacent blocks merged, ending with the sentinel
  // (len(a), len(b), 0).
  std::vector<MatchBlock> matching_blocks(std::span<const std::uint32_t> a);

 private:
  struct Cell {
    std::uint32_t stamp = 0;  // the row (global counter) that wrote len
    std::uint32_t len = 0;
  };
  struct Range {
    std::size_t alo, ahi, blo, bhi;
  };

  void map_a(std::span<const std::uint32_t> a);
  MatchBlock find_longest_match(std::size_t alo, std::size_t ahi, std::size_t blo, std::size_t bhi);
  template <typename OnBlock>
  void for_each_block(OnBlock&& on_block);
  std::int32_t lookup(std::uint32_t symbol) const;
  std::uint32_t next_stamp();

  std::span<const std::uint32_t> b_;
  bool has_b_ = false;
  // Dense ids of b's distinct symbols: a direct table for the Basic Multilingual Plane, a hash
  // map beyond it. bmp_touched_ lists the table entries to clear on the next set_b().
  std::vector<std::int32_t> bmp_id_;
  std::vector<std::uint32_t> bmp_touched_;
  std::unordered_map<std::uint32_t, std::int32_t> other_id_;
  std::vector<std::int32_t> b_ids_;
  // b2j as compressed rows: positions of symbol s are occ_[occ_start_[s] .. occ_end_[s]) in
  // increasing order; popular symbols get an empty row (they are still compared when a match is
  // extended, exactly as in difflib).
  std::vector<std::uint32_t> occ_start_;
  std::vector<std::uint32_t> occ_end_;
  std::vector<std::uint32_t> occ_;
  // Per-comparison state.
  std::vector<std::int32_t> a_ids_;
  std::vector<Cell> j2len_;  // index j+1 holds the match length ending at b[j] for row `stamp`
  std::uint32_t stamp_ = 0;
  std::vector<Range> queue_;
};

// difflib.SequenceMatcher(None, a, b, autojunk=autojunk).ratio() on code points.
double sequence_ratio(std::u32string_view a, std::u32string_view b, bool autojunk = false);
// The same on UTF-8 text (decoded to code points first, as Python would see the str).
double sequence_ratio_utf8(std::string_view a, std::string_view b, bool autojunk = false);
// The same on sequences of lines (each line one element, compared by equality), as
// difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=...).ratio().
double sequence_ratio_lines(std::span<const std::string> a, std::span<const std::string> b,
                            bool autojunk = false);
std::vector<MatchBlock> matching_blocks(std::u32string_view a, std::u32string_view b,
                                        bool autojunk = false);

// Python's str.strip() (no argument): strips the code points for which str.isspace() is true.
bool is_python_space(char32_t c);
std::u32string_view python_strip(std::u32string_view s);
// The same on UTF-8 text; returns a view into `utf8`. Malformed UTF-8 is an error.
std::string_view python_strip_utf8(std::string_view utf8);

}  // namespace kgym::text
