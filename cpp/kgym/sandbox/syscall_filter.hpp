// A seccomp filter for every job child (and so every judge and runner it forks): system calls
// that no evaluation needs and that widen what untrusted code can reach in the kernel or in
// other processes are refused with EPERM (ptrace and cross-process memory, mounts, modules,
// kexec, BPF, keyrings, perf events, io_uring, user namespaces, clocks, reboot, swap, ...).
// Built with libseccomp (docs/sandbox.md lists the calls); a build without libseccomp reports
// the layer as unavailable, and the Result says so.
//
// A refusal list, not an allow list: CUDA's driver, Triton's compiler (which runs ptxas) and
// PyTorch make system calls that change between versions, and a refused call they need would
// turn every honest candidate into an infra error. What is refused is what they never use.
#pragma once

#include <string>
#include <vector>

namespace kgym::sandbox {

enum class FilterStatus : char {
  kOn = 'F',           // installed
  kOff = 'o',          // not asked for
  kUnavailable = 'u',  // built without libseccomp, or the filter could not be built
  kFailed = 'f',       // the kernel refused it
};

// Two filters, stacked (the kernel applies every filter a process has, so a later one can only
// refuse more):
//  - kJob, on every job child between fork and exec: everything below but mount and umount2,
//    which the judge's runners still need to mount a /proc of their own PID namespace;
//  - kFull, which the judge applies to itself once its runners exist, and each runner once its
//    confinement is done, before any task or candidate code runs.
enum class FilterLevel { kJob, kFull };

// Builds both filters once. Not async-signal-safe (libseccomp allocates): call it before fork.
void prepare_syscall_filter();

// Installs a prepared filter in the calling thread and its future children (no_new_privs
// first, as the kernel requires of an unprivileged process). Async-signal-safe: for the child
// between fork and exec, where it is the only thread.
FilterStatus apply_syscall_filter(FilterLevel level = FilterLevel::kJob);

// The same for every thread of the calling process (SECCOMP_FILTER_FLAG_TSYNC): for a Python
// process, which may have started threads. Builds the filters first if needed.
FilterStatus apply_syscall_filter_to_process(FilterLevel level);

// For the Result's sandbox.syscalls_note.
std::string syscall_filter_note(FilterStatus status);

// The refused calls by name (those this kernel's architecture has), for docs and tests.
const std::vector<std::string>& refused_syscalls();

}  // namespace kgym::sandbox
