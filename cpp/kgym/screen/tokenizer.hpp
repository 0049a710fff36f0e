// A Python tokenizer for the static screen: the token stream of CPython's tokenizer (names,
// keywords, numbers, strings, operators, NEWLINE / INDENT / DEDENT), written for hostile input.
// Tokens point into the source (no per-token allocation). f-strings are emitted as FStringStart,
// the tokens of their `{}` expressions, FStringEnd, so that names inside them are seen too.
// Errors (unterminated strings, unbalanced brackets, bad indentation, NUL bytes, invalid UTF-8,
// nesting past CPython's limits) stop tokenization and are reported with a line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kgym::screen {

enum class Tok : std::uint8_t {
  kName,
  kKeyword,
  kNumber,
  kString,
  kFStringStart,
  kFStringEnd,
  kOp,
  kNewline,
  kIndent,
  kDedent,
  kEnd,
};

enum class Op : std::uint8_t {
  kNone,
  kLPar,
  kRPar,
  kLSqb,
  kRSqb,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kSemi,
  kAssign,     // =
  kAugAssign,  // += -= *= /= //= %= **= @= &= |= ^= <<= >>=
  kWalrus,     // :=
  kArrow,      // ->
  kAt,         // @
  kPlus,
  kMinus,
  kStar,
  kDStar,
  kSlash,
  kDSlash,
  kPercent,
  kAmp,
  kPipe,
  kCaret,
  kTilde,
  kLShift,
  kRShift,
  kCompare,  // < > <= >= == !=
  kEllipsis,
  kFSep,  // end of one f-string replacement field (no source text)
};

// String token flags (Token::flags).
inline constexpr std::uint8_t kStrRaw = 1, kStrBytes = 2, kStrF = 4, kStrEscape = 8,
                              kStrTriple = 16;

struct Token {
  std::uint32_t pos = 0;      // byte offset in the source
  std::uint32_t len = 0;      // byte length
  std::int32_t line = 0;      // 1-based line of the first byte
  std::int32_t partner = -1;  // matching bracket / f-string delimiter token index
  Tok kind = Tok::kEnd;
  Op op = Op::kNone;
  std::uint8_t flags = 0;   // strings: kStr*; names: 1 when the identifier is not ASCII
  std::uint16_t depth = 0;  // bracket nesting (an opening and its closing share it)
};

struct TokenizeResult {
  std::vector<Token> tokens;  // ends with kEnd when ok
  bool ok = true;
  int error_line = 0;
  std::string error;
};

// Tokenizes `source`. Never throws on bad input; errors are reported in the result.
TokenizeResult tokenize(std::string_view source);

inline std::string_view text(std::string_view source, const Token& t) {
  return source.substr(t.pos, t.len);
}

// The body of a string token (between the quotes, prefix removed, escapes untouched).
std::string_view string_body(std::string_view source, const Token& t);

}  // namespace kgym::screen
