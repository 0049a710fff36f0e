#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {

void run_all(Context& c) {
  imports(c);
  dynamic_code(c);
  dunder_access(c);
  reference_access(c);
  stores(c);
  torch_state(c);
  tensor_subclass(c);
  forward_compute(c);
  try_fallback(c);
  triton_kernel(c);
}

}  // namespace kgym::screen::rules
