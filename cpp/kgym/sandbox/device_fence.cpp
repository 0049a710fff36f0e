#include "kgym/sandbox/device_fence.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace kgym::sandbox {
namespace {

// Fixed kernel constants of ABI 3, 5 and 6; older system headers (Debian 12's) lack the names.
constexpr std::uint64_t kTruncate = 1ULL << 14;
constexpr std::uint64_t kIoctlDev = 1ULL << 15;
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
constexpr std::uint64_t kScopeSignal = 1ULL << 1;
constexpr long kNeededAbi = 6;

// The ruleset's attributes as ABI 6 has them (older headers have only the first field).
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

constexpr std::uint64_t kRead = LANDLOCK_ACCESS_FS_READ_FILE;
constexpr std::uint64_t kFileRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                      LANDLOCK_ACCESS_FS_EXECUTE | kTruncate | kIoctlDev;
// What the layer takes away unless a rule gives it back: reading, writing, ioctl on devices and
// every change to a directory (EXECUTE and reading directories are left to the layers below).
constexpr std::uint64_t kHandled =
    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | kTruncate | kIoctlDev |
    LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM |
    LANDLOCK_ACCESS_FS_REFER;
constexpr std::uint64_t kDevice =
    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | kTruncate | kIoctlDev;

LayerOutcome refused(const std::string& why) { return {false, why + ": " + std::strerror(errno)}; }

// One rule, for the file or directory at `path` (not followed when it is a link): `rights`, of
// which a file takes only the file rights; with `devices_only`, anything but a device node (a
// directory such as /dev/shm, a plain file) takes only reading.
bool allow(int ruleset, const std::filesystem::path& path, std::uint64_t rights,
           bool devices_only = false) {
  const int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return true;  // gone meanwhile: nothing to allow
  struct stat st {};
  bool ok = true;
  if (::fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
    if (devices_only && !S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) rights = kRead;
    landlock_path_beneath_attr rule{};
    rule.allowed_access = S_ISDIR(st.st_mode) ? rights : rights & kFileRights;
    rule.parent_fd = fd;
    ok = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0;
  }
  ::close(fd);
  return ok;
}

// Every entry of `dir` except `skip` (a name) and those whose names begin with `prefix` (when
// not empty).
bool allow_entries(int ruleset, const std::filesystem::path& dir, const std::string& skip,
                   const std::string& prefix, std::uint64_t rights, bool devices_only = false) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == skip || (!prefix.empty() && name.starts_with(prefix))) continue;
    if (!allow(ruleset, entry.path(), rights, devices_only)) return false;
  }
  return !ec;
}

}  // namespace

LayerOutcome fence_off_devices(const std::string& dir, const std::string& prefix,
                               const std::string& writable) {
  if (prefix.empty()) return {false, "no prefix: the layer would refuse nothing"};
  std::error_code ec;
  const auto target = std::filesystem::canonical(dir, ec);
  if (ec) return {false, "no " + dir + ": " + ec.message()};
  const auto own = std::filesystem::canonical(writable, ec);
  if (ec) return {false, "no " + writable + ": " + ec.message()};
  const long abi =
      syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return {false, "the kernel offers no Landlock"};
  if (abi < kNeededAbi) {
    return {false, "Landlock ABI " + std::to_string(abi) + ": the layer needs " +
                       std::to_string(kNeededAbi) + " (Linux 6.12), to scope signals"};
  }
  RulesetAttr attr;
  attr.handled_access_fs = kHandled;
  attr.scoped = kScopeSignal | kScopeAbstractUnixSocket;
  const long made = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (made < 0) return refused("landlock_create_ruleset");
  const int ruleset = static_cast<int>(made);
  // From / down to `dir`: at each level, every entry but the next one on the way.
  bool ok = true;
  std::filesystem::path at = "/";
  for (const auto& part : target.relative_path()) {
    ok = ok && allow_entries(ruleset, at, part.string(), "", kRead);
    at /= part;
  }
  ok = ok && allow_entries(ruleset, target, "", prefix, kDevice, /*devices_only=*/true) &&
       allow(ruleset, own, kHandled);
  if (!ok) {
    ::close(ruleset);
    return refused("landlock_add_rule");
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    const LayerOutcome out = refused("landlock_restrict_self");
    ::close(ruleset);
    return out;
  }
  ::close(ruleset);
  return {true, {}};
}

}  // namespace kgym::sandbox
