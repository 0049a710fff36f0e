#include "kgym/screen/tokenizer.hpp"

#include <cstddef>
#include <initializer_list>

namespace kgym::screen {
namespace {

constexpr std::size_t kMaxBrackets = 200;  // CPython: "too many nested parentheses"
constexpr std::size_t kMaxIndents = 100;   // CPython: "too many levels of indentation"
constexpr int kMaxFStringNesting = 32;

bool any_of(std::string_view s, std::initializer_list<std::string_view> words) {
  for (auto w : words) {
    if (w == s) return true;
  }
  return false;
}

// Python's hard keywords, by length (soft keywords such as `match` are names).
bool is_keyword(std::string_view s) {
  switch (s.size()) {
    case 2:
      return any_of(s, {"as", "if", "in", "is", "or"});
    case 3:
      return any_of(s, {"and", "def", "del", "for", "not", "try"});
    case 4:
      return any_of(s, {"None", "True", "elif", "else", "from", "pass", "with"});
    case 5:
      return any_of(s, {"False", "async", "await", "break", "class", "raise", "while", "yield"});
    case 6:
      return any_of(s, {"assert", "except", "global", "import", "lambda", "return"});
    case 7:
      return s == "finally";
    case 8:
      return s == "continue" || s == "nonlocal";
    default:
      return false;
  }
}

inline bool ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
inline bool ident_char(unsigned char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
inline bool digit(unsigned char c) { return c >= '0' && c <= '9'; }

// Returns kStr* flags for a valid string prefix, or -1.
int prefix_flags(std::string_view p) {
  if (p.size() > 2) return -1;
  int flags = 0;
  bool r = false, b = false, u = false, f = false;
  for (char ch : p) {
    switch (ch) {
      case 'r':
      case 'R':
        if (r) return -1;
        r = true;
        flags |= kStrRaw;
        break;
      case 'b':
      case 'B':
        if (b) return -1;
        b = true;
        flags |= kStrBytes;
        break;
      case 'u':
      case 'U':
        if (u) return -1;
        u = true;
        break;
      case 'f':
      case 'F':
      case 't':
      case 'T':
        if (f) return -1;
        f = true;
        flags |= kStrF;
        break;
      default:
        return -1;
    }
  }
  if (u && p.size() > 1) return -1;
  if (b && f) return -1;
  return flags;
}

// Validates UTF-8 and refuses NUL bytes. Returns the 1-based line of the first problem, or 0.
int validate_bytes(std::string_view s, std::string& why) {
  int line = 1;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if (c == 0) {
        why = "source code cannot contain null bytes";
        return line;
      }
      if (c == '\n') ++line;
      ++i;
      continue;
    }
    std::size_t extra;
    std::uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      cp = c & 0x07u;
    } else {
      why = "invalid UTF-8";
      return line;
    }
    for (std::size_t k = 1; k <= extra; ++k) {
      if (i + k >= n || (p[i + k] & 0xC0u) != 0x80u) {
        why = "invalid UTF-8";
        return line;
      }
      cp = (cp << 6) | (p[i + k] & 0x3Fu);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
      why = "invalid UTF-8";
      return line;
    }
    i += extra + 1;
  }
  return 0;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src, TokenizeResult& out) : s_(src), r_(out) {}

  void run() {
    if (s_.size() >= 3 && s_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;  // UTF-8 BOM
    std::string why;
    if (const int bad = validate_bytes(s_, why)) {
      fail(bad, why);
      return;
    }
    if (s_.size() >= 0xFFFFFFF0u) {
      fail(0, "source too large");
      return;
    }
    r_.tokens.reserve(s_.size() / 4 + 16);
    indents_.push_back(0);
    bool line_start = true;
    while (r_.ok && i_ < s_.size()) {
      if (line_start && brackets_.empty()) {
        line_start = false;
        if (!indentation()) {  // blank or comment-only line consumed
          line_start = true;
          continue;
        }
        if (!r_.ok) break;
      }
      if (!lex_one(line_start)) break;
    }
    if (!r_.ok) return;
    if (!brackets_.empty()) {
      const Token& open = r_.tokens[brackets_.back()];
      fail(open.line, open.kind == Tok::kFStringStart
                          ? "unterminated f-string"
                          : "'" + std::string(text(s_, open)) + "' was never closed");
      return;
    }
    if (!r_.tokens.empty() && r_.tokens.back().kind != Tok::kNewline &&
        r_.tokens.back().kind != Tok::kDedent && r_.tokens.back().kind != Tok::kIndent) {
      emit(Tok::kNewline, Op::kNone, static_cast<std::uint32_t>(s_.size()), 0);
    }
    while (indents_.size() > 1) {
      indents_.pop_back();
      emit(Tok::kDedent, Op::kNone, static_cast<std::uint32_t>(s_.size()), 0);
    }
    emit(Tok::kEnd, Op::kNone, static_cast<std::uint32_t>(s_.size()), 0);
  }

 private:
  void fail(int line, std::string why) {
    if (!r_.ok) return;
    r_.ok = false;
    r_.error_line = line;
    r_.error = std::move(why);
  }

  int emit(Tok kind, Op op, std::uint32_t pos, std::uint32_t len, std::uint8_t flags = 0,
           int line = -1) {
    Token t;
    t.pos = pos;
    t.len = len;
    t.line = line < 0 ? line_ : line;
    t.kind = kind;
    t.op = op;
    t.flags = flags;
    t.depth = static_cast<std::uint16_t>(brackets_.size());
    r_.tokens.push_back(t);
    return static_cast<int>(r_.tokens.size() - 1);
  }

  char peek(std::size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }

  // At the start of a physical line outside brackets. Returns false when the line is blank
  // or a comment only (consumed, with its newline), true when tokens follow.
  bool indentation() {
    std::size_t col = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ') {
        ++col;
      } else if (c == '\t') {
        col = (col / 8 + 1) * 8;
      } else if (c == '\f') {
        col = 0;
      } else {
        break;
      }
      ++i_;
    }
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '#') {
      while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') ++i_;
    }
    if (i_ >= s_.size()) return false;
    if (s_[i_] == '\n' || s_[i_] == '\r') {
      newline_char();
      return false;
    }
    if (c == '\\') return true;  // a continuation line: no indentation change
    if (col > indents_.back()) {
      if (indents_.size() >= kMaxIndents) {
        fail(line_, "too many levels of indentation");
        return true;
      }
      indents_.push_back(col);
      emit(Tok::kIndent, Op::kNone, static_cast<std::uint32_t>(i_), 0);
    } else {
      while (col < indents_.back()) {
        indents_.pop_back();
        emit(Tok::kDedent, Op::kNone, static_cast<std::uint32_t>(i_), 0);
      }
      if (col != indents_.back())
        fail(line_, "unindent does not match any outer indentation level");
    }
    return true;
  }

  void newline_char() {
    if (s_[i_] == '\r' && peek(1) == '\n') ++i_;
    ++i_;
    ++line_;
  }

  // Lexes one token (or skips whitespace / a comment / a newline). Sets line_start after a
  // newline. Returns false when lexing must stop.
  bool lex_one(bool& line_start) {
    const char c = s_[i_];
    if (c == ' ' || c == '\t' || c == '\f') {
      ++i_;
      while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\f')) ++i_;
      return true;
    }
    if (c == '#') {
      while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') ++i_;
      return true;
    }
    if (c == '\n' || c == '\r') {
      const std::uint32_t pos = static_cast<std::uint32_t>(i_);
      const int line = line_;
      newline_char();
      if (brackets_.empty()) {
        if (!r_.tokens.empty() && r_.tokens.back().kind != Tok::kNewline &&
            r_.tokens.back().kind != Tok::kIndent && r_.tokens.back().kind != Tok::kDedent) {
          emit(Tok::kNewline, Op::kNone, pos, 0, 0, line);
        }
        line_start = true;
      }
      return true;
    }
    if (c == '\\') {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '\n' || s_[i_] == '\r')) {
        newline_char();
        if (i_ >= s_.size()) {
          fail(line_, "unexpected EOF after line continuation");
          return false;
        }
        return true;
      }
      fail(line_, "unexpected character after line continuation character");
      return false;
    }
    const auto uc = static_cast<unsigned char>(c);
    if (ident_start(uc)) return lex_name();
    if (digit(uc) || (c == '.' && digit(static_cast<unsigned char>(peek(1))))) {
      lex_number();
      return true;
    }
    if (c == '"' || c == '\'') return lex_string(i_, 0);
    return lex_op();
  }

  bool lex_name() {
    const std::size_t start = i_;
    std::uint8_t non_ascii = 0;
    while (i_ < s_.size() && ident_char(static_cast<unsigned char>(s_[i_]))) {
      if (static_cast<unsigned char>(s_[i_]) >= 0x80) non_ascii = 1;
      ++i_;
    }
    const std::string_view word = s_.substr(start, i_ - start);
    if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'')) {
      const int flags = prefix_flags(word);
      if (flags >= 0) return lex_string(start, static_cast<std::uint8_t>(flags));
    }
    const auto pos = static_cast<std::uint32_t>(start);
    const auto len = static_cast<std::uint32_t>(word.size());
    if (!non_ascii && is_keyword(word)) {
      emit(Tok::kKeyword, Op::kNone, pos, len);
    } else {
      emit(Tok::kName, Op::kNone, pos, len, non_ascii);
    }
    return true;
  }

  void lex_number() {
    const std::size_t start = i_;
    auto take = [&](auto pred) {
      while (i_ < s_.size() && (pred(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    };
    auto hex = [](unsigned char ch) {
      return digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
    };
    if (s_[i_] == '0' && (peek(1) == 'x' || peek(1) == 'X' || peek(1) == 'o' || peek(1) == 'O' ||
                          peek(1) == 'b' || peek(1) == 'B')) {
      i_ += 2;
      take(hex);
    } else {
      take(digit);
      if (peek() == '.') {
        ++i_;
        take(digit);
      }
      if (peek() == 'e' || peek() == 'E') {
        const char n1 = peek(1);
        if (digit(static_cast<unsigned char>(n1)) ||
            ((n1 == '+' || n1 == '-') && digit(static_cast<unsigned char>(peek(2))))) {
          i_ += (n1 == '+' || n1 == '-') ? 2 : 1;
          take(digit);
        }
      }
      if (peek() == 'j' || peek() == 'J') ++i_;
    }
    emit(Tok::kNumber, Op::kNone, static_cast<std::uint32_t>(start),
         static_cast<std::uint32_t>(i_ - start));
  }

  // A string starting at `start` (its prefix) whose opening quote is at i_.
  bool lex_string(std::size_t start, std::uint8_t flags) {
    const char q = s_[i_];
    const bool triple = peek(1) == q && peek(2) == q;
    const int line = line_;
    i_ += triple ? 3 : 1;
    if (triple) flags |= kStrTriple;
    if (flags & kStrF) return lex_fstring(start, flags, q, triple, line);
    while (true) {
      if (i_ >= s_.size()) {
        fail(line,
             triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
        return false;
      }
      const char c = s_[i_];
      if (c == '\\') {
        flags |= kStrEscape;
        ++i_;
        if (i_ < s_.size()) {
          if (s_[i_] == '\n' || s_[i_] == '\r') {
            newline_char();
          } else {
            ++i_;
          }
        }
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (!triple) {
          fail(line, "unterminated string literal");
          return false;
        }
        newline_char();
        continue;
      }
      if (c == q && (!triple || (peek(1) == q && peek(2) == q))) {
        i_ += triple ? 3 : 1;
        break;
      }
      ++i_;
    }
    emit(Tok::kString, Op::kNone, static_cast<std::uint32_t>(start),
         static_cast<std::uint32_t>(i_ - start), flags, line);
    return true;
  }

  bool at_close(char q, bool triple) const {
    return s_[i_] == q && (!triple || (peek(1) == q && peek(2) == q));
  }

  // f-strings: FStringStart, the tokens of each replacement field followed by kFSep, FStringEnd.
  bool lex_fstring(std::size_t start, std::uint8_t flags, char q, bool triple, int line) {
    if (++fnest_ > kMaxFStringNesting) {
      fail(line, "f-string nesting too deep");
      return false;
    }
    const int open = emit(Tok::kFStringStart, Op::kNone, static_cast<std::uint32_t>(start),
                          static_cast<std::uint32_t>(i_ - start), flags, line);
    brackets_.push_back(open);
    if (brackets_.size() > kMaxBrackets) {
      fail(line, "too many nested parentheses");
      return false;
    }
    if (!fstring_literal(q, triple, line, /*in_spec=*/false)) return false;
    // at the closing quote
    brackets_.pop_back();
    const int close =
        emit(Tok::kFStringEnd, Op::kNone, static_cast<std::uint32_t>(i_), triple ? 3u : 1u, flags);
    r_.tokens[static_cast<std::size_t>(open)].partner = close;
    r_.tokens[static_cast<std::size_t>(close)].partner = open;
    i_ += triple ? 3 : 1;
    --fnest_;
    return true;
  }

  // Literal text of an f-string (or of a format spec when in_spec): stops at the closing quote
  // (i_ left on it) or, in a spec, at the '}' closing the field (i_ left on it).
  bool fstring_literal(char q, bool triple, int line, bool in_spec) {
    while (true) {
      if (i_ >= s_.size()) {
        fail(line, "unterminated f-string");
        return false;
      }
      const char c = s_[i_];
      if (c == '\\') {
        ++i_;
        if (i_ < s_.size()) {
          if (s_[i_] == '\n' || s_[i_] == '\r') {
            newline_char();
          } else if (s_[i_] != '{' && s_[i_] != '}') {
            ++i_;
          }
        }
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (!triple) {
          fail(line, "unterminated f-string");
          return false;
        }
        newline_char();
        continue;
      }
      if (at_close(q, triple)) {
        if (in_spec) {
          fail(line, "f-string: expecting '}'");
          return false;
        }
        return true;
      }
      if (c == '{') {
        if (!in_spec && peek(1) == '{') {
          i_ += 2;
          continue;
        }
        ++i_;
        if (!fstring_field(q, triple, line)) return false;
        continue;
      }
      if (c == '}') {
        if (in_spec) return true;
        if (peek(1) == '}') {
          i_ += 2;
          continue;
        }
        fail(line, "f-string: single '}' is not allowed");
        return false;
      }
      ++i_;
    }
  }

  // One replacement field after its '{': expression tokens, then optional '=', '!conv', ':spec'.
  bool fstring_field(char q, bool triple, int line) {
    const std::size_t level = brackets_.size();
    const std::size_t first = r_.tokens.size();
    bool line_start = false;
    while (true) {
      if (!r_.ok) return false;
      if (i_ >= s_.size()) {
        fail(line, "unterminated f-string");
        return false;
      }
      const char c = s_[i_];
      if (brackets_.size() == level) {
        if (c == '}' || (c == '!' && peek(1) != '=') || c == ':' ||
            (c == '=' && peek(1) != '=' && r_.tokens.size() > first)) {
          break;
        }
        if (at_close(q, triple) && r_.tokens.size() == first) {
          fail(line, "f-string: empty expression not allowed");
          return false;
        }
      }
      if (!lex_one(line_start)) return false;
      if (brackets_.size() < level) {
        fail(line, "f-string: unmatched closing bracket");
        return false;
      }
    }
    if (s_[i_] == '=') ++i_;  // self-documenting expression
    if (i_ < s_.size() && s_[i_] == '!') {
      ++i_;
      while (i_ < s_.size() && ident_char(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && s_[i_] == ':') {
      ++i_;
      if (!fstring_literal(q, triple, line, /*in_spec=*/true)) return false;
    }
    if (i_ >= s_.size() || s_[i_] != '}') {
      fail(line, "f-string: expecting '}'");
      return false;
    }
    ++i_;
    emit(Tok::kOp, Op::kFSep, static_cast<std::uint32_t>(i_ - 1), 0);
    return true;
  }

  bool lex_op() {
    const auto pos = static_cast<std::uint32_t>(i_);
    const char c = s_[i_];
    const char c1 = peek(1);
    const char c2 = peek(2);
    Op op = Op::kNone;
    std::uint32_t len = 1;
    auto aug_or = [&](Op plain) {
      if (c1 == '=') {
        len = 2;
        return Op::kAugAssign;
      }
      return plain;
    };
    switch (c) {
      case '(':
        op = Op::kLPar;
        break;
      case ')':
        op = Op::kRPar;
        break;
      case '[':
        op = Op::kLSqb;
        break;
      case ']':
        op = Op::kRSqb;
        break;
      case '{':
        op = Op::kLBrace;
        break;
      case '}':
        op = Op::kRBrace;
        break;
      case ',':
        op = Op::kComma;
        break;
      case ';':
        op = Op::kSemi;
        break;
      case '~':
        op = Op::kTilde;
        break;
      case '.':
        if (c1 == '.' && c2 == '.') {
          op = Op::kEllipsis;
          len = 3;
        } else {
          op = Op::kDot;
        }
        break;
      case ':':
        if (c1 == '=') {
          op = Op::kWalrus;
          len = 2;
        } else {
          op = Op::kColon;
        }
        break;
      case '=':
        if (c1 == '=') {
          op = Op::kCompare;
          len = 2;
        } else {
          op = Op::kAssign;
        }
        break;
      case '!':
        if (c1 == '=') {
          op = Op::kCompare;
          len = 2;
        }
        break;
      case '<':
        if (c1 == '<') {
          len = 2;
          op = Op::kLShift;
          if (c2 == '=') {
            len = 3;
            op = Op::kAugAssign;
          }
        } else {
          op = Op::kCompare;
          if (c1 == '=' || c1 == '>') len = 2;
        }
        break;
      case '>':
        if (c1 == '>') {
          len = 2;
          op = Op::kRShift;
          if (c2 == '=') {
            len = 3;
            op = Op::kAugAssign;
          }
        } else {
          op = Op::kCompare;
          if (c1 == '=') len = 2;
        }
        break;
      case '*':
        if (c1 == '*') {
          len = 2;
          op = Op::kDStar;
          if (c2 == '=') {
            len = 3;
            op = Op::kAugAssign;
          }
        } else {
          op = aug_or(Op::kStar);
        }
        break;
      case '/':
        if (c1 == '/') {
          len = 2;
          op = Op::kDSlash;
          if (c2 == '=') {
            len = 3;
            op = Op::kAugAssign;
          }
        } else {
          op = aug_or(Op::kSlash);
        }
        break;
      case '-':
        if (c1 == '>') {
          len = 2;
          op = Op::kArrow;
        } else {
          op = aug_or(Op::kMinus);
        }
        break;
      case '+':
        op = aug_or(Op::kPlus);
        break;
      case '%':
        op = aug_or(Op::kPercent);
        break;
      case '&':
        op = aug_or(Op::kAmp);
        break;
      case '|':
        op = aug_or(Op::kPipe);
        break;
      case '^':
        op = aug_or(Op::kCaret);
        break;
      case '@':
        op = aug_or(Op::kAt);
        break;
      default:
        break;
    }
    if (op == Op::kNone) {
      fail(line_, "invalid character '" + printable(c) + "'");
      return false;
    }
    i_ += len;
    if (op == Op::kLPar || op == Op::kLSqb || op == Op::kLBrace) {
      const int idx = emit(Tok::kOp, op, pos, len);
      brackets_.push_back(idx);
      if (brackets_.size() > kMaxBrackets) {
        fail(line_, "too many nested parentheses");
        return false;
      }
      return true;
    }
    if (op == Op::kRPar || op == Op::kRSqb || op == Op::kRBrace) {
      if (brackets_.empty()) {
        fail(line_, "unmatched '" + std::string(1, c) + "'");
        return false;
      }
      const int open = brackets_.back();
      const Token& o = r_.tokens[static_cast<std::size_t>(open)];
      const Op want = o.op == Op::kLPar ? Op::kRPar : o.op == Op::kLSqb ? Op::kRSqb : Op::kRBrace;
      if (o.kind != Tok::kOp || op != want) {
        fail(line_, "closing '" + std::string(1, c) + "' does not match the opening bracket");
        return false;
      }
      brackets_.pop_back();
      const int idx = emit(Tok::kOp, op, pos, len);
      r_.tokens[static_cast<std::size_t>(open)].partner = idx;
      r_.tokens[static_cast<std::size_t>(idx)].partner = open;
      return true;
    }
    emit(Tok::kOp, op, pos, len);
    return true;
  }

  static std::string printable(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) return std::string(1, c);
    static constexpr char kHex[] = "0123456789abcdef";
    return std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
  }

  std::string_view s_;
  TokenizeResult& r_;
  std::size_t i_ = 0;
  int line_ = 1;
  int fnest_ = 0;
  std::vector<std::size_t> indents_;
  std::vector<int> brackets_;  // token indices of open brackets / f-string starts
};

}  // namespace

TokenizeResult tokenize(std::string_view source) {
  TokenizeResult r;
  Lexer lexer(source, r);
  lexer.run();
  return r;
}

std::string_view string_body(std::string_view source, const Token& t) {
  std::string_view s = text(source, t);
  std::size_t p = 0;
  while (p < s.size() && s[p] != '"' && s[p] != '\'') ++p;
  const std::size_t q = (t.flags & kStrTriple) ? 3 : 1;
  if (s.size() < p + 2 * q) return {};
  return s.substr(p + q, s.size() - p - 2 * q);
}

}  // namespace kgym::screen
