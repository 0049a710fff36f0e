#include "kgym/sandbox/runner_confinement.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "kgym/sandbox/write_fence.hpp"

namespace kgym::sandbox {
namespace {

LayerOutcome failed(const char* what) {
  return {false, fmt::format("{}: {}", what, std::strerror(errno))};
}

}  // namespace

LayerOutcome make_undumpable() {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return failed("prctl(PR_SET_DUMPABLE)");
  return {true, {}};
}

LayerOutcome new_pid_namespace_for_children() {
  if (unshare(CLONE_NEWPID) != 0) return failed("unshare(CLONE_NEWPID)");
  return {true, {}};
}

LayerOutcome drop_capabilities(std::int64_t uid) {
  // The bounding set first (needs CAP_SETPCAP, which is dropped last with the rest).
  for (int cap = 0; cap <= 63; ++cap) {
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 &&
        errno != EINVAL) {
      return failed("prctl(PR_CAPBSET_DROP)");
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return failed("prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  }
  // A new identity while CAP_SETUID and CAP_SETGID are still held; leaving uid 0 clears the
  // effective and permitted sets, and the capset below makes sure of it.
  if (uid > 0 && geteuid() == 0) {
    const auto id = static_cast<uid_t>(uid);
    if (setgroups(0, nullptr) != 0) return failed("setgroups");
    if (setresgid(id, id, id) != 0) return failed("setresgid");
    if (setresuid(id, id, id) != 0) return failed("setresuid");
    // Changing uid made the process non-dumpable, which gives its /proc/<pid> files to root:
    // the CUDA driver writes there. Another process of this uid still cannot reach it: each job
    // and each candidate has a PID namespace of its own (nothing to name it by) and ptrace and
    // process_vm_* are refused by the system call filter.
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return failed("prctl(PR_SET_DUMPABLE)");
  }
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (syscall(SYS_capset, &header, data) != 0) return failed("capset");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("prctl(PR_SET_NO_NEW_PRIVS)");
  // Read back: the effective set must be empty.
  __user_cap_data_struct check[_LINUX_CAPABILITY_U32S_3]{};
  if (syscall(SYS_capget, &header, check) != 0) return failed("capget");
  for (const auto& word : check) {
    if (word.effective != 0 || word.permitted != 0) {
      return {false, "capabilities remain after capset"};
    }
  }
  return {true, {}};
}

LayerOutcome fence_writes(const std::vector<std::string>& writable,
                          const std::vector<std::string>& devices) {
  WriteFence fence;
  prepare_fence(fence, writable, devices);
  const FenceStatus status = apply_fence(fence);
  if (status == FenceStatus::kFenced) return {true, {}};
  return {false, fence_note(status)};
}

LayerOutcome private_proc() {
  if (unshare(CLONE_NEWNS) != 0) return failed("unshare(CLONE_NEWNS)");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return failed("mount(MS_PRIVATE)");
  }
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return failed("mount(proc)");
  }
  return {true, {}};
}

LayerOutcome die_with_parent() {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return failed("prctl(PR_SET_PDEATHSIG)");
  return {true, {}};
}

}  // namespace kgym::sandbox
