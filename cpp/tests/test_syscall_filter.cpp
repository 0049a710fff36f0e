// The job child's system call filter: refused calls fail with EPERM in the child and in what it
// execs, the calls evaluations need still work, and the outcome says the layer is on. (mount
// stays open at this level for the runners' private /proc; the judge and the runners add the
// full filter themselves, tests/test_containment.py.)
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kgym/sandbox/child_process.hpp"
#include "kgym/sandbox/syscall_filter.hpp"

namespace {
using kgym::sandbox::ChildSpec;
using kgym::sandbox::command_line;
using kgym::sandbox::run_child;

// Python through ctypes, so that the raw system calls are made as the candidate could.
ChildSpec python(const std::string& code) {
  ChildSpec spec;
  spec.program = command_line({"/usr/bin/python3", "-I", "-c", code});
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.workdir = "/tmp";
  spec.limits.wall_seconds = 30;
  return spec;
}

constexpr const char* kProbe = R"(
import ctypes, errno, os, threading
libc = ctypes.CDLL(None, use_errno=True)
def refused(rc):
    return rc == -1 and ctypes.get_errno() == errno.EPERM
checks = {
    "ptrace": refused(libc.ptrace(0, 0, None, None)),
    "unshare_user": refused(libc.unshare(0x10000000)),
    "keyctl": refused(libc.syscall(250, 0, 0, 0, 0)),
    "bpf": refused(libc.syscall(321, 0, 0, 0)),
}
# What evaluations need still works: threads, processes, a new PID namespace is not refused
# by the filter (it may still need privileges the machine lacks).
t = threading.Thread(target=lambda: None); t.start(); t.join()
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
bad = [k for k, ok in checks.items() if not ok]
print("refused" if not bad else "allowed: " + ",".join(bad))
)";

TEST(SyscallFilter, RefusedCallsFailWithEpermAndTheRestWorks) {
  const auto out = run_child(python(kProbe));
  ASSERT_TRUE(out.started) << out.start_error;
#ifdef KGYM_HAVE_SECCOMP
  EXPECT_TRUE(out.syscalls_filtered) << out.syscalls_note;
  EXPECT_EQ(out.stdout_tail, "refused\n") << out.stderr_tail;
#else
  EXPECT_FALSE(out.syscalls_filtered);
  EXPECT_FALSE(out.syscalls_note.empty());
#endif
  EXPECT_EQ(out.exit_code, 0) << out.stderr_tail;
}

TEST(SyscallFilter, OffWhenNotAskedFor) {
  auto spec = python("print('ok')");
  spec.limits.filter_syscalls = false;
  const auto out = run_child(spec);
  EXPECT_FALSE(out.syscalls_filtered);
  EXPECT_EQ(out.syscalls_note, "");
  EXPECT_EQ(out.stdout_tail, "ok\n");
}

TEST(SyscallFilter, RefusedListNamesTheDangerousCalls) {
  const auto& names = kgym::sandbox::refused_syscalls();
  for (const char* name : {"ptrace", "bpf", "mount", "kexec_load", "init_module", "keyctl"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

}  // namespace
