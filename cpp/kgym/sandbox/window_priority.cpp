#include "kgym/sandbox/window_priority.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace kgym::sandbox {

pid_t process_group_of(pid_t pid) { return pid > 0 ? ::getpgid(pid) : -1; }

namespace {

// The kernel's struct sched_attr, first version (48 bytes): glibc before 2.41 has neither it nor
// a wrapper, and <linux/sched/types.h> cannot be included beside <sched.h>.
struct SchedAttr {
  std::uint32_t size = sizeof(SchedAttr);
  std::uint32_t sched_policy = SCHED_OTHER;
  std::uint64_t sched_flags = 0;
  std::int32_t sched_nice = 0;
  std::uint32_t sched_priority = 0;
  std::uint64_t sched_runtime = 0;  // for SCHED_OTHER: the thread's slice (0: the kernel's own)
  std::uint64_t sched_deadline = 0;
  std::uint64_t sched_period = 0;
};
static_assert(sizeof(SchedAttr) == 48);
constexpr std::uint64_t kResetOnFork = 0x01;  // SCHED_FLAG_RESET_ON_FORK

int set_attributes(pid_t pid, const SchedAttr& attr) {
  return static_cast<int>(::syscall(SYS_sched_setattr, pid, &attr, 0u));
}

// The ordinary policy at its strongest: nice -20 (87 times a nice-0 thread's share) and the
// shortest slice the kernel takes (0.1 ms), with which a woken thread preempts one on a longer
// slice at once on kernels that honour custom slices (6.12 on; older ones ignore the slice).
int raise_ordinary(pid_t pid) {
  SchedAttr attr;
  attr.sched_flags = kResetOnFork;
  attr.sched_nice = -20;
  attr.sched_runtime = 100'000;  // ns
  return set_attributes(pid, attr);
}

}  // namespace

std::string WindowPriority::raise(pid_t pgid, const std::vector<pid_t>& pids) {
  pgid_ = pgid;
  std::vector<std::string> problems;
  for (const pid_t pid : pids) {
    if (pid <= 0 || process_group_of(pid) != pgid) {
      problems.push_back(fmt::format("{}: not in the job's process group", pid));
      continue;
    }
    sched_param param{};
    param.sched_priority = 1;  // the lowest real-time priority: above every ordinary thread
    if (try_realtime_ && sched_setscheduler(pid, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) == 0) {
      raised_.push_back(pid);
      ++realtime_;
      continue;
    }
    // A real-time policy can be refused where root may still renice (a control group without
    // real-time runtime): the ordinary policy's strongest settings then.
    const int refused = try_realtime_ ? errno : 0;
    if (raise_ordinary(pid) == 0) {
      raised_.push_back(pid);
      continue;
    }
    problems.push_back(fmt::format("{}: SCHED_FIFO: {}; nice -20: {}", pid, std::strerror(refused),
                                   std::strerror(errno)));
  }
  if (problems.empty()) return {};
  return fmt::format("not raised: {}", fmt::join(problems, "; "));
}

std::string WindowPriority::policy() const {
  constexpr const char* kOrdinary = "nice -20, 0.1 ms slice";
  if (raised_.empty()) return "";
  if (realtime_ == 0) return kOrdinary;
  if (realtime_ == raised()) return "SCHED_FIFO";
  return fmt::format("SCHED_FIFO ({} of {} threads), {}", realtime_, raised(), kOrdinary);
}

void WindowPriority::lower() {
  for (const pid_t pid : raised_) {
    // Back to nice 0 and the kernel's own slice; a thread gone since is skipped, and so is its
    // pid if another process has taken it.
    if (process_group_of(pid) == pgid_) set_attributes(pid, SchedAttr{});
  }
  raised_.clear();
  realtime_ = 0;
}

}  // namespace kgym::sandbox
