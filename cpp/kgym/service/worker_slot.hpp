// Where one job at a time is evaluated: a worker thread of the embedded service, or a slot of
// a pool worker host (docs/scale.md).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kgym/check/evaluate.hpp"
#include "kgym/service/gpu_keeper.hpp"

namespace kgym::service {

struct WorkerSlot {
  std::string device = "cpu";   // cpu | cuda
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES of its children ("" on a CPU)
  int cpu_threads = 0;          // OMP_NUM_THREADS of its children (0 = every core)
  int gpu_jobs = 1;             // the slots that share its GPU (a job's share of its memory)
  std::string timing_lock;      // the per-GPU lock file ("" on a CPU)
  std::string label;            // "cpu" or "gpu0", for /healthz and metrics
  // Makes the launcher of this worker (a fork server per worker), or empty for exec per job.
  std::function<check::Launcher()> make_launcher;
  std::function<int()> restarts;  // the launcher's restart count, for metrics (may be empty)
  // At shutdown: stops the launcher from starting, so that a worker still waiting for its fork
  // server's imports ends at once (may be empty).
  std::function<void()> close;
  // The process that keeps a CUDA context on this slot's GPU (shared by the GPU's slots; null on
  // a CPU): held here for the service's lifetime, read by /healthz.
  std::shared_ptr<GpuKeeper> gpu_keeper;
};

}  // namespace kgym::service
