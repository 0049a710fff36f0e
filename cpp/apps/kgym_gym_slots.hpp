// The evaluation slots of one machine, as `serve` (embedded) and `worker` (a pool host) both
// make them: the GPUs picked, --workers-per-gpu slots per GPU with its timing lock, or CPU
// slots that share the cores; each with its own warm fork server.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kgym/service/worker_slot.hpp"

struct SlotOptions {
  std::string gpus = "auto";  // auto | none | all | 0,1
  int workers_per_gpu = 4;
  int cpu_workers = 0;  // 0: one per core
  bool fork_server = true;
  std::string state_dir;  // fork server homes (GPU locks too when the user has no lock dir)
  std::string python;
  // CPU threads per job (OMP_NUM_THREADS); 0: the machine's cores shared out between its slots.
  // A pool worker on a host it shares with others (or several workers standing in for hosts on
  // one machine) sets it to its share.
  int threads_per_job = 0;
};

struct MachineSlots {
  std::string device;  // cpu | cuda
  std::vector<kgym::service::WorkerSlot> slots;
  std::string gpu_names;  // nvidia-smi's names and driver ("" on a CPU)
};

// Throws std::runtime_error for a --gpus that names no GPU of this machine.
MachineSlots make_machine_slots(const SlotOptions& options);

// The output of a shell command, trailing blanks trimmed ("" when it cannot run).
std::string capture(const std::string& command);
std::string shell_quote(const std::string& s);
// {"torch", "triton", "python", "kgym"} versions of `python`, as JSON text.
std::string software_versions(const std::string& python);
// ~/.local/state/kgym (or /tmp/.local/state/kgym without HOME).
std::string default_state_dir();

// The operator's limits for every job of a service or worker: one flag per host option of the
// table (kgym/check/options.hpp), given values kept as text.
struct HostOptions {
  std::map<std::string, std::string> given;
};
void add_host_option_flags(CLI::App* cmd, HostOptions& options);
// The given flags as option values, validated by the table (std::invalid_argument naming the
// flag).
nlohmann::json host_options_json(const HostOptions& options);

// At start-up, before any job: the jobs' scratch directory (STATE_DIR/jobs, this service's or
// worker's own) with every job directory a crash left there removed, and the job cgroups of
// processes that are gone removed; then a mount namespace of the process' own for the job
// directories' tmpfs (own_mount_namespace: called while it has one thread, before the slots'
// fork servers start). Returns the directory; says on stderr what it removed.
std::string prepare_job_scratch(const std::string& state_dir, const std::string& who);
