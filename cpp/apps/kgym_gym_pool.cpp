#include "kgym_gym_pool.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kgym/check/evaluate.hpp"
#include "kgym/check/sandbox_layers.hpp"
#include "kgym_gym_serve.hpp"
#include "kgym_gym_slots.hpp"

#ifdef KGYM_HAVE_HIREDIS
#include "kgym/pool/pool_worker.hpp"
#include "kgym/pool/redis_job_pool.hpp"
#endif

using nlohmann::json;

namespace {

// Said by both commands when this executable was built without hiredis.
constexpr const char* kNoRedis =
    "this kgym-gym was built without Redis support (libhiredis-dev was not found when it was "
    "built, or KGYM_WITH_POOL was OFF): install it (Debian: apt-get install libhiredis-dev) and "
    "rebuild, or run the embedded service without --redis";

}  // namespace

CLI::App* add_worker_command(CLI::App& app, WorkerOptions& o) {
  auto* cmd = app.add_subcommand(
      "worker",
      "Run this host's GPU (or CPU) slots as workers of a pool fed through Redis "
      "(docs/scale.md)");
  cmd->add_option("--redis", o.redis,
                  "the pool's Redis: redis://host[:port][/db] or unix:///path (its password "
                  "from $KGYM_REDIS_PASSWORD)")
      ->required();
  cmd->add_option("--pool", o.pool, "the pool's name (as given to serve --pool)")
      ->capture_default_str();
  cmd->add_option("--name", o.name, "this worker's name in the pool (default: host-pid)");
  cmd->add_option("--gpus", o.gpus, "auto | none (CPU mode) | all | a list such as 0,1")
      ->capture_default_str();
  cmd->add_option("--workers-per-gpu", o.workers_per_gpu,
                  "concurrent jobs per GPU: a slot takes a job only when it is free")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--cpu-workers", o.cpu_workers, "concurrent jobs in CPU mode (0: one per core)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--threads-per-job", o.threads_per_job,
                  "CPU threads each job may use (0: this host's cores shared out between its "
                  "slots)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--state-dir", o.state_dir,
                  "where fork servers and GPU lock files live (default: ~/.local/state/kgym)");
  cmd->add_option("--python", o.python, "interpreter with kgym, torch and triton installed");
  cmd->add_flag("!--no-fork-server", o.fork_server,
                "start a fresh Python per job instead of forking warm workers");
  cmd->add_option("--sandbox-uid", o.sandbox_uid,
                  "when run as root, each job's untrusted processes take this uid plus the "
                  "job's pid (-1: keep the worker's)")
      ->capture_default_str();
  cmd->add_flag("!--no-private-view", o.private_view,
                "no mount/IPC/UTS namespaces and file-system view per job");
  cmd->add_flag("--require-sandbox", o.require_sandbox,
                "refuse to start when a sandbox layer is unavailable on this host");
  cmd->add_option("--lease", o.lease_s,
                  "seconds without a heartbeat after which another worker takes a job over; "
                  "every worker of a pool should use the same value")
      ->capture_default_str()
      ->check(CLI::Range(0.3, 3600.0));
  cmd->add_option("--max-deliveries", o.max_deliveries,
                  "a job handed out more often than this (its workers kept dying) fails with "
                  "error.code worker_lost")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--poll", o.poll_s, "seconds a free slot waits for a job per read")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 60.0));
  cmd->add_flag("--json", o.json, "progress as JSON lines on stdout (else text on stderr)");
  add_host_option_flags(cmd, o.job_limits);
  return cmd;
}

#ifndef KGYM_HAVE_HIREDIS

std::shared_ptr<kgym::service::JobPool> make_redis_pool(const std::string&, const std::string&) {
  throw std::runtime_error(fmt::format("--redis: {}", kNoRedis));
}

int run_worker(const WorkerOptions&) {
  std::cerr << "kgym-gym worker: " << kNoRedis << "\n";
  return 2;
}

#else

namespace {

// The URL's address, with the password from $KGYM_REDIS_PASSWORD when the URL has none: a
// command line is readable by every process of the machine, an environment block only by the
// process' user, and its copy in /proc/<pid>/environ is overwritten here (as for KGYM_TOKEN).
kgym::pool::RedisAddress redis_address(const std::string& url) {
  auto address = kgym::pool::parse_redis_url(url);
  if (char* value = std::getenv("KGYM_REDIS_PASSWORD"); value != nullptr) {
    const std::string password = value;
    std::fill(value, value + password.size(), 'x');
    ::unsetenv("KGYM_REDIS_PASSWORD");
    if (address.password.empty()) address.password = password;
  }
  return address;
}

}  // namespace

std::shared_ptr<kgym::service::JobPool> make_redis_pool(const std::string& url,
                                                        const std::string& pool) {
  kgym::pool::QueueConfig config;
  config.pool = pool;
  kgym::pool::check_pool_name(pool);
  auto redis = std::make_shared<kgym::pool::RedisJobPool>(redis_address(url), config);
  redis->check_reachable();
  return redis;
}

namespace {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "host";
  return buf;
}

// One line of text per event for people; --json prints the events themselves.
std::string event_text(const json& e) {
  const auto kind = e.value("event", std::string());
  const auto job = e.value("job", std::string());
  if (kind == "started") {
    return fmt::format("{}: started on {} (delivery {})", job, e.value("slot", std::string()),
                       e.value("deliveries", 0));
  }
  if (kind == "answered") {
    return fmt::format("{}: {} ({}) in {:.1f} s; answer {}", job, e.value("status", std::string()),
                       e["result"].is_string() ? e["result"].get<std::string>() : "no result",
                       e.value("seconds", 0.0), e.value("answer", std::string()));
  }
  if (kind == "lease_lost" || kind == "cancelled") {
    return fmt::format("{}: {}", job, e.value("why", std::string()));
  }
  return e.dump();
}

}  // namespace

int run_worker(const WorkerOptions& o) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  kgym::pool::WorkerConfig config;
  try {
    config.address = redis_address(o.redis);
    kgym::pool::check_pool_name(o.pool);
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym worker: " << e.what() << "\n";
    return 2;
  }
  const std::string python = o.python.empty() ? kgym::check::default_python() : o.python;
  const std::string state_dir = o.state_dir.empty() ? default_state_dir() : o.state_dir;
  std::filesystem::create_directories(state_dir);
  if (o.require_sandbox) {
    if (!o.private_view) {
      std::cerr
          << "kgym-gym worker: --require-sandbox and --no-private-view contradict each other\n";
      return 2;
    }
    const auto gaps = kgym::check::probe_sandbox(python, o.sandbox_uid);
    if (!gaps.empty()) {
      std::cerr << "kgym-gym worker: --require-sandbox: this host does not give jobs every "
                   "sandbox layer:\n";
      for (const auto& gap : gaps) std::cerr << "  - " << gap << "\n";
      return 2;
    }
  }
  config.host = host_name();
  config.name = o.name.empty() ? fmt::format("{}-{}", config.host, ::getpid()) : o.name;
  try {
    kgym::pool::check_pool_name(config.name);  // the same alphabet: it is part of keys too
  } catch (const std::exception&) {
    std::cerr << fmt::format(
        "kgym-gym worker: --name '{}': 1 to 64 letters, digits, '-', '_' or '.'\n", config.name);
    return 2;
  }
  config.queue.pool = o.pool;
  config.queue.lease = std::chrono::milliseconds(static_cast<long long>(o.lease_s * 1000));
  config.max_deliveries = o.max_deliveries;
  config.poll = std::chrono::milliseconds(static_cast<long long>(o.poll_s * 1000));
  MachineSlots machine;
  try {
    config.defaults.scratch_dir = prepare_job_scratch(state_dir, "worker");
    machine = make_machine_slots({o.gpus, o.workers_per_gpu, o.cpu_workers, o.fork_server,
                                  state_dir, python, o.threads_per_job});
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym worker: " << e.what() << "\n";
    return 2;
  }
  config.device = machine.device;
  config.slots = std::move(machine.slots);
  config.defaults.device = machine.device;
  config.defaults.python = python;
  config.defaults.sandbox_uid = o.sandbox_uid;
  config.defaults.private_view = o.private_view;
  try {
    config.defaults.host_options = host_options_json(o.job_limits);
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym worker: " << e.what() << "\n";
    return 2;
  }
  config.software = software_versions(python);
  {
    // A wrong URL or a server that refuses is said now, not retried forever.
    kgym::pool::RedisConnection probe(config.address);
    try {
      probe.command({"PING"});
    } catch (const kgym::pool::RedisCommandError& e) {
      std::cerr << "kgym-gym worker: " << e.what() << "\n";
      return 2;
    } catch (const kgym::pool::RedisUnavailable& e) {
      std::cerr << "kgym-gym worker: " << e.what() << " (retrying until it answers)\n";
    }
  }

  const bool as_json = o.json;
  kgym::pool::PoolWorker worker(config, [as_json](const json& e) {
    if (as_json) {
      std::cout << e.dump() << std::endl;
    } else {
      std::cerr << "kgym-gym worker: " << event_text(e) << "\n";
    }
  });
  const json hello = {{"event", "worker"},       {"name", config.name},
                      {"pool", o.pool},          {"redis", config.address.display()},
                      {"device", config.device}, {"slots", config.slots.size()},
                      {"lease_s", o.lease_s}};
  if (as_json) {
    std::cout << hello.dump() << std::endl;
  } else {
    std::cerr << fmt::format("kgym-gym worker: {} serves pool '{}' at {} with {} {} slots\n",
                             config.name, o.pool, config.address.display(), config.slots.size(),
                             config.device);
  }
  std::atomic<bool> stop{false};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cerr << fmt::format(
        "kgym-gym worker: stopping (signal {}): no new jobs; the running ones finish first\n", sig);
    stop = true;
  });
  signal_thread.detach();  // it returns after the first signal; the process may end before
  worker.run(stop);
  const auto& c = worker.counters();
  const json bye = {{"event", "stopped"},
                    {"taken", c.taken.load()},
                    {"recorded", c.recorded.load()},
                    {"duplicates", c.duplicates.load()},
                    {"lease_lost", c.lease_lost.load()}};
  if (as_json) {
    std::cout << bye.dump() << std::endl;
  } else {
    std::cerr << "kgym-gym worker: " << bye.dump() << "\n";
  }
  return 0;
}

#endif
