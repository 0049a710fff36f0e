// The screen's rules, one purpose per file (docs/integrity-rules.md, "Static screen rules").
#pragma once

#include "kgym/screen/context.hpp"

namespace kgym::screen::rules {

void imports(Context& c);           // forbidden-import; functools caches (memoization)
void dynamic_code(Context& c);      // dynamic-code, non-ascii-identifier
void dunder_access(Context& c);     // dunder-access
void reference_access(Context& c);  // reference-access
void stores(Context& c);            // monkey-patch, global-state and memoization by assignment
void torch_state(Context& c);       // global-state calls, streams-events, torch internals
void tensor_subclass(Context& c);   // tensor-subclass
void forward_compute(Context& c);   // torch-compute in the forward path; memoization by mutation
void try_fallback(Context& c);      // try-fallback
void triton_kernel(Context& c);     // no-triton-kernel

// Whether the dotted name `q` is `p` or a name below it ("torch.cuda.x" is below "torch.cuda").
bool has_prefix(std::string_view q, std::string_view p);

// torch submodules and triton outside its kernel API, refused by forbidden-import (also as
// attribute chains).
bool forbidden_module(std::string_view qualified);

// All of them, in a fixed order.
void run_all(Context& c);

}  // namespace kgym::screen::rules
