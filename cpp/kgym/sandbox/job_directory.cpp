#include "kgym/sandbox/job_directory.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace kgym::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "kgym-job-";
constexpr const char* kLockSuffix = ".lock";

// Mount points at or below `dir`, deepest first (mountinfo escapes blanks as octal).
std::vector<std::string> mounts_under(const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    std::string decoded;
    for (std::size_t i = 0; i < point.size(); ++i) {
      if (point[i] == '\\' && i + 3 < point.size()) {
        decoded += static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        decoded += point[i];
      }
    }
    if (decoded == dir || decoded.starts_with(dir + "/")) out.push_back(decoded);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return out;
}

}  // namespace

JobDirectory::JobDirectory(const std::string& scratch, std::uint64_t size_bytes) {
  std::string pattern = (fs::path(scratch) / (std::string(kPrefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(
        fmt::format("cannot create a job directory in {}: {}", scratch, std::strerror(errno)));
  }
  path_ = pattern;
  // Held until the destructor, and by the kernel until this process ends: a sweep by another
  // supervisor leaves the directory alone while it is. Close-on-exec, and closed in the job's
  // child with its other descriptors, so the job never holds it.
  lock_fd_ = ::open((path_ + kLockSuffix).c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX) != 0) {
    const std::string why = std::strerror(errno);
    remove_job_directory(path_);
    if (lock_fd_ >= 0) ::close(lock_fd_);
    ::unlink((path_ + kLockSuffix).c_str());
    throw std::runtime_error(fmt::format("cannot lock the job directory {}: {}", path_, why));
  }
  if (size_bytes == 0) return;
  // Inodes bounded too (a job of empty files costs memory, not blocks): one per 16 KiB.
  const auto inodes = std::max<std::uint64_t>(4096, size_bytes / 16384);
  const auto options = fmt::format("size={},nr_inodes={},mode=0700", size_bytes, inodes);
  if (::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0) {
    mounted_ = true;
  } else {
    note_ = fmt::format("the job directory could not be given a size limit (mount tmpfs: {})",
                        std::strerror(errno));
  }
}

JobDirectory::~JobDirectory() {
  if (path_.empty()) return;
  remove_job_directory(path_);
  ::unlink((path_ + kLockSuffix).c_str());
  ::close(lock_fd_);
}

void remove_job_directory(const std::string& path) {
  // Detached, not unmounted: a process that still holds a file there cannot keep it mounted.
  for (const auto& point : mounts_under(path)) ::umount2(point.c_str(), MNT_DETACH);
  std::error_code ec;
  // The harness made it its job's uid's, without write permission for others.
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add | fs::perm_options::nofollow,
                  ec);
  fs::remove_all(path, ec);
}

int sweep_job_directories(const std::string& scratch) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(scratch, ec)) {
    const auto name = entry.path().filename().string();
    if (!name.starts_with(kPrefix) || entry.is_symlink(ec)) continue;
    if (entry.is_directory(ec)) {
      remove_job_directory(entry.path().string());
      ++removed;
    } else if (name.ends_with(kLockSuffix)) {
      fs::remove(entry.path(), ec);
    }
  }
  return removed;
}

int sweep_abandoned_job_directories(const std::string& scratch, int min_age_s) {
  int removed = 0;
  std::error_code ec;
  const auto now = ::time(nullptr);
  for (const auto& entry : fs::directory_iterator(scratch, ec)) {
    const auto lock = entry.path().string();
    const auto name = entry.path().filename().string();
    if (!name.starts_with(kPrefix) || !name.ends_with(kLockSuffix)) continue;
    struct stat st {};
    // Only locks this uid made: in a shared /tmp another user could plant a lock beside a
    // directory of their choosing.
    if (::lstat(lock.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
      continue;
    }
    if (now - st.st_mtime < min_age_s) continue;
    const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {  // its supervisor is gone
      const auto dir = lock.substr(0, lock.size() - std::string(kLockSuffix).size());
      if (fs::is_directory(fs::symlink_status(dir, ec))) {
        remove_job_directory(dir);
        ++removed;
      }
      ::unlink(lock.c_str());
    }
    ::close(fd);
  }
  return removed;
}

std::string own_mount_namespace() {
  if (::geteuid() != 0) return "not root";
  if (::unshare(CLONE_NEWNS) != 0) return fmt::format("unshare: {}", std::strerror(errno));
  // A copy of the host's mounts, still receiving its new ones: a slave, not a peer.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    return fmt::format("mount --make-rslave /: {}", std::strerror(errno));
  }
  return "";
}

}  // namespace kgym::sandbox
