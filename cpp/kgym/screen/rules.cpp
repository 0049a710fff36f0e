#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {

bool has_prefix(std::string_view q, std::string_view p) {
  return q == p || (q.size() > p.size() && q.substr(0, p.size()) == p && q[p.size()] == '.');
}

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
