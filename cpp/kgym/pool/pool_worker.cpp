#include "kgym/pool/pool_worker.hpp"

#include <signal.h>
#include <unistd.h>

#include <thread>

#include <fmt/format.h>

#include "kgym/service/api_error.hpp"
#include "kgym/service/evaluation.hpp"
#include "kgym/service/task_suite.hpp"

namespace kgym::pool {

using nlohmann::json;

namespace {

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::chrono::milliseconds retry_wait(int failures) {
  return std::chrono::milliseconds(std::min(2000, 50 << std::min(failures, 6)));
}

}  // namespace

PoolWorker::PoolWorker(WorkerConfig config, Sink sink)
    : config_(std::move(config)),
      sink_(std::move(sink)),
      running_(config_.slots.size()),
      launcher_made_(config_.slots.size(), false) {}

void PoolWorker::emit(const json& line) {
  std::lock_guard lock(sink_mu_);
  sink_(line);
}

json PoolWorker::describe_self() {
  json devices = json::array();
  for (const auto& s : config_.slots)
    devices.push_back(fmt::format("{}/{}", config_.host, s.label));
  int busy = 0;
  {
    std::lock_guard lock(mu_);
    for (const auto& r : running_) busy += r.active ? 1 : 0;
  }
  return {{"name", config_.name},
          {"host", config_.host},
          {"pid", ::getpid()},
          {"device", config_.device},
          {"slots", config_.slots.size()},
          {"busy", busy},
          {"devices", devices},
          {"software", config_.software},
          {"lease_s", static_cast<double>(config_.queue.lease.count()) / 1e3}};
}

void PoolWorker::run(const std::atomic<bool>& stop) {
  std::atomic<bool> slots_done{false};
  std::thread heartbeat([&] { heartbeat_loop(stop, slots_done); });
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < config_.slots.size(); ++i) {
    threads.emplace_back([this, i, &stop] { slot_loop(i, stop); });
  }
  for (auto& t : threads) t.join();
  slots_done = true;
  heartbeat.join();
}

void PoolWorker::slot_loop(std::size_t index, const std::atomic<bool>& stop) {
  const auto& slot = config_.slots[index];
  check::Launcher launcher;
  if (slot.make_launcher) launcher = slot.make_launcher();
  {
    std::lock_guard lock(mu_);
    launcher_made_[index] = true;
  }
  RedisConnection redis(config_.address);
  StreamQueue queue(redis, config_.queue);
  const auto consumer = fmt::format("{}-{}", config_.name, index);
  for (int failures = 0; !stop;) {
    std::optional<Delivery> d;
    try {
      d = queue.take(consumer, config_.poll);
      if (failures > 0) emit({{"event", "redis_back"}, {"slot", index}});
      failures = 0;
    } catch (const RedisUnavailable& e) {
      if (failures++ == 0)
        emit({{"event", "redis_unavailable"}, {"slot", index}, {"error", e.what()}});
      std::this_thread::sleep_for(retry_wait(failures));
      continue;
    } catch (const std::exception& e) {
      // A server that answers but refuses (a wrong password, a key of another type): said once
      // per episode, retried, since another part may fix it.
      if (failures++ == 0) emit({{"event", "redis_error"}, {"slot", index}, {"error", e.what()}});
      std::this_thread::sleep_for(retry_wait(failures));
      continue;
    }
    if (d) handle(index, queue, *d, launcher);
  }
}

void PoolWorker::handle(std::size_t index, StreamQueue& queue, const Delivery& d,
                        const check::Launcher& launcher) {
  const auto& slot = config_.slots[index];
  const auto consumer = fmt::format("{}-{}", config_.name, index);
  const auto where = fmt::format("{}/{}", config_.host, slot.label);
  const auto started = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    running_[index] = Running{d, consumer, 0, false, false, true};
  }
  ++counters_.taken;
  service::EvalOutcome outcome;
  const json message = json::parse(d.payload, nullptr, false);
  bool ran = false;
  try {
    if (d.job_id.empty() || !message.is_object() || !message.contains("request")) {
      throw service::ApiError(400, "bad_message",
                              "the pool's job entry could not be read (not a job of this version)");
    }
    if (d.deliveries > config_.max_deliveries) {
      throw service::ApiError(
          500, "worker_lost",
          fmt::format("the job was handed to workers {} times and none answered (each died or "
                      "stopped past its lease); it is not tried again",
                      d.deliveries - 1));
    }
    if (queue.cancel_requested(d.job_id)) {
      outcome = service::unfinished("cancelled", nullptr);
    } else {
      const auto device = message.value("device", std::string());
      if (device != config_.device) {
        throw service::ApiError(
            400, "wrong_device",
            fmt::format("the job is for '{}' and this worker ({}) evaluates on '{}'", device,
                        config_.name, config_.device));
      }
      service::TaskSuite suite;
      suite.add(message.value("task_id", std::string()),
                message.value("task_source", std::string()));
      auto defaults = config_.defaults;
      defaults.device = config_.device;
      const auto request =
          service::parse_eval_request(message["request"], suite, defaults, config_.limits);
      queue.announce(d, "started", json{{"worker", where}, {"deliveries", d.deliveries}}.dump());
      emit(
          {{"event", "started"}, {"job", d.job_id}, {"slot", where}, {"deliveries", d.deliveries}});
      ran = true;
      outcome = service::evaluate_on_slot(slot, request.job, std::nullopt, launcher,
                                          [this, index](int pgid) {
                                            std::lock_guard lock(mu_);
                                            auto& r = running_[index];
                                            r.pgid = pgid;
                                            if (r.lost || r.cancelled) ::kill(-pgid, SIGKILL);
                                          });
    }
  } catch (const service::ApiError& e) {
    outcome = service::unfinished("failed", service::error_json(e.code, e.what()));
  } catch (const RedisUnavailable& e) {
    // Redis failing before the job ran: the entry stays pending and is taken again once the
    // lease runs out; nothing is answered from here.
    emit({{"event", "redis_unavailable"}, {"job", d.job_id}, {"error", e.what()}});
    std::lock_guard lock(mu_);
    running_[index].active = false;
    return;
  } catch (const RedisCommandError& e) {
    emit({{"event", "redis_error"}, {"job", d.job_id}, {"error", e.what()}});
    std::lock_guard lock(mu_);
    running_[index].active = false;
    return;
  } catch (const std::exception& e) {
    // Anything else is this job's problem, not the pool's: it ends with a clear error rather
    // than being handed to the next worker to fail the same way.
    outcome = service::unfinished(
        "failed", service::error_json(
                      "internal", fmt::format("the worker could not run the job: {}", e.what())));
  }
  bool lost;
  {
    std::lock_guard lock(mu_);
    auto& r = running_[index];
    lost = r.lost;
    if (r.cancelled) outcome.status = "cancelled";
  }
  const json payload = {{"status", outcome.status}, {"result", outcome.result},
                        {"error", outcome.error},   {"worker", where},
                        {"consumer", consumer},     {"deliveries", d.deliveries}};
  std::optional<Completion> completion;
  // The answer is written even when the lease looked lost: the write itself decides (only the
  // entry's owner may answer). Redis being away is waited out for a while; past that the
  // entry's lease has long run out and another worker answers.
  for (int failures = 0; failures < 60 && !completion; ++failures) {
    try {
      completion = queue.complete(d, consumer, payload.dump());
    } catch (const std::exception& e) {
      if (failures == 0)
        emit({{"event", "redis_unavailable"}, {"job", d.job_id}, {"error", e.what()}});
      std::this_thread::sleep_for(retry_wait(failures));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string recorded = "unwritten";
  if (completion == Completion::kRecorded) {
    ++counters_.recorded;
    recorded = "recorded";
  } else if (completion == Completion::kDuplicate) {
    ++counters_.duplicates;
    recorded = "duplicate";
  } else if (completion == Completion::kLeaseLost) {
    ++counters_.lease_lost;
    recorded = "lease_lost";
  }
  const auto verdict =
      outcome.result.is_object() ? outcome.result.value("status", json(nullptr)) : json(nullptr);
  emit({{"event", "answered"},
        {"job", d.job_id},
        {"slot", where},
        {"status", outcome.status},
        {"result", verdict},
        {"ran", ran},
        {"answer", recorded},
        {"lost_lease_seen", lost},
        {"seconds", seconds},
        {"at", wall_now()}});
  std::lock_guard lock(mu_);
  running_[index].active = false;
}

void PoolWorker::heartbeat_loop(const std::atomic<bool>& stop,
                                const std::atomic<bool>& slots_done) {
  RedisConnection redis(config_.address);
  StreamQueue queue(redis, config_.queue);
  // Three beats per lease: one late beat does not lose a lease.
  const auto period = std::max(std::chrono::milliseconds(100), config_.queue.lease / 3);
  const auto ttl = std::chrono::seconds(std::max<long long>(
      5, 2 * std::chrono::duration_cast<std::chrono::seconds>(config_.queue.lease).count()));
  bool unavailable = false;
  bool slots_closed = false;
  while (!slots_done) {
    if (stop && !slots_closed) {
      // A slot still waiting for its fork server's imports gives up; one that serves finishes
      // its job (its server may need to start again for it).
      std::lock_guard lock(mu_);
      for (std::size_t i = 0; i < config_.slots.size(); ++i) {
        const auto& slot = config_.slots[i];
        if (!launcher_made_[i] && slot.close) slot.close();
      }
      slots_closed = true;
    }
    try {
      std::vector<std::pair<std::size_t, Running>> now;
      {
        std::lock_guard lock(mu_);
        for (std::size_t i = 0; i < running_.size(); ++i) {
          if (running_[i].active && !running_[i].lost) now.emplace_back(i, running_[i]);
        }
      }
      for (const auto& [i, r] : now) {
        const bool held = queue.heartbeat(r.delivery, r.consumer);
        const bool cancel = held && queue.cancel_requested(r.delivery.job_id);
        if (held && !cancel) continue;
        {
          std::lock_guard lock(mu_);
          auto& live = running_[i];
          if (!live.active || live.delivery.entry_id != r.delivery.entry_id) continue;
          (held ? live.cancelled : live.lost) = true;
          if (live.pgid > 0) ::kill(-live.pgid, SIGKILL);
        }
        emit({{"event", held ? "cancelled" : "lease_lost"},
              {"job", r.delivery.job_id},
              {"why", held ? "the front door cancelled the job"
                           : "the lease ran out and another worker took the job; this run is "
                             "stopped and its answer will not count"}});
      }
      if (!stop) {
        queue.register_worker(config_.name, describe_self().dump(), ttl);
      } else {
        redis.command({"DEL", queue.keys().worker(config_.name)});
      }
      if (unavailable) emit({{"event", "redis_back"}, {"slot", "heartbeat"}});
      unavailable = false;
    } catch (const std::exception& e) {
      if (!unavailable)
        emit({{"event", "redis_unavailable"}, {"slot", "heartbeat"}, {"error", e.what()}});
      unavailable = true;
    }
    const auto until = std::chrono::steady_clock::now() + period;
    while (!slots_done && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace kgym::pool
