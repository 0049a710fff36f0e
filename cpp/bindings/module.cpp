// The kgym._core extension: one bind_* function per C++ module, each in its own file here.
#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace kgym::bindings {
void bind_check(nb::module_& m);
void bind_channel(nb::module_& m);
void bind_confine(nb::module_& m);
void bind_forkserver(nb::module_& m);
void bind_result(nb::module_& m);
void bind_rl(nb::module_& m);
void bind_screen(nb::module_& m);
}  // namespace kgym::bindings

NB_MODULE(_core, m) {
  m.doc() = "kgym's C++ core: extraction, sandboxed evaluation, results, rewards and RL maths";
  kgym::bindings::bind_check(m);
  kgym::bindings::bind_channel(m);
  kgym::bindings::bind_confine(m);
  kgym::bindings::bind_forkserver(m);
  kgym::bindings::bind_result(m);
  kgym::bindings::bind_rl(m);
  kgym::bindings::bind_screen(m);
}
