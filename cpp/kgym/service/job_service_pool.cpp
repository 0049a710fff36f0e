// JobService in pool mode (docs/scale.md): jobs are published to the pool's workers instead of
// run on local threads, and what the workers report is recorded as the local workers' results
// are. The embedded mode is job_service.cpp; the parts both share (the queue, caching, answers)
// are there.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "kgym/service/job_service.hpp"

namespace kgym::service {

using nlohmann::json;

namespace {

// Waits between attempts while the pool cannot be reached: short at first, at most 2 s.
std::chrono::milliseconds backoff(int failures) {
  return std::chrono::milliseconds(std::min(2000, 50 << std::min(failures, 6)));
}

}  // namespace

json JobService::pool_message(const Live& live) const {
  // The request as the client sent it, and the task's source: a worker host need not have the
  // front door's task directories. Host-specific settings (interpreter, sandbox uid, scratch
  // space) are the worker's own.
  return {{"id", live.stored.id},
          {"request", json::parse(live.stored.request_json)},
          {"task_id", live.request.job.task_id},
          {"task_source", live.request.job.task_source},
          {"device", config_.defaults.device}};
}

void JobService::publish_until_done(const std::shared_ptr<Live>& live) {
  const auto message = pool_message(*live);
  for (int failures = 0;; ++failures) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || !live_.contains(live->stored.id)) return;
    }
    try {
      config_.pool->publish(live->stored.id, live->stored.priority, message);
      std::lock_guard lock(mu_);
      live->dispatched = true;
      return;
    } catch (const std::exception& e) {
      if (failures == 0) {
        std::cerr << fmt::format("kgym-gym: cannot publish {} to the pool ({}); retrying\n",
                                 live->stored.id, e.what());
      }
      std::this_thread::sleep_for(backoff(failures));
    }
  }
}

void JobService::dispatch_loop() {
  for (;;) {
    auto live = next_job();
    if (!live) return;
    if (answer_from_cache(live)) {
      release_key(live->stored.cache_key);
      continue;
    }
    publish_until_done(live);
  }
}

void JobService::republish_dispatched() {
  std::vector<std::shared_ptr<Live>> again;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, live] : live_) {
      if (live->dispatched) again.push_back(live);
    }
  }
  if (!again.empty()) {
    std::cerr << fmt::format(
        "kgym-gym: the pool's connection was made again; re-publishing {} unfinished jobs "
        "(those the pool still holds are not queued twice)\n",
        again.size());
  }
  for (const auto& live : again) publish_until_done(live);
}

void JobService::collect_loop() {
  std::uint64_t seen_connects = 0;
  for (int failures = 0;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    try {
      const auto events = config_.pool->events(std::chrono::milliseconds(1000));
      const auto connects = config_.pool->reconnects();
      if (seen_connects != 0 && connects != seen_connects) republish_dispatched();
      seen_connects = connects;
      for (const auto& e : events) {
        on_pool_event(e);
        config_.pool->done_with(e);
      }
      if (failures > 0) std::cerr << "kgym-gym: the pool is reachable again\n";
      failures = 0;
    } catch (const std::exception& e) {
      if (failures == 0) {
        std::cerr << fmt::format("kgym-gym: cannot read the pool's events ({}); retrying\n",
                                 e.what());
      }
      std::this_thread::sleep_for(backoff(failures++));
    }
  }
}

void JobService::on_pool_event(const PoolEvent& event) {
  std::shared_ptr<Live> live;
  {
    std::lock_guard lock(mu_);
    const auto it = live_.find(event.job_id);
    // Not live: finished already (a late or repeated event), or cancelled. Nothing to record.
    if (it == live_.end()) return;
    live = it->second;
  }
  if (event.kind == "started") {
    double started_at;
    double waited;
    {
      std::lock_guard lock(mu_);
      live->stored.status = "running";
      const auto now = clock_now();
      live->stored.started_at = started_at = now.wall;
      waited = live->accepted_boot >= 0 ? now.boot - live->accepted_boot
                                        : std::max(0.0, now.wall - live->stored.created_at);
      ++live->stored.attempts;
      live->dispatched = true;
      count_running_locked(*live, true);
    }
    metrics_.observe("kgym_queue_wait_seconds", "", waited);
    try {
      store_.mark_running(live->stored.id, started_at);
    } catch (const std::exception& e) {
      // The store is the record, not the scheduler.
      store_failed("mark_running", e);
    }
    return;
  }
  if (event.kind != "result") return;
  EvalOutcome outcome;
  const auto& d = event.data;
  outcome.status = d.value("status", std::string("failed"));
  outcome.result = d.contains("result") ? d["result"] : json(nullptr);
  outcome.error = d.contains("error") ? d["error"] : json(nullptr);
  if (outcome.status != "done" && outcome.status != "failed" && outcome.status != "cancelled") {
    outcome = unfinished("failed", error_json("internal", fmt::format("a pool worker answered the "
                                                                      "unknown status '{}'",
                                                                      outcome.status)));
  }
  if (outcome.status == "cancelled") {
    std::lock_guard lock(mu_);
    live->cancel_requested = true;
  }
  complete(live, d.value("worker", std::string("pool")), std::move(outcome));
  release_key(live->stored.cache_key);
}

void JobService::cancel_in_pool(const std::string& id) {
  try {
    config_.pool->cancel(id);
  } catch (const std::exception& e) {
    // The job is cancelled here all the same; a worker that runs it is answered and ignored.
    std::cerr << fmt::format("kgym-gym: cannot tell the pool to cancel {} ({})\n", id, e.what());
  }
}

json JobService::pool_health() const {
  json pool = {{"redis", config_.pool->describe()}};
  json devices = json::array();
  std::int64_t slots = 0;
  try {
    const auto workers = config_.pool->workers();
    for (const auto& w : workers) {
      slots += w.value("slots", 0);
      for (const auto& label : w.value("devices", json::array())) devices.push_back(label);
    }
    pool["workers"] = workers;
    pool["reachable"] = true;
  } catch (const std::exception& e) {
    pool["reachable"] = false;
    pool["error"] = e.what();
  }
  const json found = problems();
  std::lock_guard lock(mu_);
  return {{"status", stopping_       ? "stopping"
                     : found.empty() ? "ok"
                                     : "degraded"},
          {"problems", found},
          {"retention", last_retention_},
          {"workers", slots},
          {"queue_depth", live_.size() - running_},
          {"running", running_},
          {"devices", devices},
          {"pool", pool}};
}

}  // namespace kgym::service
