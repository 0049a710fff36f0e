#include "kgym/sandbox/syscall_filter.hpp"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#ifdef KGYM_HAVE_SECCOMP
#include <seccomp.h>
#endif

namespace kgym::sandbox {
namespace {

// The compiled programs, made before fork and only read after it.
std::vector<sock_filter>* g_job_program = nullptr;
std::vector<sock_filter>* g_full_program = nullptr;

bool needed_by_runner_confinement(const std::string& name) {
  return name == "mount" || name == "umount2";
}

#ifdef KGYM_HAVE_SECCOMP
std::vector<sock_filter>* build(FilterLevel level) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return nullptr;
  bool ok = true;
  for (const auto& name : refused_syscalls()) {
    if (level == FilterLevel::kJob && needed_by_runner_confinement(name)) continue;
    const int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) == 0;
  }
  // New user namespaces (the usual way into kernel code that needs privileges); new PID,
  // network or mount namespaces stay possible (the judge makes the runners' PID namespace).
  // (The comparison is spelled out: SCMP_A0 is a C compound literal.)
  const auto newuser = static_cast<scmp_datum_t>(CLONE_NEWUSER);
  const scmp_arg_cmp flags_have_newuser{0, SCMP_CMP_MASKED_EQ, newuser, newuser};
  ok = ok &&
       seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, flags_have_newuser) == 0;
  ok = ok &&
       seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, flags_have_newuser) == 0;
  // clone3 passes its flags in memory, out of a filter's reach: ENOSYS makes glibc fall back
  // to clone, whose flags are checked above.
  ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0;
  // The program, exported through a memfd into memory the child only reads.
  std::vector<sock_filter>* program = nullptr;
  const int fd = ok ? memfd_create("kgym-seccomp", MFD_CLOEXEC) : -1;
  if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0) {
    const off_t size = lseek(fd, 0, SEEK_END);
    if (size > 0 && size % static_cast<off_t>(sizeof(sock_filter)) == 0) {
      program = new std::vector<sock_filter>(static_cast<size_t>(size) / sizeof(sock_filter));
      if (pread(fd, program->data(), static_cast<size_t>(size), 0) != size) {
        delete program;
        program = nullptr;
      }
    }
  }
  if (fd >= 0) close(fd);
  seccomp_release(ctx);
  return program;
}
#endif

const std::vector<sock_filter>* program_for(FilterLevel level) {
  return level == FilterLevel::kJob ? g_job_program : g_full_program;
}

// no_new_privs, then the prepared program: for this thread (prctl, async-signal-safe) or for
// every thread of the process (seccomp() with TSYNC).
FilterStatus install(FilterLevel level, bool all_threads) {
  const auto* program = program_for(level);
  if (program == nullptr || program->empty()) return FilterStatus::kUnavailable;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return FilterStatus::kFailed;
  sock_fprog fprog{static_cast<unsigned short>(program->size()),
                   const_cast<sock_filter*>(program->data())};
  const long rc =
      all_threads ? syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog)
                  : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog);
  return rc == 0 ? FilterStatus::kOn : FilterStatus::kFailed;
}

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
    g_job_program = build(FilterLevel::kJob);
    g_full_program = build(FilterLevel::kFull);
  });
#endif
}

FilterStatus apply_syscall_filter(FilterLevel level) { return install(level, false); }

FilterStatus apply_syscall_filter_to_process(FilterLevel level) {
  prepare_syscall_filter();
  return install(level, true);
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
