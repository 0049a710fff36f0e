#include "kgym/sandbox/job_view.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include <fmt/format.h>

namespace kgym::sandbox {
namespace {

namespace fs = std::filesystem;

bool beneath(const std::string& path, const std::string& dir) {
  return path == dir || dir == "/" ||
         (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
          path[dir.size()] == '/');
}

// The path with its parent resolved (so that no component the plan creates is a link), or empty
// when the parent does not exist.
std::string resolve_parent(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (!p.is_absolute() || !p.has_filename()) return {};
  const auto parent = fs::canonical(p.parent_path(), ec);
  if (ec) return {};
  return (parent / p.filename()).string();
}

class Planner {
 public:
  Planner(ViewPlan& plan) : plan_(plan) {}

  void mkdirs(const std::string& host_dir) {
    if (host_dir == "/" || host_dir.empty()) return;
    if (made_.contains(host_dir)) return;
    mkdirs(fs::path(host_dir).parent_path().string());
    add(ViewOp::kMkdir, "", host_dir);
    made_.insert(host_dir);
  }

  void add(ViewOp::Kind kind, std::string source, const std::string& host_target) {
    plan_.ops.push_back({kind, std::move(source), plan_.root + host_target});
  }

  // A host file or directory bound at the same path (the mount point made to match).
  void bind(const std::string& path, ViewOp::Kind kind) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
      mkdirs(path);
    } else {
      mkdirs(fs::path(path).parent_path().string());
      add(ViewOp::kTouch, "", path);
    }
    add(kind, path, path);
  }

 private:
  ViewPlan& plan_;
  std::set<std::string> made_;
};

// The read-only entries, resolved: links become links in the view (and their targets entries of
// their own); entries beneath another are dropped.
void collect_readonly(const std::vector<std::string>& paths, std::vector<std::string>& binds,
                      std::vector<std::pair<std::string, std::string>>& links) {
  std::set<std::string> seen;
  std::vector<std::string> todo(paths.begin(), paths.end());
  std::vector<std::string> resolved;
  while (!todo.empty()) {
    const std::string path = resolve_parent(todo.back());
    todo.pop_back();
    // ("/" itself would be the whole host.)
    if (path.empty() || path == "/" || !seen.insert(path).second) continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const auto target = fs::read_symlink(path, ec);
      const auto real = fs::canonical(path, ec);
      if (ec) continue;
      links.emplace_back(target.string(), path);
      todo.push_back(real.string());
      continue;
    }
    resolved.push_back(path);
  }
  std::sort(resolved.begin(), resolved.end());
  for (const auto& path : resolved) {
    if (binds.empty() || !beneath(path, binds.back())) binds.push_back(path);
  }
  // A link beneath a bound directory is already there.
  std::erase_if(links, [&](const auto& link) {
    return std::any_of(binds.begin(), binds.end(),
                       [&](const std::string& dir) { return beneath(link.second, dir); });
  });
}

int bind_mount(const char* source, const char* target, std::uint64_t attributes) {
  if (mount(source, target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
  if (attributes == 0) return 0;
  mount_attr attr{};
  attr.attr_set = attributes;
  if (mount_setattr(AT_FDCWD, target, AT_RECURSIVE, &attr, sizeof attr) == 0) return 0;
  if (errno != ENOSYS) return errno;
  // Kernels before 5.12: the top mount only.
  unsigned long flags = MS_REMOUNT | MS_BIND;
  if ((attributes & MOUNT_ATTR_RDONLY) != 0) flags |= MS_RDONLY;
  if ((attributes & MOUNT_ATTR_NOSUID) != 0) flags |= MS_NOSUID;
  if ((attributes & MOUNT_ATTR_NODEV) != 0) flags |= MS_NODEV;
  return mount(nullptr, target, nullptr, flags, nullptr) == 0 ? 0 : errno;
}

int run_op(const ViewOp& op, const char* root) {
  const char* target = op.target.c_str();
  switch (op.kind) {
    case ViewOp::kMkdir:
      return ::mkdir(target, 0755) == 0 || errno == EEXIST ? 0 : errno;
    case ViewOp::kTouch: {
      const int fd = ::open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0) return errno == EEXIST ? 0 : errno;
      ::close(fd);
      return 0;
    }
    case ViewOp::kSymlink:
      return ::symlink(op.source.c_str(), target) == 0 || errno == EEXIST ? 0 : errno;
    case ViewOp::kWrite: {
      const int fd = ::open(target, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) return errno;
      const ssize_t n = ::write(fd, op.source.data(), op.source.size());
      const int err = errno;
      ::close(fd);
      return n == static_cast<ssize_t>(op.source.size()) ? 0 : (n < 0 ? err : EIO);
    }
    case ViewOp::kBindRo:
      return bind_mount(op.source.c_str(), target,
                        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    case ViewOp::kBindRw:
      return bind_mount(op.source.c_str(), target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    case ViewOp::kBindDevice:
      return bind_mount(op.source.c_str(), target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
    case ViewOp::kTmpfs:
      return mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, op.source.c_str()) == 0 ? 0
                                                                                           : errno;
    case ViewOp::kHide:
      return mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   "size=4k,mode=0555") == 0
                 ? 0
                 : errno;
    case ViewOp::kProc:
      // hidepid=2: once the job has left root it sees (and can name) only its own processes.
      return mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") == 0
                 ? 0
                 : errno;
    case ViewOp::kSealRoot:
      return mount(nullptr, root, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
                   nullptr) == 0
                 ? 0
                 : errno;
  }
  return EINVAL;
}

const char* describe(ViewOp::Kind kind) {
  switch (kind) {
    case ViewOp::kMkdir:
      return "making the directory";
    case ViewOp::kTouch:
      return "making the mount point";
    case ViewOp::kSymlink:
      return "making the link";
    case ViewOp::kWrite:
      return "writing";
    case ViewOp::kBindRo:
      return "binding read-only";
    case ViewOp::kBindRw:
      return "binding";
    case ViewOp::kBindDevice:
      return "binding the device";
    case ViewOp::kTmpfs:
      return "mounting a tmpfs on";
    case ViewOp::kHide:
      return "hiding";
    case ViewOp::kProc:
      return "mounting proc on";
    case ViewOp::kSealRoot:
      return "making read-only";
  }
  return "?";
}

}  // namespace

std::vector<std::string> system_readonly_paths() {
  return {"/usr",
          "/bin",
          "/sbin",
          "/lib",
          "/lib32",
          "/lib64",
          "/libx32",
          "/sys",
          "/etc/ld.so.cache",
          "/etc/ld.so.conf",
          "/etc/ld.so.conf.d",
          "/etc/alternatives",  // cc, c++ (Triton builds its launcher with the C compiler)
          "/etc/localtime",
          "/etc/nsswitch.conf",
          "/etc/hosts",
          "/etc/os-release"};
}

ViewPlan plan_view(const ViewSpec& spec, const std::string& root, const std::string& workdir) {
  ViewPlan plan;
  plan.root = root;
  plan.workdir = workdir;
  Planner p(plan);
  p.add(ViewOp::kTmpfs, "mode=0755,size=16m", "");

  // No host accounts (the job's uid has no name: USER and LOGNAME say "kgym").
  p.mkdirs("/etc");
  p.add(ViewOp::kWrite, "root:x:0:0:root:/:/usr/sbin/nologin\n", "/etc/passwd");
  p.add(ViewOp::kWrite, "root:x:0:\n", "/etc/group");
  // How the job knows it is in its view (the harness leaves root only there: outside it, the
  // sandbox uid might not be able to read the interpreter's installation).
  p.add(ViewOp::kWrite, "kgym job view\n", kViewMarker);

  // /dev: the harmless nodes and the GPU's.
  p.mkdirs("/dev");
  p.add(ViewOp::kTmpfs, "mode=0755,size=64k", "/dev");
  std::vector<std::string> devices = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                      "/dev/urandom"};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("nvidia")) devices.push_back(entry.path().string());
  }
  std::sort(devices.begin() + 5, devices.end());
  for (const auto& device : devices) p.bind(device, ViewOp::kBindDevice);
  p.mkdirs("/dev/shm");
  p.add(ViewOp::kTmpfs, "mode=1777,size=64m", "/dev/shm");
  p.add(ViewOp::kSymlink, "/proc/self/fd", "/dev/fd");
  p.add(ViewOp::kSymlink, "/proc/self/fd/0", "/dev/stdin");
  p.add(ViewOp::kSymlink, "/proc/self/fd/1", "/dev/stdout");
  p.add(ViewOp::kSymlink, "/proc/self/fd/2", "/dev/stderr");

  p.mkdirs("/tmp");
  p.add(ViewOp::kTmpfs, "mode=1777,size=64m", "/tmp");

  // After /tmp and /dev, so that their tmpfs do not cover what is bound beneath them.
  std::vector<std::string> binds;
  std::vector<std::pair<std::string, std::string>> links;
  collect_readonly(spec.readonly, binds, links);
  for (const auto& path : binds) p.bind(path, ViewOp::kBindRo);
  for (const auto& [target, path] : links) {
    p.mkdirs(fs::path(path).parent_path().string());
    p.add(ViewOp::kSymlink, target, path);
  }

  for (const auto& path : spec.writable) {
    const auto resolved = resolve_parent(path);
    if (!resolved.empty()) p.bind(resolved, ViewOp::kBindRw);
  }
  for (const auto& path : spec.hidden) {
    const auto resolved = resolve_parent(path);
    struct stat st {};
    if (resolved.empty() || ::stat(resolved.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (std::any_of(binds.begin(), binds.end(),
                    [&](const std::string& dir) { return beneath(resolved, dir); })) {
      p.add(ViewOp::kHide, "", resolved);
    }
  }
  p.mkdirs("/proc");
  p.add(ViewOp::kProc, "", "/proc");
  p.add(ViewOp::kSealRoot, "", "");
  return plan;
}

ViewFailure apply_view(const ViewPlan& plan) {
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return {-2, errno};
  const char* root = plan.root.c_str();
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const int err = run_op(plan.ops[i], root);
    if (err != 0) return {static_cast<int>(i), err};
  }
  // pivot_root(".", "."): the old root ends up stacked on the new one and is detached at once
  // (pivot_root(2), NOTES): nothing of the host stays reachable.
  if (::chdir(root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
      umount2(".", MNT_DETACH) != 0 || ::chdir(plan.workdir.c_str()) != 0) {
    return {-3, errno};
  }
  return {};
}

std::string view_failure_note(const ViewPlan& plan, const ViewFailure& failure) {
  const char* why = std::strerror(failure.error);
  if (failure.op == -2) return fmt::format("making the job's mounts private failed: {}", why);
  if (failure.op == -3) return fmt::format("pivot_root into the job's view failed: {}", why);
  if (failure.op < 0 || static_cast<size_t>(failure.op) >= plan.ops.size()) return {};
  const auto& op = plan.ops[static_cast<size_t>(failure.op)];
  std::string target = op.target.substr(std::min(plan.root.size(), op.target.size()));
  if (target.empty()) target = "/";
  return fmt::format("the job's file-system view could not be built ({} {}: {})", describe(op.kind),
                     target, why);
}

}  // namespace kgym::sandbox
