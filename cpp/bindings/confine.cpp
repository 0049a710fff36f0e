// The confinement layers the judge applies to itself and to the runners it forks
// (kgym/sandbox/runner_confinement.hpp). Each call returns (applied, note).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "kgym/sandbox/device_fence.hpp"
#include "kgym/sandbox/runner_confinement.hpp"
#include "kgym/sandbox/syscall_filter.hpp"

namespace nb = nanobind;

namespace kgym::bindings {
namespace {

std::pair<bool, std::string> as_pair(const sandbox::LayerOutcome& outcome) {
  return {outcome.applied, outcome.note};
}

}  // namespace

void bind_confine(nb::module_& m) {
  m.def(
      "confine_undumpable", [] { return as_pair(sandbox::make_undumpable()); },
      "Marks this process non-dumpable (no ptrace or /proc/<pid>/mem by its uid without "
      "CAP_SYS_PTRACE).");
  m.def(
      "confine_new_pid_namespace",
      [] { return as_pair(sandbox::new_pid_namespace_for_children()); },
      "unshare(CLONE_NEWPID): this process's next child is PID 1 of a new PID namespace.");
  m.def(
      "confine_drop_capabilities",
      [](std::int64_t uid) { return as_pair(sandbox::drop_capabilities(uid)); },
      nb::arg("uid") = -1,
      "Drops every capability and sets no_new_privs; with uid > 0 (and root) becomes that uid.");
  m.def(
      "confine_writes",
      [](const std::vector<std::string>& writable, const std::vector<std::string>& devices) {
        return as_pair(sandbox::fence_writes(writable, devices));
      },
      nb::arg("writable"), nb::arg("devices"),
      "A Landlock write fence stacked on any already in force.");
  m.def(
      "confine_away_from_devices",
      [](const std::string& writable, const std::string& dir, const std::string& prefix) {
        return as_pair(sandbox::fence_off_devices(dir, prefix, writable));
      },
      nb::arg("writable"), nb::arg("dir") = "/dev", nb::arg("prefix") = "nvidia",
      "A Landlock layer under which no file beneath DIR/PREFIX* opens (the GPU's device nodes), "
      "no device file reached otherwise takes an ioctl, files are written only beneath WRITABLE "
      "(and device nodes under DIR), and no signal leaves the layer.");
  m.def(
      "confine_private_proc", [] { return as_pair(sandbox::private_proc()); },
      "A mount namespace of its own with a procfs of this PID namespace on /proc.");
  m.def(
      "confine_syscalls",
      [] {
        const auto status = sandbox::apply_syscall_filter_to_process(sandbox::FilterLevel::kFull);
        return std::pair<bool, std::string>(status == sandbox::FilterStatus::kOn,
                                            sandbox::syscall_filter_note(status));
      },
      "The full seccomp filter on every thread of this process (after the confinement steps "
      "that need mount).");
  m.def(
      "confine_die_with_parent", [] { return as_pair(sandbox::die_with_parent()); },
      "SIGKILL when the parent dies.");
}

}  // namespace kgym::bindings
