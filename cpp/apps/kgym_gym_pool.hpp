// `kgym-gym worker`: one host of a pool of gym workers fed through Redis (docs/scale.md).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "kgym_gym_slots.hpp"

struct WorkerOptions {
  std::string redis;
  std::string pool = "default";
  std::string name;  // default: host-pid
  std::string gpus = "auto";
  int workers_per_gpu = 4;
  int cpu_workers = 0;
  int threads_per_job = 0;
  std::string state_dir;
  std::string python;
  bool fork_server = true;
  std::int64_t sandbox_uid = 100000;
  bool private_view = true;
  bool require_sandbox = false;
  double lease_s = 30.0;
  int max_deliveries = 3;
  double poll_s = 1.0;
  bool json = false;
  HostOptions job_limits;  // every job's limits (the table's host options)
};

CLI::App* add_worker_command(CLI::App& app, WorkerOptions& options);
int run_worker(const WorkerOptions& options);
