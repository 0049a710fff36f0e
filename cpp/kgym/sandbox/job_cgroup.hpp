// Each job's own control group: its memory (swap included), its processes and threads, and its
// share of the CPU, limited and accounted by the kernel for everything the job runs (the judge,
// the task code it loads, both runners and whatever they start), whatever that code does with
// rlimits or from Python. A job over its memory limit is killed by the kernel's OOM killer
// within its own group, never a neighbour or the service; a fork past its pids limit fails.
//
// cgroup v2 is used where the service's own cgroup offers memory (a delegated subtree); else v1,
// where the memory hierarchy is mounted and writable; else none, and the Result says so
// (sandbox.resources.note). Where either lacks a pids controller (a container may delegate
// memory only), RLIMIT_NPROC on the job's uid holds its processes and threads instead. The
// supervisor makes the leaf before the job's child exists; the child moves itself into it first
// thing after fork (sandbox_child), so that nothing it starts is outside.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kgym::sandbox {

struct ResourceLimits {
  std::uint64_t memory_bytes = 0;  // RAM and swap together; 0: no limit
  std::uint64_t pids = 0;          // processes and threads together; 0: no limit
  std::uint64_t cpu_weight = 0;    // 1..10000, v2's scale (100: an equal share); 0: the default
  // The size of the job directory, a tmpfs the supervisor mounted (job_directory.hpp); 0: none.
  // Not the cgroup's: the supervisor watches whether it filled up.
  std::uint64_t disk_bytes = 0;
  bool needs_cgroup() const { return memory_bytes > 0 || pids > 0 || cpu_weight > 0; }
  bool operator==(const ResourceLimits&) const = default;
};

// What this machine offers, found once per process (thread-safe).
struct CgroupSupport {
  enum class Kind { kNone, kV1, kV2 };
  Kind kind = Kind::kNone;
  std::string note;  // why there is none, or what is missing (a controller)
  // The directories under which job leaves are made: one for v2; per controller for v1
  // ("" where that controller is missing).
  std::string v2_parent;
  bool v2_pids = false;  // v2's subtree has the pids controller too
  std::string v1_memory, v1_pids, v1_cpu;
  bool v1_swap = false;  // memory.memsw.* (swap accounting) present
  bool has_memory() const;
  bool has_pids() const;
  bool has_cpu() const;
  std::string name() const;  // "v2", "v1" or "none"
};
const CgroupSupport& cgroup_support();
// What the cgroup file systems in `mountinfo` (/proc/self/mountinfo's text) offer this process,
// a member of the groups in `self_cgroup` (/proc/self/cgroup's): as cgroup_support() finds it,
// which hands the controllers to a parent of job leaves (writes there).
CgroupSupport detect_cgroup_support(const std::string& mountinfo, const std::string& self_cgroup);

// A job's leaf: made (with its limits) by the constructor, emptied and removed by the
// destructor. Never throws: where it cannot be made, active() is false and note() says why.
class JobCgroup {
 public:
  JobCgroup(const std::string& name, const ResourceLimits& limits);
  // The same under `support` rather than this machine's (tests).
  JobCgroup(const CgroupSupport& support, const std::string& name, const ResourceLimits& limits);
  ~JobCgroup();
  JobCgroup(const JobCgroup&) = delete;
  JobCgroup& operator=(const JobCgroup&) = delete;

  bool active() const { return !procs_files_.empty(); }
  const std::string& note() const { return note_; }
  // The leaf's cgroup.procs files (one per v1 hierarchy): the child writes "0" into each.
  const std::vector<std::string>& procs_files() const { return procs_files_; }
  // Which limit the job ran into so far: "memory" (the OOM killer killed in the group), "pids"
  // (a fork was refused), or "". Reads the kernel's event counters.
  std::string breach() const;
  // The highest memory the group used (bytes) and its most processes and threads at once (0
  // where neither the kernel nor a sample says).
  std::uint64_t memory_peak() const;
  std::uint64_t pids_peak() const;
  // Where no pids controller counts the job's threads (RLIMIT_NPROC on its uid holds them
  // instead), counts them in the leaf: a job seen with as many as its limit has run into it
  // (``breach`` says "pids"). The supervisor calls it while the job runs.
  void sample();
  // Kills every process left in the group (repeated until none is).
  void kill_all() const;

 private:
  std::vector<std::string> dirs_;  // the leaf in each hierarchy it lives in
  std::vector<std::string> procs_files_;
  std::string memory_dir_, pids_dir_;
  bool v2_ = false;
  std::uint64_t pids_limit_ = 0;
  std::uint64_t sampled_pids_peak_ = 0;
  std::string note_;
};

// At start-up: empties and removes every job leaf under this process' parents (left by a
// service or worker that was killed). Returns how many it removed.
int sweep_job_cgroups();

}  // namespace kgym::sandbox
