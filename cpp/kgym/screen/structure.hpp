// The structural pass of the static screen: statements grouped into blocks, `def` / `class` with
// decorators and parameters, Triton kernels, import aliases, and the functions that
// `ModelNew.forward` can reach by name. No expression parser: rules work on token ranges.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kgym/screen/tokenizer.hpp"

namespace kgym::screen {

struct Stmt {
  std::uint32_t begin = 0, end = 0;  // token range [begin, end), no NEWLINE/INDENT/DEDENT
  int level = 0;                     // block depth (an inline body is one deeper than its header)
  int line = 0;
  int func = -1;        // innermost enclosing function (index in Module::funcs), -1 at module level
  int cls = -1;         // innermost enclosing class body
  bool header = false;  // a compound statement's header (ends with its ':', excluded)
};

struct Param {
  std::uint32_t name = 0;  // token index
  std::int32_t ann_begin = -1, ann_end = -1;
  std::int32_t def_begin = -1, def_end = -1;
  int stars = 0;  // 1 for *args, 2 for **kwargs
};

struct FunctionDef {
  std::string_view name;
  int line = 0;
  int header = 0;               // statement index of `def`
  int body_end = 0;             // one past the last statement of the body
  std::uint32_t tok_end = 0;    // one past the last token of the body
  std::vector<int> decorators;  // statement indices of `@...` lines
  int cls = -1;                 // the class whose body defines it directly (a method)
  int parent_func = -1;         // the enclosing function (a nested def)
  bool is_kernel = false;       // @triton.jit / autotune / heuristics
  bool is_staticmethod = false;
  std::vector<Param> params;
};

struct ClassDef {
  std::string_view name;
  int line = 0;
  int header = 0;
  int body_end = 0;
  std::int32_t bases_begin = -1, bases_end = -1;  // tokens inside the parentheses
  int parent_func = -1;
  std::vector<int> methods;  // FunctionDef indices
};

struct Import {
  int line = 0;
  int stmt = 0;
  std::string module;  // the imported module's dotted name ("" for a relative import)
  bool relative = false;
  bool from = false;               // `from X import ...`
  std::vector<std::string> names;  // `from X import a, b`: the imported names
};

struct Module {
  std::string_view src;
  std::vector<Token> tokens;
  std::vector<Stmt> stmts;
  std::vector<FunctionDef> funcs;
  std::vector<ClassDef> classes;
  std::vector<Import> imports;
  // A local name bound to a module or a module attribute: `F` -> "torch.nn.functional".
  std::unordered_map<std::string_view, std::string> aliases;
  std::unordered_map<std::string_view, int> top_funcs;    // module-level functions by name
  std::unordered_map<std::string_view, int> top_classes;  // module-level classes by name
  std::unordered_set<std::string_view> kernels;           // names bound to Triton kernels
  std::vector<std::uint8_t> alias_root;  // per token: 1 when a Name resolves through `aliases`
  bool ok = true;
  int error_line = 0;
  std::string error;

  std::string_view sv(std::uint32_t i) const { return text(src, tokens[i]); }
  bool is_op(std::uint32_t i, Op op) const {
    return i < tokens.size() && tokens[i].kind == Tok::kOp && tokens[i].op == op;
  }
  bool is_name(std::uint32_t i) const { return i < tokens.size() && tokens[i].kind == Tok::kName; }
  bool is_kw(std::uint32_t i, std::string_view kw) const {
    return i < tokens.size() && tokens[i].kind == Tok::kKeyword && sv(i) == kw;
  }
  // Qualified name of the dotted chain tokens[root] . name . name ... ending at `last`, with the
  // root resolved through the aliases ("" when the root is not an alias). Capped in length.
  std::string qualify(std::uint32_t root, std::uint32_t last) const;
  // End (exclusive) of the Name(.Name)* chain starting at `root`.
  std::uint32_t chain_end(std::uint32_t root, std::uint32_t limit) const;
};

Module analyse_structure(std::string_view source);

}  // namespace kgym::screen
