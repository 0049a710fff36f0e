// `kgym-gym serve`: the gym as an HTTP service (docs/service-api.md).
#pragma once

#include <CLI/CLI.hpp>

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8177;
  std::string port_file;
  std::string token_file;
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
};

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options);
CLI::App* add_openapi_command(CLI::App& app);
int run_serve(const ServeOptions& options);
int run_openapi();
