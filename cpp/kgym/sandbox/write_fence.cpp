#include "kgym/sandbox/write_fence.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace kgym::sandbox {
namespace {

// ABI 3's right, a fixed kernel constant; older system headers (Debian 12's) lack the name.
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
constexpr std::uint64_t kTruncate = LANDLOCK_ACCESS_FS_TRUNCATE;
#else
constexpr std::uint64_t kTruncate = 1ULL << 14;
#endif

// Every right that writes, by the ABI version that introduced it.
std::uint64_t write_rights(long abi) {
  std::uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                         LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                         LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                         LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                         LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= kTruncate;
  return rights;
}

bool add_rule(int ruleset, int dir_fd, std::uint64_t rights) {
  landlock_path_beneath_attr rule{};
  rule.allowed_access = rights;
  rule.parent_fd = dir_fd;
  return syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0;
}

}  // namespace

WriteFence::~WriteFence() {
  for (int fd : writable_dirs) {
    if (fd >= 0) ::close(fd);
  }
  for (int fd : device_dirs) {
    if (fd >= 0) ::close(fd);
  }
}

void prepare_fence(WriteFence& fence, const std::vector<std::string>& writable,
                   const std::vector<std::string>& devices) {
  for (const auto& path : writable) {
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) continue;
    fence.writable_dirs.push_back(fd);
    fence.writable_paths.push_back(path);
  }
  for (const auto& path : devices) {
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) continue;
    fence.device_dirs.push_back(fd);
    fence.device_paths.push_back(path);
  }
}

void reopen_fence(WriteFence& fence) {
  auto reopen = [](std::vector<int>& fds, const std::vector<std::string>& paths) {
    for (size_t i = 0; i < fds.size() && i < paths.size(); ++i) {
      if (fds[i] >= 0) ::close(fds[i]);
      fds[i] = ::open(paths[i].c_str(), O_PATH | O_CLOEXEC);
    }
  };
  reopen(fence.writable_dirs, fence.writable_paths);
  reopen(fence.device_dirs, fence.device_paths);
}

FenceStatus apply_fence(const WriteFence& fence) {
  const long abi =
      syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return FenceStatus::kUnsupported;
  std::uint64_t rights = write_rights(abi);
  if (!fence.confine_existing) rights &= ~(LANDLOCK_ACCESS_FS_WRITE_FILE | kTruncate);
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = rights;
  const long ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) return errno == EOPNOTSUPP ? FenceStatus::kUnsupported : FenceStatus::kFailed;
  const int rs = static_cast<int>(ruleset);
  bool ok = true;
  for (int fd : fence.writable_dirs) ok = ok && (fd < 0 || add_rule(rs, fd, rights));
  // Device nodes (/dev/null, /dev/nvidia*) are opened read-write by CUDA and Python; nothing
  // may be created or removed there. The same rights on the child's own /proc entries.
  const std::uint64_t device_rights =
      (LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? kTruncate : 0)) & rights;
  // (None when existing files are not handled: Landlock refuses a rule without rights.)
  for (int fd : fence.device_dirs) {
    ok = ok && (fd < 0 || device_rights == 0 || add_rule(rs, fd, device_rights));
  }
  // The CUDA driver writes to files of its own process under /proc (cuInit fails with error
  // 304 otherwise). Opened here, in the child, so that the rule names the child's own
  // /proc/<pid> and not the supervisor's.
  const int own_proc = device_rights != 0 ? ::open("/proc/self", O_PATH | O_CLOEXEC) : -1;
  if (own_proc >= 0) {
    ok = ok && add_rule(rs, own_proc, device_rights);
    ::close(own_proc);
  }
  ok = ok && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
       syscall(SYS_landlock_restrict_self, rs, 0) == 0;
  ::close(rs);
  return ok ? FenceStatus::kFenced : FenceStatus::kFailed;
}

const char* fence_note(FenceStatus status) {
  switch (status) {
    case FenceStatus::kFenced:
      return "";
    case FenceStatus::kUnsupported:
      return "the kernel offers no Landlock: writes outside the job directory are not confined";
    case FenceStatus::kFailed:
      return "Landlock rules could not be applied: writes outside the job directory are not "
             "confined";
    case FenceStatus::kOff:
      return "write confinement was not asked for";
  }
  return "";
}

}  // namespace kgym::sandbox
