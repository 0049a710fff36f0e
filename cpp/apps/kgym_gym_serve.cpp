#include "kgym_gym_serve.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kgym/check/evaluate.hpp"
#include "kgym/check/sandbox_layers.hpp"
#include "kgym/sandbox/fork_server.hpp"
#include "kgym/service/http_server.hpp"
#include "kgym/service/job_service.hpp"
#include "kgym/service/job_store.hpp"
#include "kgym/service/openapi.hpp"
#include "kgym_gym_slots.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kgym::service;

CLI::App* add_serve_command(CLI::App& app, ServeOptions& o) {
  auto* cmd = app.add_subcommand("serve", "Run the gym as an HTTP service (docs/service-api.md)");
  cmd->add_option("--host", o.host, "address to listen on; non-loopback needs a token")
      ->capture_default_str();
  cmd->add_option("--port", o.port, "TCP port (0: any free port)")->capture_default_str();
  cmd->add_option("--port-file", o.port_file, "write the bound port here once listening");
  // Never on the command line: argv is readable by every process of the machine.
  cmd->add_option("--token-file", o.token_file,
                  "file holding the Bearer token clients must send (default: $KGYM_TOKEN); its "
                  "holder may do everything");
  cmd->add_option("--clients-file", o.clients_file,
                  "JSON file naming each client, its token's SHA-256, its scopes (submit, "
                  "read_own, read_all, admin) and limits (docs/service-api.md, Clients)");
  cmd->add_option("--tls-cert", o.tls_cert,
                  "serve HTTPS with this certificate chain (PEM); needs --tls-key");
  cmd->add_option("--tls-key", o.tls_key, "the private key (PEM) of --tls-cert");
  cmd->add_option("--gpus", o.gpus, "auto | none (CPU mode) | all | a list such as 0,1")
      ->capture_default_str();
  cmd->add_option("--workers-per-gpu", o.workers_per_gpu,
                  "concurrent jobs per GPU (compilation overlaps; timing is exclusive)")
      ->capture_default_str();
  cmd->add_option("--cpu-workers", o.cpu_workers, "concurrent jobs in CPU mode (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--state-dir", o.state_dir,
                  "where the database and lock files live (default: ~/.local/state/kgym)");
  cmd->add_option("--db", o.db, "SQLite file (default: STATE_DIR/kgym-gym.sqlite3)");
  cmd->add_option("--tasks", o.task_dirs, "task directories (default: the built-in suite)");
  cmd->add_option("--max-queue", o.max_queue, "unfinished jobs accepted at once (then 429)")
      ->capture_default_str();
  cmd->add_option("--max-body", o.max_body, "largest request body in bytes (then 413)")
      ->capture_default_str();
  cmd->add_option("--max-connections", o.max_connections,
                  "open connections at most (then 503); idle ones are closed after 1 s once "
                  "half are taken")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{60000}));
  cmd->add_option("--idle-timeout", o.idle_timeout_s,
                  "seconds a connection may wait for its next request")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--header-timeout", o.header_timeout_s,
                  "seconds from a request's first byte to the end of its headers (then 408)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--body-timeout", o.body_timeout_s,
                  "seconds from the end of the headers to the end of the body (then 408)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--python", o.python, "interpreter with kgym, torch and triton installed");
  cmd->add_flag("!--no-fork-server", o.fork_server,
                "start a fresh Python per job instead of forking warm workers");
  cmd->add_flag("--no-cache", o.no_cache, "never answer from the result cache");
  cmd->add_option(
         "--sandbox-uid", o.sandbox_uid,
         "when the service runs as root, each job's untrusted processes take this uid plus "
         "the job's pid, one uid per job (-1: keep the service's)")
      ->capture_default_str();
  cmd->add_flag("!--no-private-view", o.private_view,
                "no mount/IPC/UTS namespaces and file-system view per job (docs/threat-model.md)");
  cmd->add_flag("--require-sandbox", o.require_sandbox,
                "refuse to start when a sandbox layer is unavailable here, and fail any job that "
                "did not get every layer");
  cmd->add_option("--redis", o.redis,
                  "run the jobs on a pool of worker hosts fed through this Redis "
                  "(redis://host[:port][/db] or unix:///path, its password from "
                  "$KGYM_REDIS_PASSWORD; docs/scale.md) instead of on this machine");
  cmd->add_option("--pool", o.pool, "with --redis: the pool's name")->capture_default_str();
  cmd->add_option("--pool-device", o.pool_device,
                  "with --redis: the device the pool's workers evaluate on")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--retain-days", o.retain_days,
                  "finished jobs older than this many days are deleted (checked every minute)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--retain-jobs", o.retain_jobs,
                  "at most this many finished jobs are kept (the latest to arrive)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  cmd->add_option("--retain-max-share", o.retain_max_share,
                  "a retention pass that would delete more than this share of the finished "
                  "jobs for their age is refused and logged (a clock that jumped)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  add_host_option_flags(cmd, o.job_limits);
  return cmd;
}

CLI::App* add_backup_command(CLI::App& app, BackupOptions& o) {
  auto* cmd = app.add_subcommand(
      "backup", "Copy the service's database to a file, consistently, even while it serves");
  cmd->add_option("out", o.out, "the backup file to write")->required();
  cmd->add_option("--state-dir", o.state_dir, "as for serve (default: ~/.local/state/kgym)");
  cmd->add_option("--db", o.db, "SQLite file (default: STATE_DIR/kgym-gym.sqlite3)");
  return cmd;
}

CLI::App* add_openapi_command(CLI::App& app) {
  return app.add_subcommand("openapi", "Print the service's OpenAPI document (JSON)");
}

int run_openapi() {
  std::cout << openapi_document().dump(2) << "\n";
  return 0;
}

namespace {

// The token from its file (first line), else from $KGYM_TOKEN, whose value is then overwritten
// in place: /proc/<pid>/environ shows the process's original environment block, and a
// same-user process should not find the token there.
std::string read_token(const std::string& token_file) {
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    std::string line;
    if (!in || !std::getline(in, line)) {
      throw std::runtime_error(fmt::format("--token-file {}: cannot be read", token_file));
    }
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) throw std::runtime_error(fmt::format("--token-file {}: empty", token_file));
    return line;
  }
  char* value = std::getenv("KGYM_TOKEN");
  if (value == nullptr) return {};
  std::string token = value;
  std::fill(value, value + token.size(), 'x');
  ::unsetenv("KGYM_TOKEN");
  return token;
}

}  // namespace

int run_backup(const BackupOptions& o) {
  const std::string state_dir = o.state_dir.empty() ? default_state_dir() : o.state_dir;
  const std::string db = o.db.empty() ? state_dir + "/kgym-gym.sqlite3" : o.db;
  if (!fs::exists(db)) {
    std::cerr << "kgym-gym backup: no database at " << db << "\n";
    return 2;
  }
  try {
    const JobStore store(db);
    store.backup_to(o.out);
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym backup: " << e.what() << "\n";
    return 2;
  }
  std::cout << json{{"event", "backup"}, {"db", db}, {"out", o.out}}.dump() << std::endl;
  return 0;
}

int run_serve(const ServeOptions& o) {
  // Signals are taken by one thread (sigwait) so that every other thread runs undisturbed.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  const std::string python = o.python.empty() ? kgym::check::default_python() : o.python;
  ClientRegistry clients = ClientRegistry::open();
  try {
    const std::string token = read_token(o.token_file);
    if (!o.clients_file.empty()) {
      if (!token.empty()) {
        throw std::runtime_error(
            "--clients-file names every client: give no --token-file and no $KGYM_TOKEN");
      }
      clients = ClientRegistry::from_file(o.clients_file);
    } else if (!token.empty()) {
      clients = ClientRegistry::single_token(token);
    }
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym serve: " << e.what() << "\n";
    return 2;
  }
  if (!is_loopback(o.host) && !clients.requires_token()) {
    std::cerr << "kgym-gym serve: binding to " << o.host
              << " (not loopback) needs tokens: --clients-file FILE, --token-file FILE or "
                 "$KGYM_TOKEN\n";
    return 2;
  }
  const std::string state_dir = o.state_dir.empty() ? default_state_dir() : o.state_dir;
  fs::create_directories(state_dir);
  const std::string db = o.db.empty() ? state_dir + "/kgym-gym.sqlite3" : o.db;

  TaskSuite suite;
  std::vector<std::string> dirs = o.task_dirs;
  if (dirs.empty()) {
    dirs.push_back(capture(shell_quote(python) +
                           " -c 'import kgym.tasks as t; print(t.builtin_dir())' 2>/dev/null"));
  }
  for (const auto& d : dirs) suite.load_dir(d);

  if (o.require_sandbox) {
    if (!o.private_view) {
      std::cerr
          << "kgym-gym serve: --require-sandbox and --no-private-view contradict each other\n";
      return 2;
    }
  }
  // A pool's front door runs no job: its workers check their own sandbox (worker
  // --require-sandbox), and the front door fails any answer that lacks a layer.
  if (o.require_sandbox && o.redis.empty()) {
    std::cerr << "kgym-gym serve: checking the sandbox (--require-sandbox)\n";
    const auto gaps = kgym::check::probe_sandbox(python, o.sandbox_uid);
    if (!gaps.empty()) {
      std::cerr << "kgym-gym serve: --require-sandbox: this machine does not give jobs every "
                   "sandbox layer:\n";
      for (const auto& gap : gaps) std::cerr << "  - " << gap << "\n";
      return 2;
    }
  }

  ServiceConfig config;
  try {
    // The jobs' own scratch directory, emptied of what a crash left, before any slot starts (a
    // pool's front door runs no job).
    if (o.redis.empty()) config.defaults.scratch_dir = prepare_job_scratch(state_dir, "serve");
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym serve: " << e.what() << "\n";
    return 2;
  }
  std::string device;
  std::string gpu_names;
  std::shared_ptr<JobPool> pool;
  if (!o.redis.empty()) {
    // The front door of a pool: no local slots; the jobs are for the pool's device.
    device = o.pool_device;
    try {
      pool = make_redis_pool(o.redis, o.pool);
    } catch (const std::exception& e) {
      std::cerr << "kgym-gym serve: " << e.what() << "\n";
      return 2;
    }
    config.pool = pool;
  } else {
    SlotOptions slot_options{o.gpus,        o.workers_per_gpu, o.cpu_workers,
                             o.fork_server, state_dir,         python};
    auto machine = make_machine_slots(slot_options);
    device = machine.device;
    gpu_names = machine.gpu_names;
    config.workers = std::move(machine.slots);
  }
  config.defaults.device = device;
  config.defaults.python = python;
  config.defaults.sandbox_uid = o.sandbox_uid;
  config.defaults.private_view = o.private_view;
  try {
    config.defaults.host_options = host_options_json(o.job_limits);
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym serve: " << e.what() << "\n";
    return 2;
  }
  config.require_sandbox = o.require_sandbox;
  config.max_queue = o.max_queue;
  config.cache = !o.no_cache;
  config.retention.max_age_s = o.retain_days * 86400.0;
  config.retention.keep_jobs = o.retain_jobs;
  config.retention.max_age_share = o.retain_max_share;
  config.state_dir = fs::path(db).parent_path().string();
  for (const auto* c : clients.clients()) config.client_names.push_back(c->name);
  // In a pool, the device's name is not the front door's to read: the cache keys name the
  // pool instead (its workers must run one GPU model and the same software, docs/scale.md).
  // The sandbox's settings too: a verdict made without the private view or the required
  // layers is not served by a service that requires them (a cache hit is not evaluated).
  config.environment = fmt::format("{}|{}|{}|view:{}|require:{}", device, software_versions(python),
                                   pool ? fmt::format("pool:{}", o.pool) : gpu_names,
                                   o.private_view, o.require_sandbox);

  std::unique_ptr<JobStore> opened;
  try {
    opened = std::make_unique<JobStore>(db);
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym serve: " << e.what() << "\n";
    return 2;
  }
  JobStore& store = *opened;
  JobService service(config, std::move(suite), store);
  // Retention runs now and every minute (JobService::start).
  service.start();
  HttpConfig http;
  http.host = o.host;
  http.port = static_cast<std::uint16_t>(o.port);
  http.clients = std::move(clients);
  http.tls_cert_file = o.tls_cert;
  http.tls_key_file = o.tls_key;
  http.max_body_bytes = o.max_body;
  http.max_connections = o.max_connections;
  http.idle_timeout_s = o.idle_timeout_s;
  http.busy_idle_timeout_s = std::min(1.0, o.idle_timeout_s);
  http.header_timeout_s = o.header_timeout_s;
  http.body_timeout_s = o.body_timeout_s;
  http.openapi_json = openapi_document().dump(2);
  HttpServer server(http, service);
  try {
    server.bind();
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym serve: " << e.what() << "\n";
    service.stop();
    return 2;
  }
  const auto url =
      fmt::format("{}://{}:{}", o.tls_cert.empty() ? "http" : "https", o.host, server.bound_port());
  if (!o.port_file.empty()) {
    const auto tmp = o.port_file + ".tmp";
    std::ofstream(tmp) << server.bound_port() << "\n";
    fs::rename(tmp, o.port_file);
  }
  std::cout << json{{"event", "listening"},
                    {"url", url},
                    {"port", server.bound_port()},
                    {"device", device},
                    {"workers", config.workers.size()},
                    {"pool", pool ? json(pool->describe()) : json(nullptr)},
                    {"fork_server", o.fork_server},
                    {"db", db}}
                   .dump()
            << std::endl;
  if (pool) {
    std::cerr << fmt::format("kgym-gym: serving {} on {} with the workers of {}; state in {}\n",
                             device, url, pool->describe(), db);
  } else {
    std::cerr << fmt::format("kgym-gym: serving {} on {} with {} workers; state in {}\n", device,
                             url, config.workers.size(), db);
  }

  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cerr << "kgym-gym: stopping (signal " << sig << ")\n";
    server.stop();
  });
  server.serve();
  service.stop();
  if (signal_thread.joinable()) {
    // serve() only returns after stop(), which only the signal thread calls.
    signal_thread.join();
  }
  return 0;
}
