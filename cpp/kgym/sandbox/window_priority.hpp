// The CPU priority of a job's timing window. A sample is read on the judge's clock across two
// process wake-ups (the runner's on the judge's request, the judge's on the runner's reply), and
// a wake-up that finds every core busy waits for a core: with as many busy processes as cores
// beside one evaluation, a 0.08 ms kernel's windows all ran to their budget and its speedups
// spread from 0.70 to 1.82 (bench/window_interference). A
// real-time thread preempts an ordinary one as soon as it wakes; an ordinary one does when its
// slice is shorter than the running thread's (kernels from 6.12).
//
// So while a job times, the supervisor (which may: CAP_SYS_NICE) gives exactly three threads
// SCHED_FIFO at the lowest real-time priority: the main threads of the judge and of its two
// runners, whose process ids the judge reports in its sealed `timing` record. Each must belong to
// the job's process group. Where the real-time policy is refused (a control group without
// real-time runtime), they get the ordinary policy's strongest settings instead: nice -20 and a
// 0.1 ms slice (with which a woken thread preempts at once on kernels from 6.12). Either way
// the reset-on-fork flag makes every thread or process they start an ordinary one, and the job,
// unprivileged, can neither make its other threads real-time nor lower their nice value (its
// RLIMIT_RTPRIO and RLIMIT_NICE are 0: child_setup.cpp), so a hostile candidate gets at most its
// runner's main thread: one core (under SCHED_FIFO the kernel's real-time throttling still leaves
// 5% of each second to others), and only until the window ends (the judge's next record) or the
// job does.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kgym::sandbox {

// Raises the given threads for one window; lowers them again in lower() or on destruction.
class WindowPriority {
 public:
  // try_realtime = false goes straight to the ordinary settings (for tests of that path).
  explicit WindowPriority(bool try_realtime = true) : try_realtime_(try_realtime) {}
  ~WindowPriority() { lower(); }
  WindowPriority(const WindowPriority&) = delete;
  WindowPriority& operator=(const WindowPriority&) = delete;

  // Raises each of `pids` (main threads) that is in process group `pgid`; the others are left
  // as they are. Returns an empty string when every one was raised, else why not (the ones
  // raised stay raised: a window with two of its three threads raised is still better off).
  std::string raise(pid_t pgid, const std::vector<pid_t>& pids);
  // Back to the ordinary policy (threads gone since, or no longer in the group, are skipped).
  // Safe to call twice.
  void lower();
  int raised() const { return static_cast<int>(raised_.size()); }
  // "SCHED_FIFO", "nice -20, 0.1 ms slice", both (some threads each), or empty when none is
  // raised.
  std::string policy() const;

 private:
  bool try_realtime_;
  pid_t pgid_ = -1;  // the job's process group: only its processes are raised or lowered
  std::vector<pid_t> raised_;
  int realtime_ = 0;  // how many of raised_ got SCHED_FIFO (the others the ordinary settings)
};

// The process group of `pid` (getpgid), or -1 when there is no such process.
pid_t process_group_of(pid_t pid);

}  // namespace kgym::sandbox
