#include "kgym/sandbox/syscall_filter.hpp"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#ifdef KGYM_HAVE_SECCOMP
#include <seccomp.h>
#endif

namespace kgym::sandbox {
namespace {

// The compiled program, made before fork and only read after it.
std::vector<sock_filter>* g_program = nullptr;

}  // namespace

const std::vector<std::string>& refused_syscalls() {
  static const std::vector<std::string> names = {
      // other processes' memory and state
      "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
      // the file system tree and handles outside it
      "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
      "fspick", "mount_setattr", "open_by_handle_at", "name_to_handle_at",
      // the kernel itself
      "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "bpf",
      "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
      "keyctl", "add_key", "request_key", "syslog", "lookup_dcookie", "fanotify_init",
      // the machine
      "reboot", "swapon", "swapoff", "acct", "quotactl", "settimeofday", "clock_settime",
      "clock_adjtime", "adjtimex", "iopl", "ioperm", "vhangup", "setns"};
  return names;
}

void prepare_syscall_filter() {
#ifdef KGYM_HAVE_SECCOMP
  static std::once_flag once;
  std::call_once(once, [] {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == nullptr) return;
    bool ok = true;
    for (const auto& name : refused_syscalls()) {
      const int nr = seccomp_syscall_resolve_name(name.c_str());
      if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
      ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) == 0;
    }
    // New user namespaces (the usual way into kernel code that needs privileges); new PID,
    // network or mount namespaces stay possible (the judge makes the runners' PID namespace).
    const auto newuser = static_cast<scmp_datum_t>(CLONE_NEWUSER);
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, newuser, newuser)) == 0;
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, newuser, newuser)) == 0;
    // clone3 passes its flags in memory, out of a filter's reach: ENOSYS makes glibc fall back
    // to clone, whose flags are checked above.
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0;
    // The program, exported through a memfd into memory the child only reads.
    const int fd = ok ? memfd_create("kgym-seccomp", MFD_CLOEXEC) : -1;
    if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0) {
      const off_t size = lseek(fd, 0, SEEK_END);
      if (size > 0 && size % static_cast<off_t>(sizeof(sock_filter)) == 0) {
        auto* program =
            new std::vector<sock_filter>(static_cast<size_t>(size) / sizeof(sock_filter));
        if (pread(fd, program->data(), static_cast<size_t>(size), 0) == size) {
          g_program = program;
        } else {
          delete program;
        }
      }
    }
    if (fd >= 0) close(fd);
    seccomp_release(ctx);
  });
#endif
}

FilterStatus apply_syscall_filter() {
  if (g_program == nullptr || g_program->empty()) return FilterStatus::kUnavailable;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return FilterStatus::kFailed;
  sock_fprog program{static_cast<unsigned short>(g_program->size()), g_program->data()};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) return FilterStatus::kFailed;
  return FilterStatus::kOn;
}

std::string syscall_filter_note(FilterStatus status) {
  switch (status) {
    case FilterStatus::kOn:
      return "";
    case FilterStatus::kOff:
      return "the system call filter was not asked for";
    case FilterStatus::kUnavailable:
#ifdef KGYM_HAVE_SECCOMP
      return "the system call filter could not be built";
#else
      return "kgym was built without libseccomp: no system call filter";
#endif
    case FilterStatus::kFailed:
      return "the kernel refused the seccomp filter";
  }
  return "unknown filter status";
}

}  // namespace kgym::sandbox
