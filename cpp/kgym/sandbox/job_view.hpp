// The job's view of the file system: a mount namespace whose root is a fresh tmpfs holding only
// what an evaluation needs, read-only (the system's programs and libraries, the Python
// installation, a few files of /etc and a generated /etc/passwd), the job directory writable, a
// private /tmp and /dev/shm, /dev reduced to a handful of nodes and the GPU's, and a /proc that
// shows a job only its own processes once it has left root. Service state, other jobs, the host's
// /tmp and the installed reference solutions are not in it: a file that is not mounted cannot be
// read, whatever the uid.
//
// Hand-written mount calls rather than bubblewrap or nsjail: both start by exec'ing a new
// process, and the warm fork server must keep its interpreter (no exec between fork and the
// job). The plan is made before fork (allocations, path resolution); the child only makes system
// calls from it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kgym::sandbox {

// A file that exists only inside a job's view.
inline constexpr const char* kViewMarker = "/etc/kgym-job-view";

// What the view must contain, in host paths. Paths that do not exist are skipped.
struct ViewSpec {
  std::vector<std::string> readonly;  // bound read-only at the same path
  std::vector<std::string> hidden;    // directories beneath `readonly` shown empty
  std::vector<std::string> writable;  // bound read-write at the same path (the job directory)
};

// The system part of every view: /usr and the top-level links into it, /sys and the /etc files
// that the dynamic loader, compilers and locales read.
std::vector<std::string> system_readonly_paths();

struct ViewOp {
  enum Kind : char {
    kMkdir,       // target
    kTouch,       // an empty file at target (a mount point for a file)
    kSymlink,     // target -> source
    kWrite,       // a file at target with `source` as its content
    kBindRo,      // source on target, read-only, recursively
    kBindRw,      // source on target
    kBindDevice,  // a device node source on target (writable, devices allowed)
    kTmpfs,       // a tmpfs on target with options `source`
    kHide,        // an empty read-only tmpfs on target
    kProc,        // a procfs on target that hides other uids' processes
    kSealRoot,    // the root tmpfs read-only
  };
  Kind kind;
  std::string source;
  std::string target;
};

struct ViewPlan {
  std::string root;  // the staging mount point, a directory the plan creates the root on
  std::vector<ViewOp> ops;
  std::string workdir;  // where the child goes after pivot_root
};

// Resolves the spec into operations. `root` is a directory that exists on the host (the job's
// own, e.g. <job directory>/.view); `workdir` is where the child starts.
ViewPlan plan_view(const ViewSpec& spec, const std::string& root, const std::string& workdir);

struct ViewFailure {
  int op = -1;  // index of the operation that failed (-1: none; -2: making the namespace root
                // private; -3: pivot_root)
  int error = 0;
};

// In the child, after unshare(CLONE_NEWNS): builds the view and pivots into it. Only system calls
// (async-signal-safe). On failure nothing has been pivoted: the caller's view of the host is
// unchanged.
ViewFailure apply_view(const ViewPlan& plan);

// A line for results.
std::string view_failure_note(const ViewPlan& plan, const ViewFailure& failure);

}  // namespace kgym::sandbox
