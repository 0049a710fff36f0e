// Confinement of the processes the judge forks to run code (the candidate's runner and the
// reference's). The judge and its runners share a uid (CUDA IPC refuses anything else), so the
// boundary between them is made of what a uid does not give: no capabilities (a process without
// CAP_SYS_PTRACE cannot read or trace a non-dumpable process of its own uid), a PID namespace of
// its own (it cannot name, and so cannot signal, the judge or the other runner, and everything it
// starts dies with it), no_new_privs, and a write fence narrower than the job's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kgym::sandbox {

// What one layer did: applied, or why not.
struct LayerOutcome {
  bool applied = false;
  std::string note;  // empty when applied
};

// Marks the calling process non-dumpable: processes of the same uid without CAP_SYS_PTRACE can
// then neither ptrace it nor read its /proc/<pid>/{mem,environ,maps}.
LayerOutcome make_undumpable();

// unshare(CLONE_NEWPID): the caller's next child is PID 1 of a new PID namespace (needs
// CAP_SYS_ADMIN). The caller itself stays where it is; every later child goes into that
// namespace too, so the judge forks its trusted runner first.
LayerOutcome new_pid_namespace_for_children();

// Drops every capability (effective, permitted, inheritable, the bounding set and the ambient
// set) and sets no_new_privs. With `uid` > 0 and a root caller, the process also becomes that
// uid (and gid, with no supplementary groups) on the way: it then owns nothing of the host's,
// and the processes of other uids are out of its reach. Otherwise it keeps its uid.
LayerOutcome drop_capabilities(std::int64_t uid = -1);

// A Landlock write fence stacked on the job's: writes only beneath `writable`; existing files
// beneath `devices` may be opened for writing (device nodes).
LayerOutcome fence_writes(const std::vector<std::string>& writable,
                          const std::vector<std::string>& devices);

// A mount namespace of its own with a procfs of the caller's PID namespace on /proc (needs
// CAP_SYS_ADMIN; call it in PID 1 of a new PID namespace). The CUDA driver reads and writes
// /proc/<its pid>: with the host's procfs, that names another process.
LayerOutcome private_proc();

// Sets PR_SET_PDEATHSIG to SIGKILL: the process dies with its parent (the judge).
LayerOutcome die_with_parent();

}  // namespace kgym::sandbox
