// `kgym-gym serve`: the gym as an HTTP service (docs/service-api.md).
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "kgym/service/job_pool.hpp"
#include "kgym_gym_slots.hpp"

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8177;
  std::string port_file;
  std::string token_file;
  std::string clients_file;
  std::string tls_cert;
  std::string tls_key;
  std::string gpus = "auto";  // auto | none | all | 0,1
  int workers_per_gpu = 4;
  int cpu_workers = 0;  // 0: one per core
  std::string state_dir;
  std::string db;
  std::vector<std::string> task_dirs;
  std::size_t max_queue = 10000;
  std::size_t max_body = 4u << 20;
  std::size_t max_connections = 1024;
  double idle_timeout_s = 30.0;
  double header_timeout_s = 10.0;
  double body_timeout_s = 60.0;
  std::string python;
  bool fork_server = true;
  bool no_cache = false;
  std::int64_t sandbox_uid = 100000;   // jobs take this + their pid as uid (-1: the service's)
  bool private_view = true;            // each job's namespaces and file-system view
  bool require_sandbox = false;        // refuse to start (and fail jobs) without every layer
  double retain_days = 7.0;            // finished jobs older than this are deleted
  std::uint64_t retain_jobs = 100000;  // and beyond this many (the most recent are kept)
  double retain_max_share = 0.5;       // deletions by age above this share are refused
  std::string redis;                   // a pool's Redis URL: jobs run on its workers
  std::string pool = "default";        // the pool's name (several pools can share a Redis)
  std::string pool_device = "cuda";    // what the pool's workers evaluate on
  HostOptions job_limits;              // every job's limits (the table's host options)
};

struct BackupOptions {
  std::string state_dir;
  std::string db;
  std::string out;
};

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options);
CLI::App* add_openapi_command(CLI::App& app);
CLI::App* add_backup_command(CLI::App& app, BackupOptions& options);
int run_backup(const BackupOptions& options);
int run_serve(const ServeOptions& options);
int run_openapi();

// The front door's connection to a pool (kgym_gym_pool.cpp); throws std::runtime_error with a
// clear message when the URL is wrong, Redis cannot be reached, or this build has no Redis.
std::shared_ptr<kgym::service::JobPool> make_redis_pool(const std::string& url,
                                                        const std::string& pool);
