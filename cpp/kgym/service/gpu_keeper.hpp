// A process that holds one CUDA context on a GPU for as long as the service runs, so that every
// job's processes start theirs warm.
//
// Why: with the driver's persistence mode on, a process's first CUDA call (cuInit and the
// device's set-up, what torch.cuda.init() does) still took 200-240 ms on an H200 whenever no
// other process held a context on the GPU, and 28-50 ms while one did
// (bench/cuda_contexts). A job's judge and its two runners each pay it, in the job's
// round trip: on a service that evaluates one job at a time no context outlives the job before.
// Holding the device files open did not help; a context does. Its cost is the context's GPU
// memory (measured in the same file).
//
// The keeper is `kgym-gym gpu-keeper` (run_gpu_keeper below), started with CUDA_VISIBLE_DEVICES
// set to its GPU: it loads the driver with dlopen (kgym links no CUDA library), retains the
// device's primary context, says `holding` on stdout, and waits for its stdin to close. It runs
// no job code and is not in any job's sandbox; the judge's GPU memory watch counts only the
// job's own processes. On a GPU whose compute mode is not Default (one context per device, or
// none), a held context would keep every job off the GPU: the keeper says so and holds nothing.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kgym/sandbox/program.hpp"

namespace kgym::service {

class GpuKeeper {
 public:
  // Starts `program` (kgym-gym gpu-keeper) with exactly `env`; returns at once (the keeper's
  // first line is read by a thread of this object). label: "gpu0", for messages.
  GpuKeeper(sandbox::Program program, std::vector<std::pair<std::string, std::string>> env,
            std::string label);
  ~GpuKeeper();  // closes the keeper's stdin (it lets go of the context and exits), reaps it
  GpuKeeper(const GpuKeeper&) = delete;
  GpuKeeper& operator=(const GpuKeeper&) = delete;

  // "starting", "holding", "not holding: <why>" (the keeper's own word, or why it ended).
  std::string state() const;
  const std::string& label() const { return label_; }

 private:
  void watch();  // the thread: the keeper's first line, then its end

  std::string label_;
  pid_t pid_ = -1;
  int to_keeper_ = -1;    // its stdin: closed to stop it
  int from_keeper_ = -1;  // its stdout
  mutable std::mutex mutex_;
  std::string state_ = "starting";
  bool stopping_ = false;
  std::thread watcher_;
};

// The keeper's own side, for `kgym-gym gpu-keeper`: holds device 0 of CUDA_VISIBLE_DEVICES until
// stdin closes or the parent (parent_pid) is gone. Returns the process's exit code: 0 also when
// there is nothing to hold (no driver, a compute mode that forbids sharing), said on stdout.
int run_gpu_keeper(pid_t parent_pid);

}  // namespace kgym::service
