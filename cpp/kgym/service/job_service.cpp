#include "kgym/service/job_service.hpp"

#include <signal.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kgym/check/sandbox_layers.hpp"
#include "kgym/result/feedback.hpp"
#include "kgym/reward/reward.hpp"
#include "kgym/reward/spec.hpp"
#include "kgym/service/api_error.hpp"
#include "kgym/service/hashing.hpp"
#include "kgym/service/reference_drift.hpp"

namespace kgym::service {

using nlohmann::json;

namespace {

double now_seconds() { return clock_now().wall; }

// How long after a failed store call the service still says it is degraded.
constexpr double kStoreFailureMemory = 60.0;
// The health probe writes at most this often.
constexpr double kProbeEvery = 5.0;

std::string client_label(const std::string& name) {
  return Metrics::label("client", name.empty() ? "anonymous" : name);
}

bool finished_status(const std::string& status) {
  return status == "done" || status == "cancelled" || status == "failed";
}

// Verdicts that depend on the candidate alone; a timeout, crash or infra error may be the
// machine's fault, so those are evaluated afresh next time.
bool cacheable(const result::Result& result) {
  const auto& status = result.status;
  return status == "ok" || status == "incorrect" || status == "compile_error" ||
         status == "runtime_error" || status == "rejected";
}

const std::map<std::string, std::pair<std::string, std::string>> kHelp = {
    {"kgym_requests_total", {"evaluation requests accepted, by how they were answered", ""}},
    {"kgym_jobs_finished_total", {"jobs finished, by job status and Result status", ""}},
    {"kgym_cache_hits_total", {"requests answered from the result cache", ""}},
    {"kgym_cache_misses_total", {"requests that needed an evaluation", ""}},
    {"kgym_worker_restarts_total", {"fork servers restarted after dying", ""}},
    {"kgym_infra_retries_total",
     {"evaluations run a second time because the first ended infra_error or out of GPU memory",
      ""}},
    {"kgym_infra_controls_total",
     {"control runs after a second infra_error, by whether the failure was charged to the "
      "candidate",
      ""}},
    {"kgym_reference_checks_total",
     {"measured reference medians compared with the stored one, by whether they drifted", ""}},
    {"kgym_queue_depth", {"jobs waiting for a worker", ""}},
    {"kgym_jobs_running", {"jobs being evaluated", ""}},
    {"kgym_jobs_ending",
     {"jobs answered at the judge's report whose slot is still ending them (the teardown)", ""}},
    {"kgym_jobs", {"jobs in the store, by status", ""}},
    {"kgym_phase_seconds", {"wall time of evaluation phases, measured by the supervisor", ""}},
    {"kgym_queue_wait_seconds", {"time from acceptance to the start of evaluation", ""}},
    {"kgym_http_requests_total", {"HTTP requests answered, by status code", ""}},
    {"kgym_db_errors_total",
     {"operations on the job store (SQLite) that failed, by operation", ""}},
    {"kgym_retention_deleted_total", {"finished jobs deleted by retention, by rule", ""}},
    {"kgym_retention_refused_total",
     {"retention passes whose deletions by age were refused (too large a share at once)", ""}},
    {"kgym_client_requests_total", {"evaluation requests accepted, by client", ""}},
    {"kgym_client_refused_total",
     {"requests refused by a client's limits, by client and reason", ""}},
    {"kgym_client_jobs_finished_total", {"jobs finished, by client and job status", ""}},
    {"kgym_client_jobs_in_flight", {"queued and running jobs, by client", ""}},
    {"kgym_client_jobs_running", {"running jobs, by client", ""}},
    {"kgym_client_queue_wait_seconds",
     {"time from acceptance to the start of evaluation, by client", ""}},
};

}  // namespace

JobService::JobService(ServiceConfig config, TaskSuite suite, JobStore& store)
    : config_(std::move(config)), suite_(std::move(suite)), store_(store) {
  // Present from the start, so that a rate over it is defined before the first error.
  metrics_.count("kgym_db_errors_total", "", 0);
  metrics_.count("kgym_retention_refused_total", "", 0);
}

JobService::~JobService() { stop(); }

std::string JobService::new_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("j-{:x}-{:012x}", ++id_counter_, rng() & 0xffffffffffffULL);
}

void JobService::start() {
  {
    std::lock_guard lock(mu_);
    for (auto& stored : store_.recover_unfinished()) {
      auto live = std::make_shared<Live>();
      live->stored = stored;
      try {
        live->request = parse_eval_request(json::parse(stored.request_json), suite_,
                                           config_.defaults, config_.limits);
      } catch (const std::exception& e) {
        // A request that no longer parses (a task removed from the suite) ends clearly.
        live->answer = finished_answer(*live, json(nullptr), "failed",
                                       error_json("not_recoverable", e.what()));
        const auto now = clock_now();
        store_.finish(stored.id, "failed", live->answer.dump(), now.wall, now.boot);
        continue;
      }
      enqueue_locked(live);
      metrics_.count("kgym_requests_total", "answer=\"recovered\"");
    }
  }
  threads_.emplace_back([this] { retention_loop(); });
  if (config_.pool) {
    threads_.emplace_back([this] { dispatch_loop(); });
    threads_.emplace_back([this] { collect_loop(); });
    return;
  }
  for (std::size_t i = 0; i < config_.workers.size(); ++i) {
    threads_.emplace_back([this, i] { worker_loop(i); });
  }
}

void JobService::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    for (auto& [id, live] : live_) {
      if (live->pgid > 0) ::kill(-live->pgid, SIGKILL);
    }
    for (int pgid : ending_) ::kill(-pgid, SIGKILL);
  }
  queue_cv_.notify_all();
  done_cv_.notify_all();
  retention_cv_.notify_all();
  for (const auto& worker : config_.workers) {
    if (worker.close) worker.close();  // a worker still waiting for its fork server gives up
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void JobService::add_live_locked(const std::shared_ptr<Live>& live) {
  if (live_.try_emplace(live->stored.id, live).second) {
    ++in_flight_by_client_[live->stored.client];
  }
}

void JobService::remove_live_locked(const std::string& id) {
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  auto& n = in_flight_by_client_[it->second->stored.client];
  if (n > 0) --n;
  live_.erase(it);
}

void JobService::count_running_locked(Live& live, bool running) {
  if (live.counted_running == running) return;
  live.counted_running = running;
  auto& mine = running_by_client_[live.stored.client];
  if (running) {
    ++running_;
    ++mine;
  } else {
    --running_;
    if (mine > 0) --mine;
  }
}

void JobService::enqueue_locked(const std::shared_ptr<Live>& live) {
  add_live_locked(live);
  queue_.push({live->stored.priority, live->stored.seq, live->stored.id, live->stored.client});
  queue_cv_.notify_one();
}

void JobService::store_failed(const char* op, const std::exception& e) {
  metrics_.count("kgym_db_errors_total", Metrics::label("op", op));
  std::lock_guard lock(health_mu_);
  store_failed_at_ = clock_now().boot;
  store_failure_ = fmt::format("{}: {}", op, e.what());
}

void JobService::check_in_flight_locked(const Client& client, std::size_t adding) const {
  if (client.max_in_flight == 0) return;
  const auto it = in_flight_by_client_.find(client.name);
  const std::size_t now = it == in_flight_by_client_.end() ? 0 : it->second;
  if (now + adding > client.max_in_flight) {
    const_cast<Metrics&>(metrics_).count("kgym_client_refused_total",
                                         client_label(client.name) + ",reason=\"in_flight\"");
    throw ApiError(429, "client_limit",
                   fmt::format("client '{}' has {} jobs queued or running and asks for {} more; "
                               "its limit is {} (retry when some have finished)",
                               client.name, now, adding, client.max_in_flight));
  }
}

std::shared_ptr<JobService::Live> JobService::accept(const Client& client, const json& body,
                                                     std::vector<StoredJob>& to_insert) {
  if (!client.has(Scope::kSubmit)) {
    throw ApiError(403, "forbidden",
                   fmt::format("client '{}' may not submit (its scopes: {})", client.name,
                               ClientRegistry::scope_names(client.scopes)));
  }
  auto live = std::make_shared<Live>();
  auto& request = live->request;
  request = parse_eval_request(body, suite_, config_.defaults, config_.limits);
  // The client's ceilings: what it asks for above one is refused; a default above one is
  // brought down to it (the request did not ask for more).
  const json& options = body.value("options", json::object());
  auto asked = [&](const char* key) {
    return options.is_object() && options.contains(key) && !options[key].is_null();
  };
  if (request.priority > client.max_priority) {
    if (asked("priority")) {
      metrics_.count("kgym_client_refused_total",
                     client_label(client.name) + ",reason=\"priority\"");
      throw ApiError(403, "forbidden",
                     fmt::format("options.priority: client '{}' may ask for at most {}",
                                 client.name, client.max_priority));
    }
    request.priority = client.max_priority;
    request.normalized["options"]["priority"] = request.priority;
  }
  if (request.job.timeout_seconds > client.max_timeout_s) {
    if (asked("timeout_s")) {
      metrics_.count("kgym_client_refused_total",
                     client_label(client.name) + ",reason=\"timeout\"");
      throw ApiError(403, "forbidden",
                     fmt::format("options.timeout_s: client '{}' may ask for at most {} s",
                                 client.name, client.max_timeout_s));
    }
    request.job.timeout_seconds = client.max_timeout_s;
    request.normalized["options"]["timeout_s"] = client.max_timeout_s;
  }
  auto& s = live->stored;
  s.id = new_id();
  s.status = "queued";
  s.priority = live->request.priority;
  s.task_id = live->request.job.task_id;
  s.request_json = body.dump();
  s.client = client.name;
  const auto now = clock_now();
  s.created_at = now.wall;
  live->accepted_boot = now.boot;
  if (config_.cache) {
    s.cache_key = cache_key(live->request, config_.environment);
    if (const auto hit = store_.cached_result(s.cache_key)) {
      const json result = json::parse(*hit, nullptr, false);
      if (!result.is_discarded()) {
        s.cached = true;
        s.status = "done";
        s.started_at = s.finished_at = s.created_at;
        s.finished_boot = live->accepted_boot;
        live->answer = finished_answer(*live, result, "done", json(nullptr));
        s.result_json = live->answer.dump();
        metrics_.count("kgym_cache_hits_total");
      }
    }
    if (!s.cached) metrics_.count("kgym_cache_misses_total");
  }
  if (!s.cached) {
    // A candidate the screen rejects (or with no code in it) is answered now, not queued.
    live->prepared = check::prepare(live->request.job);
    if (const auto& settled = live->prepared->settled) {
      s.status = "done";
      s.started_at = s.finished_at = s.created_at;
      s.finished_boot = live->accepted_boot;
      live->answer = finished_answer(*live, *settled, "done", json(nullptr));
      s.result_json = live->answer.dump();
      metrics_.count("kgym_jobs_finished_total",
                     fmt::format("status=\"done\",result=\"{}\"",
                                 result::read_result_leniently(*settled).status));
    }
  }
  to_insert.push_back(s);
  return live;
}

namespace {

// An idempotency key belongs to the client that used it: another client's same key is another.
std::string client_key(const Client& client, const std::string& key) {
  return client.name.empty() ? key : client.name + "\n" + key;
}

}  // namespace

json JobService::submit(const Client& client, const json& body, double wait_s,
                        const std::string& idempotency_key) {
  std::string request_sha;
  const std::string key = client_key(client, idempotency_key);
  if (!idempotency_key.empty()) {
    const bool printable = std::all_of(idempotency_key.begin(), idempotency_key.end(),
                                       [](char c) { return c > ' ' && c < 127; });
    if (idempotency_key.size() > 200 || !printable) {
      throw ApiError(400, "bad_request",
                     "Idempotency-Key: at most 200 printable ASCII characters, no spaces");
    }
    request_sha = sha256_hex(body.dump());
    if (auto earlier = keyed_job(key, request_sha)) return answer_by_id(*earlier, wait_s);
  }
  std::vector<StoredJob> rows;
  auto live = accept(client, body, rows);
  const bool finished = live->stored.status == "done";
  std::optional<std::string> earlier;
  {
    std::lock_guard lock(mu_);
    if (stopping_) throw ApiError(503, "unavailable", "the service is shutting down");
    if (!finished && live_.size() >= config_.max_queue) {
      throw ApiError(429, "queue_full",
                     fmt::format("{} jobs are unfinished (the limit is {}); retry later",
                                 live_.size(), config_.max_queue));
    }
    if (!finished) check_in_flight_locked(client, 1);
    try {
      if (idempotency_key.empty()) {
        store_.insert(rows[0]);
      } else {
        // Checked again under the lock: a concurrent submission with the key may have won.
        earlier = keyed_job(key, request_sha);
        if (!earlier) store_.insert_keyed(rows[0], key, request_sha, live->stored.created_at);
      }
    } catch (const ApiError&) {
      throw;
    } catch (const std::exception& e) {
      store_failed("insert", e);
      throw ApiError(
          503, "unavailable",
          fmt::format("the job store cannot record the job ({}); retry later", e.what()));
    }
    if (!earlier) {
      live->stored.seq = rows[0].seq;
      if (!finished) enqueue_locked(live);
    }
  }
  if (earlier) return answer_by_id(*earlier, wait_s);
  const char* answer = live->stored.cached ? "answer=\"cached\""
                       : finished          ? "answer=\"settled\""
                                           : "answer=\"queued\"";
  metrics_.count("kgym_requests_total", answer);
  metrics_.count("kgym_client_requests_total", client_label(client.name));
  return wait_for(live, wait_s);
}

std::optional<std::string> JobService::keyed_job(const std::string& key,
                                                 const std::string& request_sha) const {
  const auto earlier = store_.job_for_key(key);
  if (!earlier) return std::nullopt;
  if (earlier->request_sha256 != request_sha) {
    throw ApiError(409, "conflict",
                   "Idempotency-Key: this key was used for another request; use a new key");
  }
  return earlier->job_id;
}

json JobService::submit_batch(const Client& client, const json& body, double wait_s) {
  if (!body.is_object() || !body.contains("requests") || !body["requests"].is_array()) {
    throw ApiError(400, "bad_request", "requests: a JSON array of evaluation requests is required");
  }
  for (const auto& [key, _] : body.items()) {
    if (key != "requests") throw ApiError(400, "bad_request", key + ": unknown field");
  }
  const auto& requests = body["requests"];
  if (requests.empty() || requests.size() > config_.max_batch) {
    throw ApiError(400, "bad_request",
                   fmt::format("requests: between 1 and {} requests", config_.max_batch));
  }
  std::vector<StoredJob> rows;
  std::vector<std::shared_ptr<Live>> lives;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    try {
      lives.push_back(accept(client, requests[i], rows));
    } catch (const ApiError& e) {
      throw ApiError(e.status, e.code, fmt::format("requests[{}].{}", i, e.what()));
    }
  }
  {
    std::lock_guard lock(mu_);
    if (stopping_) throw ApiError(503, "unavailable", "the service is shutting down");
    std::size_t fresh = 0;
    for (const auto& l : lives) fresh += l->stored.status == "done" ? 0 : 1;
    if (live_.size() + fresh > config_.max_queue) {
      throw ApiError(429, "queue_full",
                     fmt::format("{} jobs are unfinished and the batch adds {} (the limit is {})",
                                 live_.size(), fresh, config_.max_queue));
    }
    check_in_flight_locked(client, fresh);
    try {
      store_.insert_many(rows);  // all or none
    } catch (const std::exception& e) {
      store_failed("insert", e);
      throw ApiError(
          503, "unavailable",
          fmt::format("the job store cannot record the jobs ({}); retry later", e.what()));
    }
    for (std::size_t i = 0; i < lives.size(); ++i) {
      lives[i]->stored.seq = rows[i].seq;
      if (lives[i]->stored.status != "done") enqueue_locked(lives[i]);
    }
  }
  for (const auto& l : lives) {
    metrics_.count("kgym_requests_total", l->stored.cached             ? "answer=\"cached\""
                                          : l->stored.status == "done" ? "answer=\"settled\""
                                                                       : "answer=\"queued\"");
  }
  metrics_.count("kgym_client_requests_total", client_label(client.name), lives.size());
  json jobs = json::array();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (const auto& l : lives) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    jobs.push_back(wait_for(l, std::max(0.0, left)));
  }
  return {{"jobs", jobs}};
}

json JobService::wait_for(const std::shared_ptr<Live>& live, double wait_s) {
  std::unique_lock lock(mu_);
  if (wait_s > 0) {
    done_cv_.wait_for(lock, std::chrono::duration<double>(wait_s),
                      [&] { return finished_status(live->stored.status) || stopping_; });
  }
  return answer_of(*live);
}

std::shared_ptr<JobService::Live> JobService::live_for(const Client& client,
                                                       const std::string& id) const {
  std::lock_guard lock(mu_);
  const auto it = live_.find(id);
  if (it == live_.end()) return nullptr;
  if (!client.may_read(it->second->stored.client)) {
    throw ApiError(404, "not_found", fmt::format("no job with id '{}'", id));
  }
  return it->second;
}

json JobService::answer_by_id(const std::string& id, double wait_s) {
  std::shared_ptr<Live> live;
  {
    std::lock_guard lock(mu_);
    const auto it = live_.find(id);
    if (it != live_.end()) live = it->second;
  }
  if (live) return wait_for(live, wait_s);
  std::optional<StoredJob> stored;
  try {
    stored = store_.get(id);
  } catch (const std::exception& e) {
    store_failed("get", e);
    throw ApiError(503, "unavailable", fmt::format("the job store cannot be read ({})", e.what()));
  }
  if (!stored) throw ApiError(404, "not_found", fmt::format("no job with id '{}'", id));
  if (!stored->result_json.empty()) return json::parse(stored->result_json);
  // Unfinished in the store but not live: this process has not (yet) re-queued it.
  return {{"id", stored->id},
          {"status", stored->status},
          {"task_id", stored->task_id},
          {"priority", stored->priority},
          {"attempts", stored->attempts}};
}

json JobService::get(const Client& client, const std::string& id, double wait_s) {
  // A job the client may not read is answered as one that does not exist: its id says nothing.
  if (live_for(client, id)) return answer_by_id(id, wait_s);
  stored_for(client, id);
  return answer_by_id(id, wait_s);
}

StoredJob JobService::stored_for(const Client& client, const std::string& id) {
  std::optional<StoredJob> stored;
  try {
    stored = store_.get(id);
  } catch (const std::exception& e) {
    store_failed("get", e);
    throw ApiError(503, "unavailable", fmt::format("the job store cannot be read ({})", e.what()));
  }
  if (!stored || !client.may_read(stored->client)) {
    throw ApiError(404, "not_found", fmt::format("no job with id '{}'", id));
  }
  return *stored;
}

json JobService::cancel(const Client& client, const std::string& id) {
  // Its own jobs with the submit scope, any job as admin; others' are not there for it.
  {
    std::unique_lock lock(mu_);
    const auto it = live_.find(id);
    const bool own = it != live_.end() && it->second->stored.client == client.name;
    if (it != live_.end() && !(client.has(Scope::kAdmin) || (own && client.has(Scope::kSubmit)))) {
      if (client.may_read(it->second->stored.client)) {
        throw ApiError(403, "forbidden",
                       fmt::format("client '{}' may not cancel this job (its scopes: {})",
                                   client.name, ClientRegistry::scope_names(client.scopes)));
      }
      throw ApiError(404, "not_found", fmt::format("no job with id '{}'", id));
    }
    if (it != live_.end()) {
      auto& live = *it->second;
      live.cancel_requested = true;
      if (live.stored.status == "queued") {
        // It never runs: the worker that pops it skips it.
        live.stored.status = "cancelled";
        const auto now = clock_now();
        live.stored.finished_at = now.wall;
        live.stored.finished_boot = now.boot;
        live.answer = finished_answer(live, json(nullptr), "cancelled", json(nullptr));
        try {
          store_.finish(id, "cancelled", live.answer.dump(), now.wall, now.boot);
        } catch (const std::exception& e) {
          store_failed("finish", e);
        }
        metrics_.count("kgym_jobs_finished_total", "status=\"cancelled\",result=\"none\"");
        metrics_.count("kgym_client_jobs_finished_total",
                       client_label(live.stored.client) + ",status=\"cancelled\"");
        auto answer = live.answer;
        const bool dispatched = live.dispatched;
        const auto key = live.stored.cache_key;
        remove_live_locked(id);
        done_cv_.notify_all();
        if (dispatched) {
          // Published: the workers are told to skip it, and an identical request need not
          // wait for an answer that is no longer wanted.
          lock.unlock();
          cancel_in_pool(id);
          release_key(key);
        }
        return answer;
      }
      if (live.pgid > 0) ::kill(-live.pgid, SIGKILL);
      const bool dispatched = live.dispatched;
      // The wait below takes the lock, as does the job's end. A pool's worker running it kills
      // it and answers `cancelled`; a running job ends within moments of the kill.
      lock.unlock();
      if (dispatched) cancel_in_pool(id);
      return answer_by_id(id, 30.0);
    }
  }
  // Not live: finished, or not there. The same rights as for a live one, though there is
  // nothing left to cancel (the answer is the job as it ended).
  const StoredJob stored = stored_for(client, id);
  if (!client.has(Scope::kAdmin) && !(stored.client == client.name && client.has(Scope::kSubmit))) {
    throw ApiError(403, "forbidden",
                   fmt::format("client '{}' may not cancel this job (its scopes: {})", client.name,
                               ClientRegistry::scope_names(client.scopes)));
  }
  return answer_by_id(id, 0.0);
}

json JobService::answer_of(const Live& live) const {
  if (!live.answer.is_null()) return live.answer;
  const auto& s = live.stored;
  return {{"id", s.id},
          {"status", s.status},
          {"task_id", s.task_id},
          {"priority", s.priority},
          {"cached", s.cached},
          {"attempts", s.attempts},
          {"created_at", s.created_at},
          {"started_at", s.started_at > 0 ? json(s.started_at) : json(nullptr)},
          {"finished_at", nullptr}};
}

json JobService::finished_answer(const Live& live, const json& result, const std::string& status,
                                 const json& error) const {
  // answer_of reads only the stored part; a copy with a default request keeps it from using
  // the live answer. (Built step by step: GCC 12 misreads the aggregate form as uninitialised.)
  Live view;
  view.stored = live.stored;
  view.answer = json(nullptr);
  json answer = answer_of(view);
  answer["status"] = status;
  answer["finished_at"] = live.stored.finished_at > 0 ? live.stored.finished_at : now_seconds();
  answer["result"] = result;
  answer["reward"] = nullptr;
  answer["reward_detail"] = nullptr;
  answer["feedback"] = result.is_object() ? json(result::render_feedback(result)) : json(nullptr);
  answer["request"] = live.request.normalized;
  if (!error.is_null()) answer["error"] = error;
  if (result.is_object() && !live.request.reward_spec.is_null()) {
    const auto spec = reward::parse_reward_spec(live.request.reward_spec);
    reward::RewardBreakdown r;
    try {
      r = reward::compute_reward(spec, result);
    } catch (const reward::InputError& e) {
      // A result the reward cannot read, or a spec that says "error" for a missing speedup,
      // is answered without a reward: throwing here would end the worker thread.
      r.valid = false;
      r.reason = e.what();
    }
    json terms = json::object();
    for (const auto& [k, v] : r.terms) terms[k] = v;
    json metrics = json::object();
    for (const auto& [k, v] : r.metrics) metrics[k] = v;
    answer["reward"] = r.valid ? json(r.total) : json(nullptr);
    answer["reward_detail"] = {{"kind", spec.kind()},
                               {"valid", r.valid},
                               {"reason", r.reason},
                               {"terms", terms},
                               {"metrics", metrics}};
  }
  return answer;
}

std::shared_ptr<JobService::Live> JobService::next_job() {
  std::unique_lock lock(mu_);
  const auto running_of = [this](const std::string& client) {
    const auto it = running_by_client_.find(client);
    return it == running_by_client_.end() ? std::size_t{0} : it->second;
  };
  const auto queued = [this](const std::string& id) {
    const auto it = live_.find(id);
    return it != live_.end() && !it->second->cancel_requested;
  };
  for (;;) {
    queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    const auto entry = queue_.pop(running_of, queued);
    if (!entry) continue;
    auto live = live_.at(entry->id);
    const auto& key = live->stored.cache_key;
    if (config_.cache && !key.empty()) {
      if (running_keys_.contains(key)) {
        waiting_on_key_[key].push_back(live);  // an identical request is running
        continue;
      }
      running_keys_.insert(key);
    }
    return live;
  }
}

void JobService::worker_loop(std::size_t index) {
  check::Launcher launcher;
  if (config_.workers[index].make_launcher) launcher = config_.workers[index].make_launcher();
  for (;;) {
    auto live = next_job();
    if (!live) return;
    double waited;
    {
      std::lock_guard lock(mu_);
      live->stored.status = "running";
      const auto now = clock_now();
      live->stored.started_at = now.wall;
      waited = live->accepted_boot >= 0 ? now.boot - live->accepted_boot
                                        : std::max(0.0, now.wall - live->stored.created_at);
      ++live->stored.attempts;
      count_running_locked(*live, true);
    }
    metrics_.observe("kgym_queue_wait_seconds", "", waited);
    metrics_.observe("kgym_client_queue_wait_seconds", client_label(live->stored.client), waited);
    try {
      store_.mark_running(live->stored.id, live->stored.started_at);
    } catch (const std::exception& e) {
      // The store is the record, not the scheduler: an evaluation still runs and is answered.
      store_failed("mark_running", e);
    }
    if (!answer_from_cache(live)) run_one(index, live, launcher);
    release_key(live->stored.cache_key);
  }
}

bool JobService::answer_from_cache(const std::shared_ptr<Live>& live) {
  if (!config_.cache || live->stored.cache_key.empty() || live->stored.attempts > 1) return false;
  std::optional<std::string> hit;
  try {
    hit = store_.cached_result(live->stored.cache_key);
  } catch (const std::exception& e) {
    store_failed("cached_result", e);
    return false;
  }
  if (!hit) return false;
  const json result = json::parse(*hit, nullptr, false);
  if (result.is_discarded()) return false;
  metrics_.count("kgym_cache_hits_total");
  live->stored.cached = true;
  finish_running(live, "done", result, json(nullptr));
  return true;
}

void JobService::release_key(const std::string& key) {
  if (key.empty()) return;
  std::lock_guard lock(mu_);
  running_keys_.erase(key);
  const auto waiting = waiting_on_key_.find(key);
  if (waiting == waiting_on_key_.end()) return;
  // Back in the queue: they are answered from the cache, or the first of them runs.
  for (const auto& l : waiting->second) enqueue_locked(l);
  waiting_on_key_.erase(waiting);
}

void JobService::check_reference_drift(const std::string& where, const Live& live,
                                       const result::Result& read, json& result) {
  const auto& timing = read.timing;
  if (!timing || !timing->available || !timing->reference) return;
  const double measured = timing->reference->median_ms;
  const auto samples = static_cast<int>(timing->reference->samples);
  if (!(measured > 0)) return;
  const auto key = reference_key(config_.environment, where, live.request.job.task_source,
                                 live.request.normalized.value("options", json::object()));
  try {
    if (auto stored = store_.reference_timing(key)) {
      auto check = reference_check(*stored, measured, config_.reference_drift_tolerance);
      metrics_.count(
          "kgym_reference_checks_total",
          fmt::format("drifted=\"{}\"", check["drifted"].get<bool>() ? "true" : "false"));
      result["timing"]["reference_check"] = std::move(check);
    }
    store_.put_reference_timing(key, {measured, samples, now_seconds()});
  } catch (const std::exception& e) {
    store_failed("reference_timing", e);
    // The check is advice; a store that cannot be read or written leaves the result as it is.
  }
}

void JobService::run_one(std::size_t index, const std::shared_ptr<Live>& live,
                         const check::Launcher& launcher) {
  const auto& slot = config_.workers[index];
  // Answered at the harness' report; the slot is busy until the child's teardown and the job's
  // clean-up are over (this call's return).
  const std::function<void(const EvalOutcome&)> answer = [this, live,
                                                          &slot](const EvalOutcome& early) {
    complete(live, slot.label, early);
    std::lock_guard lock(mu_);
    if (live->pgid > 0) ending_.insert(live->pgid);  // a shutdown still ends it (stop)
    if (stopping_ && live->pgid > 0) ::kill(-live->pgid, SIGKILL);
  };
  auto outcome = evaluate_on_slot(
      slot, live->request.job, live->prepared, launcher,
      [this, live](int pgid) {
        std::lock_guard lock(mu_);
        live->pgid = pgid;
        if (live->cancel_requested || stopping_) ::kill(-pgid, SIGKILL);
      },
      answer);
  if (outcome.answered) {
    std::lock_guard lock(mu_);
    ending_.erase(live->pgid);
    // The Result stands; what failed is the job's teardown (a stop's kill is not a failure).
    if (!outcome.ended_after_answer.empty() && !stopping_) {
      std::cerr << fmt::format(
          "kgym-gym: {}: job {} was answered at the judge's report; then its harness {}\n",
          slot.label, live->stored.id, outcome.ended_after_answer);
    }
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !live->cancel_requested) {
      // Killed by the shutdown: left `running` in the store, so that the next start re-runs it.
      count_running_locked(*live, false);
      return;
    }
  }
  complete(live, slot.label, std::move(outcome));
}

void JobService::complete(const std::shared_ptr<Live>& live, const std::string& where,
                          EvalOutcome outcome) {
  auto& status = outcome.status;
  auto& result = outcome.result;
  auto& error = outcome.error;
  if (config_.require_sandbox && status == "done") {
    if (const auto gaps = check::sandbox_gaps(result); !gaps.empty()) {
      status = "failed";
      error = error_json("sandbox", fmt::format("the job did not get every sandbox layer "
                                                "(--require-sandbox): {}",
                                                fmt::join(gaps, "; ")));
      result = nullptr;
    }
  }
  {
    std::lock_guard lock(mu_);
    if (live->cancel_requested) status = "cancelled";
  }
  // The service keeps serving whatever came back: a damaged result is read as far as it can be.
  const auto read = result::read_result_leniently(result);
  // Only the evaluation's own phases are labels (the supervisor takes no other name from the
  // report channel; "total" is its own sum).
  const auto& phases = check::evaluation_phases();
  for (const auto& [phase, ms] : read.durations_ms) {
    if (phase == "total" || std::find(phases.begin(), phases.end(), phase) != phases.end()) {
      metrics_.observe("kgym_phase_seconds", Metrics::label("phase", phase), ms / 1e3);
    }
  }
  if (status == "done" && result.is_object()) check_reference_drift(where, *live, read, result);
  const bool retried = result.is_object() && result.contains("infra_retry");
  if (retried) metrics_.count("kgym_infra_retries_total");
  const bool controlled = retried && result["infra_retry"].contains("control");
  const bool charged = controlled && result["infra_retry"].value("charged", false);
  if (controlled) {
    metrics_.count("kgym_infra_controls_total",
                   Metrics::label("charged", charged ? "true" : "false"));
  }
  // A failure charged to the candidate is not cached: the control vouches for one moment of one
  // machine, and a later submission of the same text is evaluated afresh.
  if (status == "done" && config_.cache && cacheable(read) && !charged &&
      !live->stored.cache_key.empty()) {
    try {
      // The verdict is cached, not this job's history: a later request answered from the cache
      // did not meet the first run's error.
      json verdict = result;
      if (retried) verdict.erase("infra_retry");
      store_.put_cached_result(live->stored.cache_key, verdict.dump(), now_seconds());
    } catch (const std::exception& e) {
      store_failed("put_cached_result", e);
      // A cache that cannot be written costs speed, not correctness.
    }
  }
  metrics_.count("kgym_jobs_finished_total",
                 fmt::format("status=\"{}\",result=\"{}\"", status,
                             result.is_object() ? read.status : std::string("none")));
  metrics_.count("kgym_client_jobs_finished_total",
                 client_label(live->stored.client) + "," + Metrics::label("status", status));
  finish_running(live, status, result, error);
}

void JobService::finish_running(const std::shared_ptr<Live>& live, const std::string& status,
                                const json& result, const json& error) {
  std::unique_lock lock(mu_);
  live->stored.status = status;
  const auto now = clock_now();
  live->stored.finished_at = now.wall;
  live->stored.finished_boot = now.boot;
  live->answer = finished_answer(*live, result, status, error);
  try {
    store_.finish(live->stored.id, status, live->answer.dump(), now.wall, now.boot);
  } catch (const std::exception& e) {
    // Answered to waiters all the same; the store is the record, not the answer.
    store_failed("finish", e);
  }
  remove_live_locked(live->stored.id);
  count_running_locked(*live, false);
  done_cv_.notify_all();
}

json JobService::tasks() const {
  json list = json::array();
  for (const auto& [id, t] : suite_.tasks()) {
    list.push_back({{"id", id}, {"source_sha256", t.sha256}});
  }
  return {{"tasks", list}};
}

json JobService::problems() const {
  json problems = json::array();
  if (!config_.state_dir.empty()) {
    struct statvfs fs {};
    if (::statvfs(config_.state_dir.c_str(), &fs) == 0) {
      const auto free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
      if (free_bytes < config_.min_free_disk_bytes) {
        problems.push_back(fmt::format(
            "disk: {:.1f} MiB free where the database lives ({}), under the {:.0f} MiB it needs",
            static_cast<double>(free_bytes) / (1 << 20), config_.state_dir,
            static_cast<double>(config_.min_free_disk_bytes) / (1 << 20)));
      }
    }
  }
  const auto now = clock_now();
  bool probe_due;
  {
    std::lock_guard lock(health_mu_);
    probe_due = probed_at_ < 0 || now.boot - probed_at_ >= kProbeEvery;
    if (probe_due) probed_at_ = now.boot;
  }
  if (probe_due) {
    // A write, since reads keep working on a full disk; at most every kProbeEvery seconds.
    std::string failure;
    try {
      store_.probe_write(now.wall);
    } catch (const std::exception& e) {
      failure = e.what();
      const_cast<JobService*>(this)->store_failed("probe_write", e);
    }
    std::lock_guard lock(health_mu_);
    probe_failure_ = failure;
    if (failure.empty()) probe_ok_at_ = now.boot;
  }
  std::lock_guard lock(health_mu_);
  if (!probe_failure_.empty()) {
    problems.push_back(fmt::format("database: cannot be written ({})", probe_failure_));
  } else if (store_failed_at_ > probe_ok_at_ && now.boot - store_failed_at_ < kStoreFailureMemory) {
    // A failure no write has succeeded since (a probe that succeeds clears it).
    problems.push_back(fmt::format("database: an operation failed {:.0f} s ago ({})",
                                   now.boot - store_failed_at_, store_failure_));
  }
  return problems;
}

json JobService::health() const {
  if (config_.pool) return pool_health();
  const json found = problems();
  std::lock_guard lock(mu_);
  json devices = json::array();
  json keepers = json::object();
  for (const auto& w : config_.workers) {
    devices.push_back(w.label);
    if (w.gpu_keeper) keepers[w.gpu_keeper->label()] = w.gpu_keeper->state();
  }
  json health = {{"status", stopping_       ? "stopping"
                            : found.empty() ? "ok"
                                            : "degraded"},
                 {"problems", found},
                 {"workers", config_.workers.size()},
                 {"queue_depth", queue_.size()},
                 {"running", running_},
                 {"ending", ending_.size()},
                 {"devices", devices},
                 {"retention", last_retention_}};
  if (!keepers.empty()) health["gpu_keepers"] = keepers;
  return health;
}

std::string JobService::metrics_text() const {
  auto& m = const_cast<Metrics&>(metrics_);
  {
    std::lock_guard lock(mu_);
    m.set_gauge("kgym_queue_depth", "", static_cast<double>(live_.size() - running_));
    m.set_gauge("kgym_jobs_running", "", static_cast<double>(running_));
    m.set_gauge("kgym_jobs_ending", "", static_cast<double>(ending_.size()));
    std::set<std::string> clients(config_.client_names.begin(), config_.client_names.end());
    for (const auto& [client, _] : in_flight_by_client_) clients.insert(client);
    for (const auto& client : clients) {
      const auto in_flight = in_flight_by_client_.find(client);
      const auto running = running_by_client_.find(client);
      m.set_gauge(
          "kgym_client_jobs_in_flight", client_label(client),
          in_flight == in_flight_by_client_.end() ? 0.0 : static_cast<double>(in_flight->second));
      m.set_gauge("kgym_client_jobs_running", client_label(client),
                  running == running_by_client_.end() ? 0.0 : static_cast<double>(running->second));
    }
  }
  try {
    for (const auto& [status, n] : store_.counts_by_status()) {
      m.set_gauge("kgym_jobs", fmt::format("status=\"{}\"", status), static_cast<double>(n));
    }
  } catch (const std::exception& e) {
    const_cast<JobService*>(this)->store_failed("counts_by_status", e);
  }
  for (const auto& w : config_.workers) {
    if (w.restarts) {
      m.set_gauge("kgym_worker_restarts_total", fmt::format("worker=\"{}\"", w.label),
                  static_cast<double>(w.restarts()));
    }
  }
  return metrics_.render(kHelp);
}

json JobService::retain(bool force) {
  const auto now = clock_now();
  json report = {{"at", now.wall}, {"forced", force}};
  try {
    const auto pass = store_.prune(config_.retention, now.wall, now.boot, force);
    report["finished_before"] = pass.finished;
    report["deleted_by_count"] = pass.by_count;
    report["deleted_by_age"] = pass.by_age;
    report["older_than_retention"] = pass.aged;
    report["refused"] = pass.refused;
    if (pass.by_count > 0) {
      metrics_.count("kgym_retention_deleted_total", "rule=\"count\"", pass.by_count);
    }
    if (pass.by_age > 0)
      metrics_.count("kgym_retention_deleted_total", "rule=\"age\"", pass.by_age);
    if (pass.refused) {
      metrics_.count("kgym_retention_refused_total");
      report["reason"] = fmt::format(
          "{} of the {} finished jobs are older than {:.2f} days by their stamps: more than "
          "{:.0f}% at once, which a clock that jumped would also give; nothing was deleted for "
          "its age (POST /v1/admin/retention?force=true deletes them)",
          pass.aged, pass.finished, config_.retention.max_age_s / 86400.0,
          config_.retention.max_age_share * 100);
      std::cerr << "kgym-gym: retention refused: " << report["reason"].get<std::string>() << "\n";
    }
    if (pass.by_count + pass.by_age > 0) {
      std::cerr << fmt::format(
          "kgym-gym: retention deleted {} finished jobs ({} beyond the count, {} for their "
          "age)\n",
          pass.by_count + pass.by_age, pass.by_count, pass.by_age);
    }
  } catch (const std::exception& e) {
    store_failed("prune", e);
    report["error"] = e.what();
    std::cerr << "kgym-gym: retention: " << e.what() << "\n";
  }
  std::lock_guard lock(mu_);
  last_retention_ = report;
  return report;
}

void JobService::retention_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    retain(false);
    lock.lock();
    retention_cv_.wait_for(lock, std::chrono::duration<double>(config_.retention_interval_s),
                           [this] { return stopping_; });
  }
}

}  // namespace kgym::service
