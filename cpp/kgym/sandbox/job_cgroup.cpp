#include "kgym/sandbox/job_cgroup.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace kgym::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr const char* kParentName = "kgym-jobs";
constexpr const char* kLeafPrefix = "job-";
constexpr const char* kNoPidsNote =
    "no pids controller: the job's processes and threads are held by RLIMIT_NPROC on its uid "
    "(pids_limit) instead, and counted by the supervisor in the job's cgroup";

struct Mount {
  std::string root;   // the mount's root within its hierarchy
  std::string point;  // where it is mounted
  std::string type;   // cgroup | cgroup2
  std::string options;
};

// mountinfo escapes blanks in paths as octal (\040).
std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string digits = s.substr(i + 1, 3);
      if (digits.size() == 3 &&
          std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>(std::stoi(digits, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<Mount> cgroup_mounts(const std::string& mountinfo) {
  std::vector<Mount> out;
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point, opts, word;
    fields >> id >> parent >> dev >> root >> point >> opts;
    while (fields >> word && word != "-") {
    }
    std::string type, source, super;
    fields >> type >> source >> super;
    if (type == "cgroup" || type == "cgroup2") {
      out.push_back({unescape(root), unescape(point), type, super});
    }
  }
  return out;
}

bool has_token(const std::string& list, const std::string& token, char sep = ',') {
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const auto end = list.find(sep, pos);
    if (list.substr(pos, end == std::string::npos ? std::string::npos : end - pos) == token) {
      return true;
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return false;
}

// The lines of /proc/self/cgroup: hierarchy id, controllers, path.
struct Membership {
  std::string controllers;
  std::string path;
};
std::vector<Membership> memberships(const std::string& self_cgroup) {
  std::vector<Membership> out;
  std::istringstream in(self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    out.push_back({line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

// Where `path` (as /proc/self/cgroup names it) is in the file system of `mount`.
std::string on_mount(const Mount& mount, std::string path) {
  if (mount.root != "/" && (path == mount.root || path.starts_with(mount.root + "/"))) {
    path = path.substr(mount.root.size());
  }
  if (path == "/") path.clear();
  return mount.point + path;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `value` into a control file; "" or why not.
std::string write_control(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  if (!out) return fmt::format("{}: {}", path, std::strerror(errno));
  out << value;
  out.flush();
  if (!out) return fmt::format("writing '{}' to {}: {}", value, path, std::strerror(errno));
  return {};
}

bool make_dir(const std::string& dir) { return ::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST; }

// "key N" from a flat-keyed file (memory.events, pids.events, memory.oom_control).
std::uint64_t counter(const std::string& file, const std::string& key) {
  std::istringstream in(read_text(file));
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

std::vector<pid_t> pids_in(const std::string& procs_file) {
  std::vector<pid_t> out;
  std::istringstream in(read_text(procs_file));
  long pid = 0;
  while (in >> pid) out.push_back(static_cast<pid_t>(pid));
  return out;
}

// A cgroup systemd made for a unit: its processes are systemd's to place.
bool managed_by_systemd(const std::string& dir) {
  const std::string name = fs::path(dir).filename().string();
  for (const char* suffix : {".service", ".scope", ".slice"}) {
    const std::string end = suffix;
    if (name.size() >= end.size() && name.compare(name.size() - end.size(), end.size(), end) == 0)
      return true;
  }
  return false;
}

}  // namespace

CgroupSupport detect_cgroup_support(const std::string& mountinfo, const std::string& self_cgroup) {
  CgroupSupport s;
  const auto mounts = cgroup_mounts(mountinfo);
  const auto mine = memberships(self_cgroup);
  std::string v2_note;
  // v2: the service's own cgroup must offer memory (and pids, where it can) to a subtree of job
  // leaves.
  for (const auto& m : mounts) {
    if (m.type != "cgroup2") continue;
    for (const auto& member : mine) {
      if (!member.controllers.empty()) continue;
      const std::string own = on_mount(m, member.path);
      std::string words = read_text(own + "/cgroup.controllers");
      while (!words.empty() && (words.back() == '\n' || words.back() == ' ')) words.pop_back();
      if (!has_token(words, "memory", ' ')) {
        v2_note = fmt::format("cgroup v2 at {} offers [{}], not memory", own, words);
        continue;
      }
      const bool pids = has_token(words, "pids", ' ');
      const bool cpu = has_token(words, "cpu", ' ');
      std::string wanted = "+memory";
      if (pids) wanted += " +pids";
      if (cpu) wanted += " +cpu";
      const std::string parent = own + "/" + kParentName;
      std::string why = write_control(own + "/cgroup.subtree_control", wanted);
      if (!why.empty()) {
        // Processes in a cgroup keep it from handing controllers down (EBUSY): they move into
        // a leaf of their own first, this process and, where the cgroup is not systemd's, the
        // others in it (a container's, as Docker-in-Docker does); they stay under the same
        // limits above. A systemd unit's cgroup is left to systemd (Delegate=yes).
        const std::string self = own + "/kgym-service";
        if (make_dir(self) &&
            write_control(self + "/cgroup.procs", std::to_string(::getpid())).empty()) {
          why = write_control(own + "/cgroup.subtree_control", wanted);
          if (!why.empty() && !managed_by_systemd(own)) {
            for (const pid_t pid : pids_in(own + "/cgroup.procs")) {
              (void)write_control(self + "/cgroup.procs", std::to_string(pid));  // gone: fine
            }
            why = write_control(own + "/cgroup.subtree_control", wanted);
          }
        }
      }
      if (why.empty() && make_dir(parent)) {
        why = write_control(parent + "/cgroup.subtree_control", wanted);
      } else if (why.empty()) {
        why = fmt::format("{}: {}", parent, std::strerror(errno));
      }
      if (!why.empty()) {
        v2_note = fmt::format(
            "cgroup v2 at {} could not hand its controllers to job leaves ({}); run the service "
            "in a cgroup of its own with those controllers delegated (a systemd unit with "
            "Delegate=yes)",
            own, why);
        continue;
      }
      s.kind = CgroupSupport::Kind::kV2;
      s.v2_parent = parent;
      s.v2_pids = pids;
      if (!pids) s.note = kNoPidsNote;
      if (!cpu) {
        s.note += (s.note.empty() ? "" : "; ") +
                  std::string("no cpu controller: jobs share the CPU without weights");
      }
      return s;
    }
  }
  // v1: one hierarchy per controller, each with a parent of job leaves under this process' own.
  auto v1_parent = [&](const std::string& controller) -> std::string {
    for (const auto& m : mounts) {
      if (m.type != "cgroup" || !has_token(m.options, controller)) continue;
      for (const auto& member : mine) {
        if (!has_token(member.controllers, controller)) continue;
        const std::string parent = on_mount(m, member.path) + "/" + kParentName;
        if (make_dir(parent)) return parent;
      }
    }
    return {};
  };
  s.v1_memory = v1_parent("memory");
  s.v1_pids = v1_parent("pids");
  s.v1_cpu = v1_parent("cpu");
  if (!s.v1_memory.empty()) {
    s.kind = CgroupSupport::Kind::kV1;
    s.v1_swap = fs::exists(s.v1_memory + "/memory.memsw.limit_in_bytes");
    std::vector<std::string> missing;
    if (s.v1_pids.empty()) missing.push_back(kNoPidsNote);
    if (s.v1_cpu.empty())
      missing.push_back("no cpu controller: jobs share the CPU without weights");
    if (!s.v1_swap) missing.push_back("no swap accounting: swap is not limited");
    for (const auto& m : missing) s.note += (s.note.empty() ? "" : "; ") + m;
    return s;
  }
  s.v1_memory.clear();
  s.v1_pids.clear();
  s.v1_cpu.clear();
  s.note = v2_note.empty() ? std::string(
                                 "no cgroup hierarchy with a memory controller is mounted and "
                                 "writable here")
                           : v2_note + "; and no writable cgroup v1 memory hierarchy";
  return s;
}

namespace {

CgroupSupport detect() {
  return detect_cgroup_support(read_text("/proc/self/mountinfo"), read_text("/proc/self/cgroup"));
}

std::vector<std::string> parents(const CgroupSupport& s) {
  if (s.kind == CgroupSupport::Kind::kV2) return {s.v2_parent};
  std::vector<std::string> out;
  for (const auto* p : {&s.v1_memory, &s.v1_pids, &s.v1_cpu}) {
    if (!p->empty()) out.push_back(*p);
  }
  return out;
}

void empty_and_remove(const std::string& leaf, bool v2) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  if (v2 && fs::exists(leaf + "/cgroup.kill")) write_control(leaf + "/cgroup.kill", "1");
  for (;;) {
    const auto pids = pids_in(leaf + "/cgroup.procs");
    if (pids.empty() && ::rmdir(leaf.c_str()) == 0) return;
    if (errno == ENOENT) return;
    for (const pid_t pid : pids) ::kill(pid, SIGKILL);
    if (std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::atomic<std::uint64_t> leaf_counter{0};

}  // namespace

bool CgroupSupport::has_memory() const {
  return kind == Kind::kV2 || (kind == Kind::kV1 && !v1_memory.empty());
}
bool CgroupSupport::has_pids() const {
  return (kind == Kind::kV2 && v2_pids) || (kind == Kind::kV1 && !v1_pids.empty());
}
bool CgroupSupport::has_cpu() const {
  return (kind == Kind::kV2 && note.find("no cpu") == std::string::npos) ||
         (kind == Kind::kV1 && !v1_cpu.empty());
}
std::string CgroupSupport::name() const {
  return kind == Kind::kV2 ? "v2" : kind == Kind::kV1 ? "v1" : "none";
}

const CgroupSupport& cgroup_support() {
  static const CgroupSupport support = detect();
  return support;
}

JobCgroup::JobCgroup(const std::string& name, const ResourceLimits& limits)
    : JobCgroup(cgroup_support(), name, limits) {}

JobCgroup::JobCgroup(const CgroupSupport& s, const std::string& name,
                     const ResourceLimits& limits) {
  if (!limits.needs_cgroup()) return;
  pids_limit_ = limits.pids;
  if (s.kind == CgroupSupport::Kind::kNone) {
    note_ = s.note;
    return;
  }
  const std::string leaf_name =
      fmt::format("{}{}-{}-{}", kLeafPrefix, ::getpid(), ++leaf_counter, name);
  std::vector<std::string> problems;
  auto make_leaf = [&](const std::string& parent) -> std::string {
    const std::string leaf = parent + "/" + leaf_name;
    if (::mkdir(leaf.c_str(), 0755) != 0) {
      problems.push_back(fmt::format("{}: {}", leaf, std::strerror(errno)));
      return {};
    }
    dirs_.push_back(leaf);
    procs_files_.push_back(leaf + "/cgroup.procs");
    return leaf;
  };
  auto set = [&](const std::string& file, const std::string& value) {
    if (auto why = write_control(file, value); !why.empty()) problems.push_back(why);
  };
  if (s.kind == CgroupSupport::Kind::kV2) {
    v2_ = true;
    const auto leaf = make_leaf(s.v2_parent);
    if (!leaf.empty()) {
      memory_dir_ = leaf;
      if (s.v2_pids) pids_dir_ = leaf;
      if (limits.memory_bytes > 0) {
        set(leaf + "/memory.max", std::to_string(limits.memory_bytes));
        if (fs::exists(leaf + "/memory.swap.max")) set(leaf + "/memory.swap.max", "0");
        // The whole job goes when one of its processes is OOM-killed: nothing half-dead stays.
        set(leaf + "/memory.oom.group", "1");
      }
      if (limits.pids > 0 && s.v2_pids) set(leaf + "/pids.max", std::to_string(limits.pids));
      if (limits.cpu_weight > 0 && s.has_cpu()) {
        set(leaf + "/cpu.weight", std::to_string(limits.cpu_weight));
      }
    }
  } else {
    if (limits.memory_bytes > 0) {
      memory_dir_ = make_leaf(s.v1_memory);
      if (!memory_dir_.empty()) {
        set(memory_dir_ + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes));
        if (s.v1_swap) {
          set(memory_dir_ + "/memory.memsw.limit_in_bytes", std::to_string(limits.memory_bytes));
        }
      }
    }
    if (limits.pids > 0 && !s.v1_pids.empty()) {
      pids_dir_ = make_leaf(s.v1_pids);
      if (!pids_dir_.empty()) set(pids_dir_ + "/pids.max", std::to_string(limits.pids));
    }
    if (limits.cpu_weight > 0 && !s.v1_cpu.empty()) {
      // v1's shares: 1024 is the default, as v2's weight 100.
      const auto leaf = make_leaf(s.v1_cpu);
      if (!leaf.empty()) {
        set(leaf + "/cpu.shares",
            std::to_string(std::max<std::uint64_t>(2, limits.cpu_weight * 1024 / 100)));
      }
    }
  }
  if (!problems.empty()) {
    // A leaf without its limits is no limit: none is used, and the Result says why.
    note_ = fmt::format("the job's cgroup could not be set up: {}", problems.front());
    for (const auto& dir : dirs_) empty_and_remove(dir, v2_);
    dirs_.clear();
    procs_files_.clear();
    memory_dir_.clear();
    pids_dir_.clear();
    return;
  }
  if (!s.note.empty()) note_ = s.note;
}

JobCgroup::~JobCgroup() {
  for (const auto& dir : dirs_) empty_and_remove(dir, v2_);
}

std::string JobCgroup::breach() const {
  if (!memory_dir_.empty()) {
    const std::uint64_t killed = v2_ ? counter(memory_dir_ + "/memory.events", "oom_kill") +
                                           counter(memory_dir_ + "/memory.events", "oom_group_kill")
                                     : counter(memory_dir_ + "/memory.oom_control", "oom_kill");
    if (killed > 0) return "memory";
  }
  if (!pids_dir_.empty() && counter(pids_dir_ + "/pids.events", "max") > 0) return "pids";
  if (pids_dir_.empty() && pids_limit_ > 0 && sampled_pids_peak_ >= pids_limit_) return "pids";
  return {};
}

void JobCgroup::sample() {
  if (!pids_dir_.empty() || memory_dir_.empty() || pids_limit_ == 0) return;
  // Every thread of the leaf, by id: v2's cgroup.threads, v1's tasks.
  const auto threads = pids_in(memory_dir_ + (v2_ ? "/cgroup.threads" : "/tasks"));
  sampled_pids_peak_ = std::max<std::uint64_t>(sampled_pids_peak_, threads.size());
}

std::uint64_t JobCgroup::memory_peak() const {
  if (memory_dir_.empty()) return 0;
  const std::string file = memory_dir_ + (v2_ ? "/memory.peak" : "/memory.max_usage_in_bytes");
  std::istringstream in(read_text(file));
  std::uint64_t v = 0;
  in >> v;
  return v;
}

std::uint64_t JobCgroup::pids_peak() const {
  if (pids_dir_.empty()) return sampled_pids_peak_;
  std::istringstream in(read_text(pids_dir_ + "/pids.peak"));
  std::uint64_t v = 0;
  in >> v;
  return v;
}

void JobCgroup::kill_all() const {
  for (int round = 0; round < 400; ++round) {
    bool any = false;
    for (const auto& procs : procs_files_) {
      for (const pid_t pid : pids_in(procs)) {
        ::kill(pid, SIGKILL);
        any = true;
      }
    }
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int sweep_job_cgroups() {
  const auto& s = cgroup_support();
  int removed = 0;
  for (const auto& parent : parents(s)) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
      const auto name = entry.path().filename().string();
      if (!entry.is_directory(ec) || !name.starts_with(kLeafPrefix)) continue;
      // job-<pid>-...: a leaf of a process that is gone (another live service's are its own).
      const long owner = std::strtol(name.c_str() + std::strlen(kLeafPrefix), nullptr, 10);
      if (owner > 0 && (::kill(static_cast<pid_t>(owner), 0) == 0 || errno != ESRCH)) continue;
      empty_and_remove(entry.path().string(), s.kind == CgroupSupport::Kind::kV2);
      ++removed;
    }
  }
  return removed;
}

}  // namespace kgym::sandbox
