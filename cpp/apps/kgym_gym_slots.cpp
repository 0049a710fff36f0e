#include "kgym_gym_slots.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "kgym/check/evaluate.hpp"
#include "kgym/check/options.hpp"
#include "kgym/sandbox/fork_server.hpp"
#include "kgym/sandbox/job_cgroup.hpp"
#include "kgym/sandbox/job_directory.hpp"
#include "kgym/service/gpu_keeper.hpp"

namespace fs = std::filesystem;
using kgym::service::WorkerSlot;

std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

// GPUs the NVIDIA driver lists, read from /proc (or, in containers that do not show that
// folder, from nvidia-smi): no CUDA call in the supervisor.
int driver_gpu_count() {
  std::error_code ec;
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)e;
    ++n;
  }
  if (!ec && n > 0) return n;
  const auto listed = capture("nvidia-smi -L 2>/dev/null | grep -c '^GPU '");
  try {
    return listed.empty() ? 0 : std::stoi(listed);
  } catch (const std::exception&) {
    return 0;
  }
}

std::vector<int> pick_gpus(const std::string& spec) {
  std::vector<int> ids;
  if (spec == "none") return ids;
  const int count = driver_gpu_count();
  if (spec == "auto" || spec == "all") {
    for (int i = 0; i < count; ++i) ids.push_back(i);
    if (spec == "all" && ids.empty()) throw std::runtime_error("--gpus all: no NVIDIA GPU found");
    return ids;
  }
  std::stringstream list(spec);
  std::string item;
  while (std::getline(list, item, ',')) {
    int id = -1;
    try {
      id = std::stoi(item);
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("--gpus: '{}' is not a GPU index", item));
    }
    if (id < 0 || id >= count) {
      throw std::runtime_error(fmt::format("--gpus: GPU {} does not exist ({} found)", id, count));
    }
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

// The versions, and the installed judge's build (kgym/build.py): cache keys hold them, so that a
// verdict an older judge made is never handed out after a fix (kgym.__version__ stays the same).
std::string software_versions(const std::string& python) {
  return capture(shell_quote(python) +
                 " -c 'import json, platform, torch, triton, kgym, kgym.build; "
                 "print(json.dumps({\"torch\": torch.__version__, \"triton\": "
                 "triton.__version__, \"python\": platform.python_version(), \"kgym\": "
                 "kgym.__version__, \"judge\": kgym.build.judge_build()}))' 2>/dev/null");
}

std::string default_state_dir() {
  const char* home = std::getenv("HOME");
  return fmt::format("{}/.local/state/kgym", home != nullptr ? home : "/tmp");
}

namespace {

// The GPU's keeper (kgym/service/gpu_keeper.hpp): this executable's `gpu-keeper`, seeing the GPU
// as the slots' jobs do (their environment, so their CUDA_VISIBLE_DEVICES and device order).
std::shared_ptr<kgym::service::GpuKeeper> start_gpu_keeper(const std::string& label,
                                                           const std::string& visible, int threads,
                                                           const std::string& state) {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::cerr << fmt::format("kgym-gym: {}: no GPU keeper (this executable's path: {})\n", label,
                             ec.message());
    return nullptr;
  }
  kgym::check::CheckJob probe;
  probe.device = "cuda";
  probe.visible_devices = visible;
  probe.cpu_threads = threads;
  const auto home = fmt::format("{}/gpu-keeper/{}", state, label);
  fs::create_directories(home, ec);
  return std::make_shared<kgym::service::GpuKeeper>(
      kgym::sandbox::command_line(
          {self.string(), "gpu-keeper", "--parent", std::to_string(::getpid())}),
      kgym::check::child_environment(probe, home), label);
}

}  // namespace

MachineSlots make_machine_slots(const SlotOptions& o) {
  MachineSlots out;
  const auto gpus = pick_gpus(o.gpus);
  const std::string device = gpus.empty() ? "cpu" : "cuda";
  out.device = device;
  if (!gpus.empty()) {
    out.gpu_names = capture(
        "nvidia-smi --query-gpu=name,driver_version --format=csv,noheader "
        "2>/dev/null");
  }
  // The machine's cores shared out between the jobs that run at once, so that eight jobs with
  // torch's default (a thread per core each) do not oversubscribe the CPU by eight.
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int concurrent = gpus.empty()
                             ? (o.cpu_workers > 0 ? o.cpu_workers : cores)
                             : static_cast<int>(gpus.size()) * std::max(1, o.workers_per_gpu);
  const int threads_per_job =
      o.threads_per_job > 0 ? o.threads_per_job : std::max(1, cores / std::max(1, concurrent));
  auto add_workers = [&](int count, const std::string& label, const std::string& visible,
                         const std::string& lock,
                         const std::shared_ptr<kgym::service::GpuKeeper>& keeper) {
    for (int i = 0; i < count; ++i) {
      WorkerSlot slot;
      slot.gpu_keeper = keeper;
      slot.device = device;
      slot.visible_devices = visible;
      slot.cpu_threads = threads_per_job;
      slot.gpu_jobs = gpus.empty() ? 1 : count;
      slot.timing_lock = lock;
      slot.label = label;
      if (o.fork_server) {
        // One warm server per worker (a server runs one job at a time), started with the
        // environment of this worker's jobs so that its imports are theirs (TRITON_INTERPRET on
        // a CPU, the GPU it may see). Its HOME is private: jobs get their own directories.
        kgym::check::CheckJob probe;
        probe.device = device;
        probe.visible_devices = visible;
        probe.cpu_threads = threads_per_job;
        const auto home = fmt::format("{}/forkserver/{}-{}", o.state_dir, label, i);
        fs::create_directories(home);
        auto server = std::make_shared<kgym::sandbox::ForkServer>(
            kgym::check::fork_server_program(o.python),
            kgym::check::child_environment(probe, home));
        slot.make_launcher = [server, label]() -> kgym::check::Launcher {
          // Warmed by the worker's own thread, so that the first job does not pay for it.
          if (auto why = server->start(); !why.empty()) {
            if (server->closed()) return {};  // shutting down: nothing to say
            std::cerr << fmt::format(
                "kgym-gym: {}: the fork server did not start ({}); this worker starts a fresh "
                "Python per job instead\n",
                label, why);
            return {};
          }
          return [server](const kgym::sandbox::ChildSpec& spec,
                          const kgym::sandbox::LineCallback& on_line) {
            return server->run(spec, on_line);
          };
        };
        slot.restarts = [server] { return server->restarts(); };
        slot.close = [server] { server->close(); };
      }
      out.slots.push_back(std::move(slot));
    }
  };
  if (gpus.empty()) {
    add_workers(o.cpu_workers > 0 ? o.cpu_workers : cores, "cpu", "", "", nullptr);
  } else {
    for (int id : gpus) {
      // The harness opens these read-only and flocks them: the lock (shared while a job uses the
      // GPU, exclusive while it times), its gate, and the start gate that jobs make their CUDA
      // contexts behind, one at a time (see python/kgym/harness/judge/gpu_hold.py). The user's
      // lock of this GPU, the one `kgym check` and every other kgym-gym of the user take, so
      // that two services on one GPU (each with its own state directory) do not time at once;
      // one in the state directory only when the user has no lock directory.
      auto lock = kgym::check::gpu_timing_lock(std::to_string(id));
      if (lock.empty()) {
        lock = fmt::format("{}/gpu{}.timing.lock", o.state_dir, id);
        std::ofstream{lock, std::ios::app};
        std::ofstream{lock + ".gate", std::ios::app};
        std::ofstream{lock + ".start", std::ios::app};
      }
      const auto label = fmt::format("gpu{}", id);
      add_workers(std::max(1, o.workers_per_gpu), label, std::to_string(id), lock,
                  start_gpu_keeper(label, std::to_string(id), threads_per_job, o.state_dir));
    }
  }
  return out;
}

void add_host_option_flags(CLI::App* cmd, HostOptions& options) {
  for (const auto& spec : kgym::check::option_table()) {
    if (!spec.host || spec.cli.empty()) continue;
    cmd->add_option("--" + spec.cli, options.given[spec.name],
                    fmt::format("every job: {} (default {})", spec.help, spec.fallback.dump()));
  }
}

nlohmann::json host_options_json(const HostOptions& options) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& spec : kgym::check::option_table()) {
    const auto it = options.given.find(spec.name);
    if (!spec.host || it == options.given.end() || it->second.empty()) continue;
    std::size_t used = 0;
    nlohmann::json value;
    try {
      if (spec.kind == kgym::check::OptionKind::kInteger) {
        value = std::stoll(it->second, &used);
      } else {
        value = std::stod(it->second, &used);
      }
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (used == 0 || used != it->second.size()) {
      throw std::invalid_argument(fmt::format("--{}: '{}' is not a number", spec.cli, it->second));
    }
    try {
      out[spec.name] = kgym::check::validated_option(spec, value);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("--{}: {}", spec.cli, e.what()));
    }
  }
  return out;
}

std::string prepare_job_scratch(const std::string& state_dir, const std::string& who) {
  const auto scratch = (fs::path(state_dir) / "jobs").string();
  fs::create_directories(scratch);
  // Only this service's (or worker's) jobs live there, and none runs yet. Swept before the
  // namespace below, so that what an earlier run left mounted goes from the host's view too.
  const int dirs = kgym::sandbox::sweep_job_directories(scratch);
  const int cgroups = kgym::sandbox::sweep_job_cgroups();
  if (dirs + cgroups > 0) {
    std::cerr << fmt::format(
        "kgym-gym {}: removed what jobs of an earlier run left: {} job directories, {} "
        "cgroups\n",
        who, dirs, cgroups);
  }
  const auto why_not = kgym::sandbox::own_mount_namespace();
  if (!why_not.empty() && ::geteuid() == 0) {
    std::cerr << fmt::format(
        "kgym-gym {}: the job directories' mounts are the host's (no mount namespace of its "
        "own: {}); a kill -9 leaves them until the next start\n",
        who, why_not);
  }
  return scratch;
}
