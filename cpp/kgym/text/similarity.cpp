#include "kgym/text/similarity.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace kgym::text {

namespace {

constexpr std::uint32_t kBmpSize = 0x10000;
constexpr std::int32_t kAbsent = -1;

// Decodes one code point at s[i]; returns the number of bytes it used, or 0 when malformed.
std::size_t decode_one(std::string_view s, std::size_t i, char32_t& out) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c0 = byte(i);
  if (c0 < 0x80) {
    out = c0;
    return 1;
  }
  std::size_t n = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((c0 & 0xE0) == 0xC0) {
    n = 2;
    cp = c0 & 0x1F;
    min = 0x80;
  } else if ((c0 & 0xF0) == 0xE0) {
    n = 3;
    cp = c0 & 0x0F;
    min = 0x800;
  } else if ((c0 & 0xF8) == 0xF0) {
    n = 4;
    cp = c0 & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char ck = byte(i + k);
    if ((ck & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (ck & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  out = cp;
  return n;
}

[[noreturn]] void throw_bad_utf8(std::size_t offset) {
  throw std::invalid_argument(fmt::format("invalid UTF-8 at byte offset {}", offset));
}

}  // namespace

void utf8_to_code_points(std::string_view utf8, std::u32string& out) {
  out.clear();
  out.reserve(utf8.size());
  std::size_t i = 0;
  while (i < utf8.size()) {
    char32_t cp = 0;
    const std::size_t n = decode_one(utf8, i, cp);
    if (n == 0) throw_bad_utf8(i);
    out.push_back(cp);
    i += n;
  }
}

std::u32string utf8_to_code_points(std::string_view utf8) {
  std::u32string out;
  utf8_to_code_points(utf8, out);
  return out;
}

bool is_python_space(char32_t c) {
  // str.isspace(): bidirectional class WS, B or S, or general category Zs.
  if (c <= 0x20) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  if (c < 0x85) return false;
  switch (c) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

std::u32string_view python_strip(std::u32string_view s) {
  std::size_t lo = 0;
  std::size_t hi = s.size();
  while (lo < hi && is_python_space(s[lo])) ++lo;
  while (hi > lo && is_python_space(s[hi - 1])) --hi;
  return s.substr(lo, hi - lo);
}

std::string_view python_strip_utf8(std::string_view utf8) {
  std::size_t first = utf8.size();  // byte offset of the first non-space code point
  std::size_t end = 0;              // byte offset just past the last non-space code point
  std::size_t i = 0;
  while (i < utf8.size()) {
    char32_t cp = 0;
    const std::size_t n = decode_one(utf8, i, cp);
    if (n == 0) throw_bad_utf8(i);
    if (!is_python_space(cp)) {
      if (first == utf8.size()) first = i;
      end = i + n;
    }
    i += n;
  }
  if (first == utf8.size()) return utf8.substr(0, 0);
  return utf8.substr(first, end - first);
}

// ------------------------------------------------------------------------------------------------
// SequenceMatcher

std::int32_t SequenceMatcher::lookup(std::uint32_t symbol) const {
  if (symbol < kBmpSize) return bmp_id_[symbol];
  const auto it = other_id_.find(symbol);
  return it == other_id_.end() ? kAbsent : it->second;
}

void SequenceMatcher::set_b(std::span<const std::uint32_t> b, bool autojunk) {
  if (b.size() >= std::numeric_limits<std::uint32_t>::max() - 2) {
    throw std::length_error("SequenceMatcher: sequence too long");
  }
  if (bmp_id_.empty()) bmp_id_.assign(kBmpSize, kAbsent);
  for (const std::uint32_t sym : bmp_touched_) bmp_id_[sym] = kAbsent;
  bmp_touched_.clear();
  other_id_.clear();

  // Dense ids, in order of first appearance, and per-id counts.
  b_ids_.resize(b.size());
  occ_end_.clear();  // used as counts first
  for (std::size_t j = 0; j < b.size(); ++j) {
    const std::uint32_t sym = b[j];
    std::int32_t id = kAbsent;
    if (sym < kBmpSize) {
      id = bmp_id_[sym];
      if (id == kAbsent) {
        id = static_cast<std::int32_t>(occ_end_.size());
        bmp_id_[sym] = id;
        bmp_touched_.push_back(sym);
        occ_end_.push_back(0);
      }
    } else {
      const auto [it, inserted] =
          other_id_.try_emplace(sym, static_cast<std::int32_t>(occ_end_.size()));
      if (inserted) occ_end_.push_back(0);
      id = it->second;
    }
    b_ids_[j] = id;
    ++occ_end_[static_cast<std::size_t>(id)];
  }

  // Counting sort of positions into rows: occ_ holds each symbol's positions in increasing order.
  const std::size_t nsym = occ_end_.size();
  occ_start_.resize(nsym);
  std::uint32_t offset = 0;
  for (std::size_t s = 0; s < nsym; ++s) {
    occ_start_[s] = offset;
    offset += occ_end_[s];
    occ_end_[s] = occ_start_[s];
  }
  occ_.resize(b.size());
  for (std::size_t j = 0; j < b.size(); ++j) {
    const auto s = static_cast<std::size_t>(b_ids_[j]);
    occ_[occ_end_[s]++] = static_cast<std::uint32_t>(j);
  }

  // difflib's autojunk: for n >= 200, elements occurring more than n // 100 + 1 times are
  // "popular" and removed from b2j (but not junk: matches still extend over them).
  if (autojunk && b.size() >= 200) {
    const std::size_t ntest = b.size() / 100 + 1;
    for (std::size_t s = 0; s < nsym; ++s) {
      if (occ_end_[s] - occ_start_[s] > ntest) occ_end_[s] = occ_start_[s];
    }
  }

  b_ = b;
  has_b_ = true;
  if (j2len_.size() < b.size() + 1) {
    j2len_.assign(b.size() + 1, Cell{});
    stamp_ = 0;
  }
}

void SequenceMatcher::map_a(std::span<const std::uint32_t> a) {
  if (!has_b_) throw std::logic_error("SequenceMatcher: set_b() must be called first");
  if (a.size() >= std::numeric_limits<std::uint32_t>::max() - 2) {
    throw std::length_error("SequenceMatcher: sequence too long");
  }
  a_ids_.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) a_ids_[i] = lookup(a[i]);
}

std::uint32_t SequenceMatcher::next_stamp() { return ++stamp_; }

// difflib's find_longest_match with isjunk=None: the longest match of a[alo:ahi] and b[blo:bhi]
// among indexed (non-popular) elements; of those, the one starting earliest in a, then in b;
// then extended on both sides over equal elements (popular ones included).
MatchBlock SequenceMatcher::find_longest_match(std::size_t alo, std::size_t ahi, std::size_t blo,
                                               std::size_t bhi) {
  std::size_t besti = alo;
  std::size_t bestj = blo;
  std::size_t bestsize = 0;
  const auto blo32 = static_cast<std::uint32_t>(blo);
  const auto bhi32 = static_cast<std::uint32_t>(bhi);
  Cell* const cells = j2len_.data();
  // Each row takes a new stamp; restart the counter (clearing the table) before it could wrap.
  if (stamp_ > std::numeric_limits<std::uint32_t>::max() - 2 - (ahi - alo)) {
    std::fill(j2len_.begin(), j2len_.end(), Cell{});
    stamp_ = 0;
  }
  // A fresh stamp for the row before alo, so no stale length from an earlier call is read.
  std::uint32_t prev_row = next_stamp();
  for (std::size_t i = alo; i < ahi; ++i) {
    const std::uint32_t row = next_stamp();
    const std::int32_t id = a_ids_[i];
    if (id == kAbsent) {
      prev_row = row;  // an empty row: difflib's j2len becomes {}
      continue;
    }
    const std::uint32_t* first = occ_.data() + occ_start_[static_cast<std::size_t>(id)];
    const std::uint32_t* last = occ_.data() + occ_end_[static_cast<std::size_t>(id)];
    if (blo32 > 0) first = std::lower_bound(first, last, blo32);
    if (bhi32 < b_.size()) last = std::lower_bound(first, last, bhi32);
    // Walk j downwards so that reading j2len[j-1] (previous row) happens before any write of this
    // row can touch it; keep the row's maximum with its smallest j, which is what difflib's
    // upward walk with a strict `k > bestsize` ends up choosing.
    std::uint32_t row_best = 0;
    std::uint32_t row_best_j = 0;
    for (const std::uint32_t* p = last; p != first;) {
      const std::uint32_t j = *--p;
      const Cell before = cells[j];  // slot j holds j2len[j-1]
      const std::uint32_t k = (before.stamp == prev_row ? before.len : 0U) + 1U;
      cells[j + 1] = Cell{row, k};
      if (k >= row_best) {
        row_best = k;
        row_best_j = j;
      }
    }
    if (row_best > bestsize) {
      bestsize = row_best;
      besti = i + 1 - row_best;
      bestj = static_cast<std::size_t>(row_best_j) + 1 - row_best;
    }
    prev_row = row;
  }
  // Extend over equal elements (there is no junk, so popular elements are fair game).
  const std::int32_t* a = a_ids_.data();
  const std::int32_t* b = b_ids_.data();
  while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) {
    --besti;
    --bestj;
    ++bestsize;
  }
  while (besti + bestsize < ahi && bestj + bestsize < bhi &&
         a[besti + bestsize] == b[bestj + bestsize]) {
    ++bestsize;
  }
  return MatchBlock{besti, bestj, bestsize};
}

template <typename OnBlock>
void SequenceMatcher::for_each_block(OnBlock&& on_block) {
  queue_.clear();
  queue_.push_back(Range{0, a_ids_.size(), 0, b_ids_.size()});
  while (!queue_.empty()) {
    const Range r = queue_.back();
    queue_.pop_back();
    const MatchBlock m = find_longest_match(r.alo, r.ahi, r.blo, r.bhi);
    if (m.size == 0) continue;
    on_block(m);
    if (r.alo < m.a && r.blo < m.b) queue_.push_back(Range{r.alo, m.a, r.blo, m.b});
    if (m.a + m.size < r.ahi && m.b + m.size < r.bhi) {
      queue_.push_back(Range{m.a + m.size, r.ahi, m.b + m.size, r.bhi});
    }
  }
}

std::size_t SequenceMatcher::matches(std::span<const std::uint32_t> a) {
  map_a(a);
  std::size_t total = 0;
  for_each_block([&](const MatchBlock& m) { total += m.size; });
  return total;
}

double SequenceMatcher::ratio(std::span<const std::uint32_t> a) {
  const std::size_t m = matches(a);
  const std::size_t t = a.size() + b_.size();
  // difflib's _calculate_ratio: 2.0 * matches / length, or 1.0 for two empty sequences.
  if (t == 0) return 1.0;
  return 2.0 * static_cast<double>(m) / static_cast<double>(t);
}

std::vector<MatchBlock> SequenceMatcher::matching_blocks(std::span<const std::uint32_t> a) {
  map_a(a);
  std::vector<MatchBlock> blocks;
  for_each_block([&](const MatchBlock& m) { blocks.push_back(m); });
  std::sort(blocks.begin(), blocks.end(), [](const MatchBlock& x, const MatchBlock& y) {
    if (x.a != y.a) return x.a < y.a;
    if (x.b != y.b) return x.b < y.b;
    return x.size < y.size;
  });
  std::vector<MatchBlock> merged;
  MatchBlock cur{0, 0, 0};
  for (const MatchBlock& m : blocks) {
    if (cur.a + cur.size == m.a && cur.b + cur.size == m.b) {
      cur.size += m.size;
    } else {
      if (cur.size != 0) merged.push_back(cur);
      cur = m;
    }
  }
  if (cur.size != 0) merged.push_back(cur);
  merged.push_back(MatchBlock{a.size(), b_.size(), 0});
  return merged;
}

// ------------------------------------------------------------------------------------------------
// Free functions

namespace {

std::span<const std::uint32_t> as_symbols(std::u32string_view s) {
  static_assert(sizeof(char32_t) == sizeof(std::uint32_t));
  return {reinterpret_cast<const std::uint32_t*>(s.data()), s.size()};
}

SequenceMatcher& thread_matcher() {
  thread_local SequenceMatcher matcher;
  return matcher;
}

}  // namespace

double sequence_ratio(std::u32string_view a, std::u32string_view b, bool autojunk) {
  SequenceMatcher& m = thread_matcher();
  m.set_b(as_symbols(b), autojunk);
  return m.ratio(as_symbols(a));
}

double sequence_ratio_utf8(std::string_view a, std::string_view b, bool autojunk) {
  thread_local std::u32string a32;
  thread_local std::u32string b32;
  utf8_to_code_points(a, a32);
  utf8_to_code_points(b, b32);
  return sequence_ratio(a32, b32, autojunk);
}

double sequence_ratio_lines(std::span<const std::string> a, std::span<const std::string> b,
                            bool autojunk) {
  std::unordered_map<std::string_view, std::uint32_t> ids;
  ids.reserve(a.size() + b.size());
  const auto intern = [&](std::span<const std::string> lines) {
    std::vector<std::uint32_t> out;
    out.reserve(lines.size());
    for (const std::string& line : lines) {
      const auto [it, inserted] =
          ids.try_emplace(std::string_view(line), static_cast<std::uint32_t>(ids.size()));
      out.push_back(it->second);
    }
    return out;
  };
  const std::vector<std::uint32_t> bi = intern(b);
  const std::vector<std::uint32_t> ai = intern(a);
  SequenceMatcher m;
  m.set_b(bi, autojunk);
  return m.ratio(ai);
}

std::vector<MatchBlock> matching_blocks(std::u32string_view a, std::u32string_view b,
                                        bool autojunk) {
  SequenceMatcher& m = thread_matcher();
  m.set_b(as_symbols(b), autojunk);
  return m.matching_blocks(as_symbols(a));
}

}  // namespace kgym::text
