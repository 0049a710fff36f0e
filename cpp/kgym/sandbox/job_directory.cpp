#include "kgym/sandbox/job_directory.hpp"

#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
  if (!path_.empty()) remove_job_directory(path_);
}

void remove_job_directory(const std::string& path) {
  // Detached, not unmounted: a process that still holds a file there cannot keep it mounted.
  for (const auto& point : mounts_under(path)) ::umount2(point.c_str(), MNT_DETACH);
  std::error_code ec;
  // The harness made it its job's uid's, without write permission for others.
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path, ec);
}

int sweep_job_directories(const std::string& scratch) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(scratch, ec)) {
    const auto name = entry.path().filename().string();
    if (!name.starts_with(kPrefix) || entry.is_symlink(ec) || !entry.is_directory(ec)) continue;
    remove_job_directory(entry.path().string());
    ++removed;
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
