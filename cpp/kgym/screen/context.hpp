// What the rules share: the structure, the findings being collected, the forward path (the
// functions ModelNew.forward can reach), names bound in each scope and a light, flow-insensitive
// inference of what each local name holds (a tensor, a container, a scalar, a torch module...).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kgym/screen/screen.hpp"
#include "kgym/screen/structure.hpp"

namespace kgym::screen {

// What a name or an expression may hold (bit set; 0 = unknown).
enum Kind : std::uint8_t {
  kTensor = 1,
  kContainer = 2,
  kScalar = 4,
  kTorchObj = 8,     // a torch module / function object (nn.Linear(...), torch.relu)
  kCandidate = 16,   // an instance of a class defined in the candidate
  kElemTensor = 32,  // a container holding tensors
};

struct Scope {
  std::unordered_map<std::string_view, std::uint8_t> kinds;  // local name -> Kind bits
  std::unordered_set<std::string_view> locals;  // bound in the function (params excluded)
  std::unordered_set<std::string_view> params;
  std::string_view self_name;  // first parameter of a method ("self"), empty otherwise
};

class Context {
 public:
  Context(const Module& m, std::vector<Finding>& out);

  const Module& m;

  void add(std::string_view rule, bool reject, int line, std::string detail);

  // The class ModelNew (-1 when absent) and its entry methods (forward, __call__ ...).
  int model_class = -1;
  int forward = -1;
  std::vector<int> entries;
  std::vector<char> reachable;  // per function: on the forward path
  std::vector<int> reachable_order;

  // Module scope.
  std::unordered_set<std::string_view> module_names;       // bound at module level
  std::unordered_set<std::string_view> module_containers;  // module-level dict/list/set
  std::unordered_map<std::string_view, std::vector<std::pair<std::uint32_t, std::uint32_t>>>
      module_values;  // module-level `name = value` token ranges
  std::unordered_set<std::string_view> bound_by_definition;       // def/class/param/import names
  std::unordered_set<std::string_view> method_names;              // methods of candidate classes
  std::unordered_map<std::string_view, std::uint8_t> self_attrs;  // self.X -> Kind
  std::unordered_map<std::string_view, std::vector<std::pair<std::uint32_t, std::uint32_t>>>
      self_values;                                       // self.X = value ranges
  std::unordered_map<std::string_view, int> self_class;  // self.X = CandidateClass(...)
  std::unordered_set<std::string_view> kernelish;        // kernels and names holding kernels

  std::vector<int> tok_func;      // per token: the function whose statement holds it (-1: module)
  std::vector<int> tok_stmt;      // per token: its statement (-1 for NEWLINE / INDENT / DEDENT)
  std::vector<char> import_stmt;  // per statement: an import / from-import
  bool in_import(std::uint32_t tok) const {
    const int s = tok_stmt[tok];
    return s >= 0 && import_stmt[static_cast<std::size_t>(s)] != 0;
  }
  std::vector<Scope> scopes;     // per function (nested defs share their outermost's scope)
  int scope_of(int func) const;  // outermost enclosing function of `func`
  int func_of_stmt(std::size_t stmt) const;

  bool in_forward(int func) const {
    return func >= 0 && reachable[static_cast<std::size_t>(scope_of(func))] != 0;
  }

  // Expression kinds within a function's scope (func may be -1: module level).
  std::uint8_t expr_kind(std::uint32_t b, std::uint32_t e, int func);
  std::uint32_t primary_end(std::uint32_t k, std::uint32_t e) const;
  std::uint32_t primary_start(std::uint32_t j, std::uint32_t b) const;
  std::uint8_t primary_kind(std::uint32_t k, std::uint32_t pe, int func);
  void reset_memo() { memo_.assign(m.tokens.size(), 0xFF); }

  // Assignment targets of a statement: ranges before each top-level '=' (or an augmented
  // assignment / annotation), plus `del`, `for ... in`, `with ... as`, `except ... as`.
  struct Target {
    std::uint32_t b, e;
    bool del = false;
    bool aug = false;
  };
  void targets(const Stmt& st, std::vector<Target>& out) const;
  // Splits a target list into elements (recursing into parentheses / brackets).
  void target_elements(std::uint32_t b, std::uint32_t e,
                       std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) const;
  // The value range of a simple `targets = value` statement ({0,0} if none).
  std::pair<std::uint32_t, std::uint32_t> value_range(const Stmt& st) const;

  int find_method(int cls, std::string_view name, int depth = 0) const;
  bool class_has_torch_base(int cls) const;

 private:
  void infer_kinds();
  void propagate_arguments();

  std::vector<Finding>& out_;
  std::set<std::tuple<std::string, int, bool>> seen_;
  std::vector<std::uint8_t> memo_;
  std::vector<int> scope_cache_;
};

// Name tables (sorted, binary-searched).
bool is_compute_method(std::string_view name);
bool is_glue_method(std::string_view name);
bool is_meta_attr(std::string_view name);
bool is_forbidden_attr(std::string_view name);  // dunder-access names
bool is_torch_allowed_call(std::string_view qualified);
bool is_torch_dtype(std::string_view name);

}  // namespace kgym::screen
