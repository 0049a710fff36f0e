// One evaluation request: a task, a candidate and how to measure it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kgym/text/extract.hpp"

namespace kgym::check {

struct TimingOptions {
  bool enabled = true;
  double warmup_ms = 25.0;         // warm-up time per function before sampling
  int min_samples = 20;            // per function
  int max_samples = 200;           // per function
  double budget_ms = 4000.0;       // wall-time budget for the sampling loop of one evaluation
  double target_rel_ci = 0.01;     // stop early once the median's 95% CI is this tight (relative)
  double batch_ms = 10.0;          // a timing sample lasts about this long (several calls)
  double verify_fraction = 1.0;    // share of timed candidate calls whose outputs are checked
  std::string baseline = "eager";  // eager | compile | both
};

struct CheckJob {
  std::string task_id;
  std::string task_source;     // KernelBench-format Python source
  std::string candidate_text;  // a .py source or a raw completion
  text::ExtractRule extract_rule = text::ExtractRule::kAuto;
  std::string device = "auto";  // auto | cpu | cuda
  std::string sizes = "auto";   // auto (by device) | cpu | gpu: which task sizes to use
  int trials = 5;
  std::uint64_t seed = 0;
  std::optional<double> atol;  // overrides of the task's tolerance
  std::optional<double> rtol;
  TimingOptions timing;
  bool profile = true;
  bool screen = true;  // the static screen; off only for research on runtime guards
  // strict: the work is done by Triton kernels (torch compute in forward is rejected);
  // hybrid: torch compute is allowed beside Triton kernels that matter (docs/integrity-rules.md).
  std::string torch_compute = "strict";
  // robust: correct on the task's inputs and on the judge's stress sets (scaled, sign-flipped,
  // shifted, special values); task: on the task's own inputs only (KernelBench's verdict).
  std::string inputs = "robust";
  // faithful: on a float32 task no fp16, bf16 or fp8 compute (tf32 allowed); tolerant: any.
  std::string precision = "faithful";
  double timeout_seconds = 300.0;
  // GPU memory the candidate's processes may hold beyond the reference's runner's (or more:
  // harness/gpu_memory.py, which reads it from the driver).
  int gpu_memory_slack_mib = 4096;
  // The job as a whole (sandbox/job_cgroup.hpp, job_directory.hpp): host memory with swap,
  // processes and threads, CPU weight, the size of its directory, and its share of the GPU's
  // memory (0: the GPU's memory divided by gpu_jobs, the jobs that share the GPU).
  int memory_limit_mib = 32768;
  int pids_limit = 2048;
  int cpu_weight = 100;
  int disk_limit_mib = 2048;
  int gpu_memory_share_mib = 0;
  int gpu_jobs = 1;              // set by the slot: the jobs that run at once on this job's GPU
  std::string python;            // the interpreter that has kgym, torch and triton installed
  std::string scratch_dir;       // where the job directory is made; empty = $TMPDIR or /tmp
  std::string triton_cache_dir;  // empty = a private cache inside the job directory
  // The per-GPU lock file of the service: the harness holds it shared while it puts work on the
  // GPU and exclusively while it times, so that no other job's kernels run inside a timing
  // window (a ".gate" file beside it orders the waiters; empty = no lock).
  std::string timing_lock;
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES for the child; empty = inherited
  // CPU threads for torch/OpenMP in the child (OMP_NUM_THREADS), so that jobs sharing a machine
  // do not oversubscribe its cores; 0 = the libraries' default (every core).
  int cpu_threads = 0;
  // The job's own mount, IPC and UTS namespaces and file-system view (sandbox/job_view.hpp).
  bool private_view = true;
  // With a root supervisor, the judge and its runners take the uid sandbox_uid + the job's pid
  // once the runners are forked (-1: keep the supervisor's). sandbox/child_setup.hpp, job_uid.
  std::int64_t sandbox_uid = 100000;
  // The service's control run (service/interference.hpp): the candidate is the task's own Model,
  // and the judge records integrity findings without stopping on them, so that the reference
  // side goes through every phase a candidate's run can reach. Set by the service alone: no
  // request, option or job file parsed by job_from_json sets it.
  bool control = false;
};

// A job as JSON: the task and candidate, the supervisor's plumbing (python, scratch_dir,
// triton_cache_dir, timing_lock, visible_devices) and the options of options.hpp as flat
// fields. Parsing validates and throws std::invalid_argument naming the offending field.
CheckJob job_from_json(const nlohmann::json& j);
nlohmann::json job_to_json(const CheckJob& job);

}  // namespace kgym::check
