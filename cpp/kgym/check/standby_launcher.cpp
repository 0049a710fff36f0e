#include "kgym/check/standby_launcher.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kgym/sandbox/deferred_start.hpp"
#include "kgym/sandbox/job_directory.hpp"

namespace kgym::check {
namespace fs = std::filesystem;
using nlohmann::json;
using sandbox::ChildOutcome;
using sandbox::ChildSpec;

namespace {

// The standby's own job file: the job file it was made from, marked (kgym.harness reads it first).
constexpr const char* kStandbyFile = "standby.json";
// The job file run_prepared writes, which the harness reads once its job is handed over.
constexpr const char* kJobFile = "job.json";

// `value` with its leading directory `from` replaced by `to`.
std::string moved(const std::string& value, const std::string& from, const std::string& to) {
  if (value == from) return to;
  if (value.starts_with(from + "/")) return to + value.substr(from.size());
  return value;
}

std::vector<std::string> moved(std::vector<std::string> values, const std::string& from,
                               const std::string& to) {
  for (auto& v : values) v = moved(v, from, to);
  return values;
}

// What of `spec` does not depend on its job directory: the spec as if run from `dir`.
ChildSpec moved_spec(const ChildSpec& spec, const std::string& dir) {
  ChildSpec m = spec;
  m.workdir = dir;
  for (auto& [key, value] : m.env) value = moved(value, spec.workdir, dir);
  m.writable_paths = moved(spec.writable_paths, spec.workdir, dir);
  m.view_readonly = moved(spec.view_readonly, spec.workdir, dir);
  m.view_hidden = moved(spec.view_hidden, spec.workdir, dir);
  return m;
}

json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return json();
  return json::parse(in, nullptr, false);
}

json warm_values(const json& job) {
  json values = json::object();
  for (const auto& key : StandbyLauncher::warm_keys()) {
    values[key] = job.is_object() && job.contains(key) ? job[key] : json(nullptr);
  }
  return values;
}

// The standby's own file: the warm values of the job it is made like, and placeholders for what
// else the harness reads of a job file before its job comes (nothing of that job's own).
json standby_file(const json& job_file) {
  json file = warm_values(job_file);
  file["task_file"] = job_file.value("task_file", "task.py");
  file["seed"] = 0;
  file["torch_compute"] = "strict";
  file["sizes"] = "auto";
  file["standby"] = {{"keys", StandbyLauncher::warm_keys()}};  // what it checks against its job
  return file;
}

// Copies the job's files (every regular file at the top of `from`) into the standby's directory.
// Nothing there is followed or replaced; the copies are readable by the job's uid, which owns the
// directory but not what the supervisor writes.
std::string copy_job_files(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(from, ec)) {
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in && !in.eof()) return fmt::format("cannot read {}", entry.path().string());
    const auto target = to / entry.path().filename();
    const int fd =
        ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return fmt::format("cannot write {}: {}", target.string(), std::strerror(errno));
    size_t done = 0;
    bool ok = ::fchmod(fd, 0644) == 0;
    while (ok && done < data.size()) {
      const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) done += static_cast<size_t>(n);
    }
    ::close(fd);
    if (!ok) return fmt::format("cannot write {}", target.string());
  }
  if (ec) return fmt::format("cannot list {}: {}", from.string(), ec.message());
  return {};
}

// A job's outcome, with whether the standby ran it and, if not, why.
ChildOutcome told(ChildOutcome out, bool used, const std::string& note) {
  out.standby_used = used;
  out.standby_note = used ? std::string() : note;
  return out;
}

}  // namespace

namespace detail {

// The standby's process group, for the job it is handed: the service kills it on a cancel, and
// the window's priority is raised within it. It may come after the hand-over (a standby forked
// a moment before its job came).
class StartedRelay {
 public:
  void started(pid_t pgid) {
    std::function<void(pid_t)> job;
    {
      std::lock_guard lock(mu_);
      pgid_ = pgid;
      job = job_;
    }
    if (job) job(pgid);
  }
  void hand_to(std::function<void(pid_t)> job) {
    pid_t pgid;
    {
      std::lock_guard lock(mu_);
      job_ = job;
      pgid = pgid_;
    }
    if (pgid > 0 && job) job(pgid);
  }

 private:
  std::mutex mu_;
  pid_t pgid_ = -1;
  std::function<void(pid_t)> job_;
};

}  // namespace detail

struct StandbyLauncher::Standby {
  std::unique_ptr<sandbox::JobDirectory> directory;  // as a job's: its own size-limited tmpfs
  fs::path dir;
  ChildSpec spec;  // as run from dir, without a token: it comes with the job
  json warm;       // warm_values of the job file it was made from
  std::shared_ptr<sandbox::DeferredStart> start = std::make_shared<sandbox::DeferredStart>();
  std::shared_ptr<detail::StartedRelay> relay = std::make_shared<detail::StartedRelay>();
  std::future<ChildOutcome> outcome;

  Standby() = default;
  Standby(const Standby&) = delete;
  Standby& operator=(const Standby&) = delete;
  ~Standby() {
    if (outcome.valid()) outcome.wait();  // the run is over before its directory goes
    directory.reset();
  }
};

const std::vector<std::string>& StandbyLauncher::warm_keys() {
  // kgym.harness before its job: the device (whether it uses CUDA), the report channel's
  // descriptor and the candidate's file name (the channel refuses frames from it), the GPU's lock
  // files, the job's uid, and whether the runners warm the profiler.
  static const std::vector<std::string> keys = {"device",      "report_fd",   "candidate_file",
                                                "timing_lock", "sandbox_uid", "profile"};
  return keys;
}

void StandbyLauncher::Group::offer(const ChildSpec& like, const json& job_file,
                                   const StandbyLauncher* from) {
  std::lock_guard lock(mu_);
  for (auto* member : members_) {
    if (member != from) member->ready_if_idle(like, job_file);
  }
}

StandbyLauncher::StandbyLauncher(std::shared_ptr<sandbox::ForkServer> server,
                                 std::shared_ptr<Group> group)
    : server_(std::move(server)), group_(std::move(group)) {}

void StandbyLauncher::join_group() {
  if (!group_) return;
  std::lock_guard lock(group_->mu_);
  if (std::find(group_->members_.begin(), group_->members_.end(), this) == group_->members_.end())
    group_->members_.push_back(this);
}

StandbyLauncher::~StandbyLauncher() {
  if (group_) {
    std::lock_guard lock(group_->mu_);
    std::erase(group_->members_, this);
  }
  close();
}

void StandbyLauncher::ready_if_idle(const ChildSpec& like, const json& job_file) {
  // A slot in a launch readies its own standby when it ends; this one must not wait for it.
  std::unique_lock busy(launch_mu_, std::try_to_lock);
  if (!busy) return;
  {
    std::lock_guard lock(mu_);
    if (standby_ || closed_) return;
  }
  ready_next(like, job_file);
}

void StandbyLauncher::close() {
  std::unique_ptr<Standby> standby;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    standby = std::move(standby_);
  }
  end(std::move(standby));
}

void StandbyLauncher::end(std::unique_ptr<Standby> standby) {
  if (!standby) return;
  standby->start->cancel();
  standby.reset();  // waits for its run, then removes its directory
}

std::string StandbyLauncher::mismatch(const Standby& standby, const ChildSpec& spec,
                                      const json& job_file) {
  using namespace std::chrono_literals;
  if (standby.outcome.wait_for(0s) == std::future_status::ready) {
    // Whatever ended it (a start error, a kill, the fork server's death) says nothing of the job.
    return "the standby had ended before the job came";
  }
  if (spec.token.empty() || spec.deferred_start) return "the job has no report token of its own";
  if (spec.program.args != std::vector<std::string>{kJobFile})
    return fmt::format("the job does not run from {}", kJobFile);
  ChildSpec job = moved_spec(spec, standby.spec.workdir);
  job.program.args = standby.spec.program.args;
  if (job.program != standby.spec.program) return "the job runs another program";
  if (job.env != standby.spec.env) return "the job's environment differs";
  if (job.writable_paths != standby.spec.writable_paths ||
      job.view_readonly != standby.spec.view_readonly ||
      job.view_hidden != standby.spec.view_hidden) {
    return "the job's file-system view differs";
  }
  job.limits.wall_seconds = standby.spec.limits.wall_seconds;  // counted from the hand-over
  if (!(job.limits == standby.spec.limits)) return "the job's sandbox limits differ";
  const json values = warm_values(job_file);
  for (const auto& key : warm_keys()) {
    if (values[key] != standby.warm[key]) return fmt::format("the job's {} differs", key);
  }
  return {};
}

ChildOutcome StandbyLauncher::launch(const ChildSpec& spec, const sandbox::LineCallback& on_line) {
  std::lock_guard busy(launch_mu_);
  // Read before the job runs: once it has, its directory is its uid's, and task code (which runs
  // in the judge) could have rewritten the file the next standby is made from.
  const json job_file = read_json(fs::path(spec.workdir) / kJobFile);
  std::unique_ptr<Standby> standby;
  {
    std::lock_guard lock(mu_);
    standby = std::move(standby_);
  }
  std::string note = "no standby was ready (the slot's first job, or the last one ended it)";
  ChildOutcome out;
  bool used = false;
  if (standby) {
    note = mismatch(*standby, spec, job_file);
    if (note.empty()) {
      if (auto error = copy_job_files(spec.workdir, standby->dir); !error.empty())
        note = "the job's files could not be copied: " + error;
    }
    if (note.empty()) {
      // Told before the token goes, so that the job's process group is known before any of
      // its records (the window's priority is raised within it).
      standby->relay->hand_to(spec.on_started);
      // The outcome taken at the report channel's end is the standby's, handed over.
      sandbox::ReportEndCallback report_end;
      if (spec.on_report_end) {
        report_end = [&spec](const sandbox::ChildOutcome& so_far) {
          spec.on_report_end(told(so_far, true, {}));
        };
      }
      if (standby->start->begin(spec.token, spec.limits.wall_seconds, on_line, report_end)) {
        out = standby->outcome.get();
        used = true;
      } else {
        standby->relay->hand_to({});
        note = "the standby had ended before the job came";
      }
    }
    if (used) {
      standby.reset();
    } else {
      end(std::move(standby));
    }
  }
  if (!used) {
    ChildSpec fresh = spec;  // its outcome at the report's end says why it ran fresh
    if (spec.on_report_end) {
      fresh.on_report_end = [&spec, &note](const sandbox::ChildOutcome& so_far) {
        spec.on_report_end(told(so_far, false, note));
      };
    }
    out = server_->run(fresh, on_line);
  }
  out = told(std::move(out), used, note);
  ready_next(spec, job_file);
  if (group_) group_->offer(spec, job_file, this);
  return out;
}

void StandbyLauncher::ready_next(const ChildSpec& like, const json& job_file) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
  }
  if (!job_file.is_object() || like.token.empty()) return;  // not a job run_prepared made
  auto standby = std::make_unique<Standby>();
  try {
    standby->directory = std::make_unique<sandbox::JobDirectory>(
        fs::path(like.workdir).parent_path().string(), like.limits.resources.disk_bytes);
  } catch (const std::exception&) {
    return;
  }
  standby->dir = standby->directory->path();
  {
    std::ofstream file(standby->dir / kStandbyFile, std::ios::binary);
    file << standby_file(job_file).dump();
    if (!file) return;  // the directory goes with the standby
  }
  standby->warm = warm_values(job_file);
  standby->spec = moved_spec(like, standby->dir.string());
  standby->spec.program.args = {kStandbyFile};
  standby->spec.token.clear();
  standby->spec.deferred_start = standby->start;
  standby->spec.on_started = [relay = standby->relay](pid_t pgid) { relay->started(pgid); };
  standby->spec.on_report_end = {};  // the last job's: its caller's frame is gone
  standby->outcome = std::async(
      std::launch::async, [server = server_, spec = standby->spec] { return server->run(spec); });
  {
    std::lock_guard lock(mu_);
    if (!closed_) {
      standby_ = std::move(standby);
      return;
    }
  }
  end(std::move(standby));  // close() came meanwhile and found none to end
}

}  // namespace kgym::check
