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
#include <vector>

namespace kgym::sandbox {
namespace {

constexpr std::uint64_t kFileRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE;
// A layer that does not handle REFER refuses every move of a file into another directory
// (EXDEV; Triton writes its cache entries into a scratch directory and moves them up), so it
// is handled where the kernel has it (ABI 2) and allowed on every directory that gets a rule.
std::uint64_t handled_rights(long abi) {
  return kFileRights | (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0);
}

LayerOutcome refused(const std::string& why) { return {false, why + ": " + std::strerror(errno)}; }

// One rule, for the file or directory at `path` (not followed when it is a link): `rights`, of
// which a file takes only the file rights.
bool allow(int ruleset, const std::filesystem::path& path, std::uint64_t rights) {
  const int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return true;  // gone meanwhile: nothing to allow
  struct stat st {};
  bool ok = true;
  if (::fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
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
                   const std::string& prefix, std::uint64_t rights) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == skip || (!prefix.empty() && name.starts_with(prefix))) continue;
    if (!allow(ruleset, entry.path(), rights)) return false;
  }
  return !ec;
}

}  // namespace

LayerOutcome fence_off_devices(const std::string& dir, const std::string& prefix) {
  if (prefix.empty()) return {false, "no prefix: the layer would refuse nothing"};
  std::error_code ec;
  const auto target = std::filesystem::canonical(dir, ec);
  if (ec) return {false, "no " + dir + ": " + ec.message()};
  const long abi =
      syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return {false, "the kernel offers no Landlock"};
  landlock_ruleset_attr attr{};
  const std::uint64_t rights = handled_rights(abi);
  attr.handled_access_fs = rights;
  const long made = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (made < 0) return refused("landlock_create_ruleset");
  const int ruleset = static_cast<int>(made);
  // From / down to `dir`: at each level, every entry but the next one on the way.
  bool ok = true;
  std::filesystem::path at = "/";
  for (const auto& part : target.relative_path()) {
    ok = ok && allow_entries(ruleset, at, part.string(), "", rights);
    at /= part;
  }
  ok = ok && allow_entries(ruleset, target, "", prefix, rights);
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
