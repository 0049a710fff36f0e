#include "kgym/service/job_store.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <new>
#include <random>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "kgym/service/clock.hpp"

namespace kgym::service {
namespace {

[[noreturn]] void fail(sqlite3* db, std::string_view op) {
  std::string message = "JobStore::";
  message.append(op);
  message += ": ";
  message += sqlite3_errmsg(db);
  throw std::runtime_error(message);
}

struct DbCloser {
  // close_v2 rather than close: it cannot fail with SQLITE_BUSY on a statement still open, it
  // defers the close until the last statement is finalized instead.
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;

// One prepared statement, compiled once and reused for every call: the SQL is parsed once and no
// value ever reaches it other than as a bound parameter.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql) : db_(db) {
    // PERSISTENT: these live as long as the store, so SQLite should not take them from its
    // short-lived lookaside memory.
    if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt_, nullptr) != SQLITE_OK) {
      fail(db, std::string("prepare '").append(sql).append("'"));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  sqlite3* db() const { return db_; }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// One use of a Statement: binds, steps and, on every way out (exceptions included), resets it and
// clears its bindings so the next caller starts clean and no read transaction is left open.
class Use {
 public:
  Use(Statement& statement, std::string_view op)
      : db_(statement.db()), stmt_(statement.get()), op_(op) {}
  ~Use() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

  Use& text(int index, const std::string& value) {
    // TRANSIENT: SQLite copies the value, so its lifetime is not tied to the caller's string.
    check(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                              SQLITE_UTF8));
    return *this;
  }
  Use& real(int index, double value) {
    check(sqlite3_bind_double(stmt_, index, value));
    return *this;
  }
  Use& integer(int index, std::int64_t value) {
    check(sqlite3_bind_int64(stmt_, index, value));
    return *this;
  }

  // True while there is a row to read, false once the statement is done.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, op_);
  }
  void run() {
    while (step()) {
    }
  }

  std::string column_text(int index) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
    if (data == nullptr) {
      // NULL is a value; a null pointer for anything else means SQLite ran out of memory.
      if (sqlite3_column_type(stmt_, index) != SQLITE_NULL) throw std::bad_alloc();
      return {};
    }
    return std::string(data, static_cast<size_t>(sqlite3_column_bytes(stmt_, index)));
  }
  double column_real(int index) const { return sqlite3_column_double(stmt_, index); }
  std::int64_t column_integer(int index) const { return sqlite3_column_int64(stmt_, index); }
  int column_int(int index) const { return sqlite3_column_int(stmt_, index); }

 private:
  void check(int rc) const {
    if (rc != SQLITE_OK) fail(db_, op_);
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string_view op_;
};

void exec(sqlite3* db, const char* sql, std::string_view op) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, op);
}

int user_version(sqlite3* db) {
  Statement statement(db, "PRAGMA user_version");
  Use use(statement, "read schema version");
  if (!use.step()) fail(db, "read schema version");
  return use.column_int(0);
}

// Version 1 (later versions: kMigrations). AUTOINCREMENT so that a seq is never handed out
// twice, even after prune() deleted the newest rows: arrival order stays unique over the file's
// whole life. The CHECK keeps a misspelt status out of the file, where recovery and counts would
// silently miss it.
constexpr const char* kSchema = R"sql(
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'cancelled', 'failed')),
  priority INTEGER NOT NULL DEFAULT 0,
  task_id TEXT NOT NULL DEFAULT '',
  request_json TEXT NOT NULL DEFAULT '',
  cache_key TEXT NOT NULL DEFAULT '',
  result_json TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  cached INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL DEFAULT 0,
  started_at REAL NOT NULL DEFAULT 0,
  finished_at REAL NOT NULL DEFAULT 0
);
-- Serves counts_by_status (covering), recovery (few unfinished rows) and prune.
CREATE INDEX jobs_by_status ON jobs (status, finished_at);
CREATE TABLE result_cache (
  key TEXT PRIMARY KEY,
  result_json TEXT NOT NULL,
  created_at REAL NOT NULL
);
CREATE TABLE reference_timings (
  key TEXT PRIMARY KEY,
  median_ms REAL NOT NULL,
  samples INTEGER NOT NULL,
  measured_at REAL NOT NULL
);
)sql";

// Each entry takes a file from version i + 1 to i + 2.
constexpr const char* kMigrations[] = {
    // 2: the client that submitted a job, and the boot clock when it finished (retention ages).
    R"sql(
ALTER TABLE jobs ADD COLUMN client TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN finished_boot REAL NOT NULL DEFAULT -1;
)sql",
};
static_assert(std::size(kMigrations) == JobStore::kSchemaVersion - 1);

[[noreturn]] void refuse_newer(const std::string& path, int version) {
  throw std::runtime_error("JobStore: '" + path + "' has schema version " +
                           std::to_string(version) + ", newer than the version " +
                           std::to_string(JobStore::kSchemaVersion) +
                           " this build understands; refusing to open it");
}

// 32 hex digits from the OS's entropy.
std::string random_store_id() {
  std::random_device entropy;
  std::string id;
  for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", entropy());
  return id;
}

// A damaged file is refused at start with what SQLite found, rather than served from.
void check_integrity(sqlite3* db, const std::string& path) {
  Statement statement(db, "PRAGMA quick_check");
  Use use(statement, "integrity check");
  std::string found;
  while (use.step()) {
    const auto line = use.column_text(0);
    if (line != "ok") found += (found.empty() ? "" : "; ") + line;
  }
  if (!found.empty()) {
    throw std::runtime_error("JobStore: '" + path + "' is damaged (" + found.substr(0, 500) +
                             "); restore it from a backup (docs/service-api.md, \"Storage\")");
  }
}

std::string store_id(sqlite3* db) {
  Statement statement(db, "SELECT value FROM store_meta WHERE key = 'store_id'");
  Use use(statement, "read store id");
  return use.step() ? use.column_text(0) : std::string();
}

// The marker file beside the database names the store it belongs to. A database that was
// emptied (truncated to 0 bytes) or swapped while the service was stopped has another identity:
// starting would silently lose every job, so it is refused with what to do.
void check_marker(sqlite3* db, const std::string& path) {
  if (path == ":memory:" || path.empty() || path.starts_with("file:")) return;
  const std::string marker = path + ".id";
  const std::string id = store_id(db);
  std::ifstream in(marker);
  std::string expected;
  if (in && std::getline(in, expected) && !expected.empty()) {
    if (expected != id) {
      throw std::runtime_error(
          "JobStore: '" + path + "' is not the database this service used before: '" + marker +
          "' names store " + expected + ", the file holds store " + id +
          " (it was emptied or replaced while the service was stopped). Restore the database "
          "from a backup (kgym-gym backup), or remove '" +
          marker + "' to start with this file.");
    }
    return;
  }
  std::ofstream out(marker, std::ios::trunc);
  out << id << "\n";
  if (!out) throw std::runtime_error("JobStore: cannot write the marker '" + marker + "'");
}

// Boot-clock stamps compare only within one boot: a file last used during another has them
// cleared (its jobs' ages come from their wall-clock stamps, with retention's share bound).
void adopt_boot(sqlite3* db, const std::string& boot_id) {
  std::string stored;
  {
    Statement statement(db, "SELECT value FROM store_meta WHERE key = 'boot_id'");
    Use use(statement, "read boot id");
    if (use.step()) stored = use.column_text(0);
  }
  if (stored == boot_id && !boot_id.empty()) return;
  exec(db, "UPDATE jobs SET finished_boot = -1 WHERE finished_boot >= 0", "clear boot stamps");
  Statement statement(db,
                      "INSERT INTO store_meta (key, value) VALUES ('boot_id', ?1) "
                      "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  Use use(statement, "record boot id");
  use.text(1, boot_id);
  use.run();
}

DbHandle open_database(const std::string& path, const std::string& boot_id) {
  sqlite3* raw = nullptr;
  // NOMUTEX: the store serialises every use of the connection with its own mutex.
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  DbHandle db(raw);  // open_v2 may hand back a handle even when it fails; it must be closed
  if (rc != SQLITE_OK) {
    std::string message = "JobStore: cannot open '" + path + "': ";
    message += db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(rc);
    // "unable to open database file" alone does not say why; the OS error usually does.
    if (const int os_error = db ? sqlite3_system_errno(db.get()) : 0; os_error != 0) {
      message += " (";
      message += std::strerror(os_error);
      message += ")";
    }
    throw std::runtime_error(message);
  }
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), 5000);

  // Wrap every error from here on with the path: "file is not a database" alone is no help.
  try {
    // Check before changing anything (even the journal mode) in a file a newer build owns.
    if (const int version = user_version(db.get()); version > JobStore::kSchemaVersion) {
      refuse_newer(path, version);
    }
    // WAL: readers never wait for the writer and a commit is one append; NORMAL synchronous is
    // durable across a process crash (what recovery needs), only an OS crash may lose the last
    // commits. Both are no-ops for ":memory:".
    exec(db.get(), "PRAGMA journal_mode = WAL", "set journal mode");
    exec(db.get(), "PRAGMA synchronous = NORMAL", "set synchronous");

    // IMMEDIATE and a second read: another process may be creating the schema at the same time.
    exec(db.get(), "BEGIN IMMEDIATE", "begin schema transaction");
    try {
      const int version = user_version(db.get());
      if (version > JobStore::kSchemaVersion) refuse_newer(path, version);
      if (version == 0) exec(db.get(), kSchema, "create schema");
      for (int v = std::max(version, 1); v < JobStore::kSchemaVersion; ++v) {
        exec(db.get(), kMigrations[v - 1], "migrate schema");
      }
      if (version < JobStore::kSchemaVersion) {
        const std::string set_version =
            "PRAGMA user_version = " + std::to_string(JobStore::kSchemaVersion);
        exec(db.get(), set_version.c_str(), "record schema version");
      }
      // The store's identity, made once with the file (older files get one now): a file that
      // was replaced or emptied has another, which the marker beside it exposes.
      exec(db.get(),
           "CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
           "create store_meta");
      // Idempotency-Key -> the job it created, with the request's hash (a reused key with
      // another request is a conflict).
      exec(db.get(),
           "CREATE TABLE IF NOT EXISTS idempotency_keys (key TEXT PRIMARY KEY, job_id TEXT NOT "
           "NULL, request_sha256 TEXT NOT NULL, created_at REAL NOT NULL)",
           "create idempotency_keys");
      const std::string insert_id =
          "INSERT OR IGNORE INTO store_meta (key, value) VALUES "
          "('store_id', '" +
          random_store_id() + "')";
      exec(db.get(), insert_id.c_str(), "record store id");
      adopt_boot(db.get(), boot_id);
      exec(db.get(), "COMMIT", "commit schema");
    } catch (...) {
      sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  } catch (const std::runtime_error& error) {
    const std::string what = error.what();
    if (what.rfind("JobStore: '", 0) == 0) throw;  // already names the file
    throw std::runtime_error("JobStore: cannot use '" + path + "': " + what);
  }
  check_integrity(db.get(), path);
  check_marker(db.get(), path);
  return db;
}

constexpr std::string_view kJobColumns =
    "seq, id, status, priority, task_id, request_json, cache_key, result_json, attempts, cached, "
    "created_at, started_at, finished_at, finished_boot, client";

std::string select_jobs(std::string_view where_and_order) {
  std::string sql = "SELECT ";
  sql.append(kJobColumns).append(" FROM jobs ").append(where_and_order);
  return sql;
}

StoredJob read_job(const Use& use) {
  StoredJob job;
  job.seq = static_cast<std::uint64_t>(use.column_integer(0));
  job.id = use.column_text(1);
  job.status = use.column_text(2);
  job.priority = use.column_int(3);
  job.task_id = use.column_text(4);
  job.request_json = use.column_text(5);
  job.cache_key = use.column_text(6);
  job.result_json = use.column_text(7);
  job.attempts = use.column_int(8);
  job.cached = use.column_integer(9) != 0;
  job.created_at = use.column_real(10);
  job.started_at = use.column_real(11);
  job.finished_at = use.column_real(12);
  job.finished_boot = use.column_real(13);
  job.client = use.column_text(14);
  return job;
}

bool is_final_status(std::string_view status) {
  return status == "done" || status == "cancelled" || status == "failed";
}

}  // namespace

struct JobStore::Impl {
  Impl(const std::string& path, const std::string& boot_id)
      : db(open_database(path, boot_id)),
        begin(db.get(), "BEGIN IMMEDIATE"),
        commit(db.get(), "COMMIT"),
        rollback(db.get(), "ROLLBACK"),
        insert(db.get(),
               "INSERT INTO jobs (id, status, priority, task_id, request_json, cache_key, "
               "result_json, attempts, cached, created_at, started_at, finished_at, "
               "finished_boot, client) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"),
        mark_running(db.get(),
                     "UPDATE jobs SET status = 'running', started_at = ?2, attempts = attempts + 1 "
                     "WHERE id = ?1"),
        finish(db.get(),
               "UPDATE jobs SET status = ?2, result_json = ?3, finished_at = ?4, "
               "finished_boot = ?5, request_json = '' WHERE id = ?1"),
        get(db.get(), select_jobs("WHERE id = ?1")),
        requeue_running(db.get(),
                        "UPDATE jobs SET status = 'queued', started_at = 0 "
                        "WHERE status = 'running'"),
        select_queued(db.get(),
                      select_jobs("WHERE status = 'queued' ORDER BY priority DESC, seq ASC")),
        cache_get(db.get(), "SELECT result_json FROM result_cache WHERE key = ?1"),
        cache_put(db.get(),
                  "INSERT INTO result_cache (key, result_json, created_at) VALUES (?1, ?2, ?3) "
                  "ON CONFLICT (key) DO UPDATE SET result_json = excluded.result_json, "
                  "created_at = excluded.created_at"),
        timing_get(db.get(),
                   "SELECT median_ms, samples, measured_at FROM reference_timings WHERE key = ?1"),
        timing_put(db.get(),
                   "INSERT INTO reference_timings (key, median_ms, samples, measured_at) "
                   "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (key) DO UPDATE SET "
                   "median_ms = excluded.median_ms, samples = excluded.samples, "
                   "measured_at = excluded.measured_at"),
        counts(db.get(), "SELECT status, COUNT(*) FROM jobs GROUP BY status"),
        count_finished(db.get(),
                       "SELECT COUNT(*) FROM jobs WHERE status IN ('done', 'cancelled', 'failed')"),
        count_aged(db.get(), std::string("SELECT COUNT(*) FROM jobs WHERE ") + kAged),
        prune_aged(db.get(), std::string("DELETE FROM jobs WHERE ") + kAged),
        key_get(db.get(), "SELECT job_id, request_sha256 FROM idempotency_keys WHERE key = ?1"),
        key_put(db.get(),
                "INSERT INTO idempotency_keys (key, job_id, request_sha256, created_at) "
                "VALUES (?1, ?2, ?3, ?4)"),
        key_prune(db.get(),
                  "DELETE FROM idempotency_keys WHERE job_id NOT IN (SELECT id FROM jobs)"),
        prune_beyond(db.get(),
                     "DELETE FROM jobs WHERE status IN ('done', 'cancelled', 'failed') AND seq "
                     "NOT IN (SELECT seq FROM jobs WHERE status IN ('done', 'cancelled', "
                     "'failed') ORDER BY seq DESC LIMIT ?1)"),
        probe(db.get(),
              "INSERT INTO store_meta (key, value) VALUES ('health_probe', ?1) "
              "ON CONFLICT (key) DO UPDATE SET value = excluded.value") {}

  // Finished jobs older than ?3 seconds: by the boot clock (?2 now) when they finished during
  // this boot, else by the wall clock (?1 now). A stamp ahead of now is never old.
  static constexpr const char* kAged =
      "status IN ('done', 'cancelled', 'failed') AND CASE WHEN finished_boot >= 0 "
      "THEN finished_boot < ?2 - ?3 ELSE finished_at < ?1 - ?3 END";

  // Runs `body` inside one write transaction: committed if it returns, rolled back if it throws.
  // Keys whose job was pruned go with it.
  void drop_orphan_keys() {
    Use use(key_prune, "prune idempotency keys");
    use.run();
  }

  template <typename Body>
  void transaction(std::string_view op, Body&& body) {
    {
      Use use(begin, op);
      use.run();
    }
    try {
      std::forward<Body>(body)();
      Use use(commit, op);
      use.run();
    } catch (...) {
      // A failed COMMIT (e.g. still busy after the timeout) leaves the transaction open too.
      if (!sqlite3_get_autocommit(db.get())) {
        Use use(rollback, op);
        try {
          use.run();
        } catch (...) {  // the original error is the one worth reporting
        }
      }
      throw;
    }
  }

  std::uint64_t insert_one(const StoredJob& job) {
    Use use(insert, "insert");
    use.text(1, job.id)
        .text(2, job.status)
        .integer(3, job.priority)
        .text(4, job.task_id)
        .text(5, is_final_status(job.status) ? std::string() : job.request_json)
        .text(6, job.cache_key)
        .text(7, job.result_json)
        .integer(8, job.attempts)
        .integer(9, job.cached ? 1 : 0)
        .real(10, job.created_at)
        .real(11, job.started_at)
        .real(12, job.finished_at)
        .real(13, is_final_status(job.status) ? job.finished_boot : -1.0)
        .text(14, job.client);
    use.run();
    return static_cast<std::uint64_t>(sqlite3_last_insert_rowid(db.get()));
  }

  void require_one_change(std::string_view op, const std::string& id) {
    if (sqlite3_changes64(db.get()) == 0) {
      throw std::runtime_error("JobStore::" + std::string(op) + ": no job with id '" + id + "'");
    }
  }

  std::mutex mutex;
  DbHandle db;  // declared before the statements, so it is closed after they are finalized
  Statement begin, commit, rollback;
  Statement insert, mark_running, finish, get, requeue_running, select_queued;
  Statement cache_get, cache_put, timing_get, timing_put, counts, count_finished, count_aged,
      prune_aged, key_get, key_put, key_prune, prune_beyond, probe;
};

JobStore::JobStore(const std::string& path, const std::string& boot_id)
    : impl_(std::make_unique<Impl>(path, boot_id.empty() ? current_boot_id() : boot_id)) {}

JobStore::~JobStore() = default;

void JobStore::insert(StoredJob& job) {
  std::lock_guard lock(impl_->mutex);
  job.seq = impl_->insert_one(job);
}

void JobStore::insert_many(std::vector<StoredJob>& jobs) {
  if (jobs.empty()) return;
  std::lock_guard lock(impl_->mutex);
  std::vector<std::uint64_t> seqs;
  seqs.reserve(jobs.size());
  impl_->transaction("insert_many", [&] {
    for (const auto& job : jobs) seqs.push_back(impl_->insert_one(job));
  });
  // Only now: a batch that rolled back must not leave seqs pointing at rows that do not exist.
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].seq = seqs[i];
}

void JobStore::mark_running(const std::string& id, double now) {
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->mark_running, "mark_running");
  use.text(1, id).real(2, now);
  use.run();
  impl_->require_one_change("mark_running", id);
}

void JobStore::finish(const std::string& id, const std::string& status,
                      const std::string& result_json, double now, double boot_now) {
  if (!is_final_status(status)) {
    throw std::invalid_argument("JobStore::finish: '" + status +
                                "' is not a final status (done, cancelled, failed)");
  }
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->finish, "finish");
  use.text(1, id).text(2, status).text(3, result_json).real(4, now).real(5, boot_now);
  use.run();
  impl_->require_one_change("finish", id);
}

std::optional<StoredJob> JobStore::get(const std::string& id) const {
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->get, "get");
  use.text(1, id);
  if (!use.step()) return std::nullopt;
  return read_job(use);
}

std::vector<StoredJob> JobStore::recover_unfinished() {
  std::lock_guard lock(impl_->mutex);
  std::vector<StoredJob> jobs;
  // One transaction: the requeue and the read see the same rows.
  impl_->transaction("recover_unfinished", [&] {
    {
      Use use(impl_->requeue_running, "recover_unfinished");
      use.run();
    }
    Use use(impl_->select_queued, "recover_unfinished");
    while (use.step()) jobs.push_back(read_job(use));
  });
  return jobs;
}

std::optional<std::string> JobStore::cached_result(const std::string& key) const {
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->cache_get, "cached_result");
  use.text(1, key);
  if (!use.step()) return std::nullopt;
  return use.column_text(0);
}

void JobStore::put_cached_result(const std::string& key, const std::string& result_json,
                                 double now) {
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->cache_put, "put_cached_result");
  use.text(1, key).text(2, result_json).real(3, now);
  use.run();
}

std::optional<JobStore::ReferenceTiming> JobStore::reference_timing(const std::string& key) const {
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->timing_get, "reference_timing");
  use.text(1, key);
  if (!use.step()) return std::nullopt;
  ReferenceTiming timing;
  timing.median_ms = use.column_real(0);
  timing.samples = use.column_int(1);
  timing.measured_at = use.column_real(2);
  return timing;
}

void JobStore::put_reference_timing(const std::string& key, const ReferenceTiming& t) {
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->timing_put, "put_reference_timing");
  use.text(1, key).real(2, t.median_ms).integer(3, t.samples).real(4, t.measured_at);
  use.run();
}

std::map<std::string, std::uint64_t> JobStore::counts_by_status() const {
  std::map<std::string, std::uint64_t> counts = {
      {"queued", 0}, {"running", 0}, {"done", 0}, {"cancelled", 0}, {"failed", 0}};
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->counts, "counts_by_status");
  while (use.step()) {
    counts[use.column_text(0)] = static_cast<std::uint64_t>(use.column_integer(1));
  }
  return counts;
}

RetentionPass JobStore::prune(const RetentionRule& rule, double wall_now, double boot_now,
                              bool force) {
  std::lock_guard lock(impl_->mutex);
  RetentionPass pass;
  auto count = [&](Statement& statement, const char* op, bool aged) {
    Use use(statement, op);
    if (aged) use.real(1, wall_now).real(2, boot_now).real(3, rule.max_age_s);
    return use.step() ? static_cast<std::uint64_t>(use.column_integer(0)) : 0;
  };
  impl_->transaction("prune", [&] {
    pass.finished = count(impl_->count_finished, "prune", false);
    {
      // By arrival order, which no clock changes.
      Use use(impl_->prune_beyond, "prune");
      use.integer(1, static_cast<std::int64_t>(std::min<std::uint64_t>(
                         rule.keep_jobs, std::numeric_limits<std::int64_t>::max())));
      use.run();
      pass.by_count = static_cast<std::uint64_t>(sqlite3_changes64(impl_->db.get()));
    }
    pass.aged = count(impl_->count_aged, "prune", true);
    const double share = pass.finished > 0
                             ? static_cast<double>(pass.aged) / static_cast<double>(pass.finished)
                             : 0.0;
    pass.refused =
        !force && pass.aged > RetentionRule::kAgeRefusalFloor && share > rule.max_age_share;
    if (!pass.refused && pass.aged > 0) {
      Use use(impl_->prune_aged, "prune");
      use.real(1, wall_now).real(2, boot_now).real(3, rule.max_age_s);
      use.run();
      pass.by_age = static_cast<std::uint64_t>(sqlite3_changes64(impl_->db.get()));
    }
    impl_->drop_orphan_keys();
  });
  return pass;
}

void JobStore::probe_write(double now) {
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->probe, "probe_write");
  use.text(1, fmt::format("{:.3f}", now));
  use.run();
}

std::optional<JobStore::KeyedJob> JobStore::job_for_key(const std::string& key) const {
  std::lock_guard lock(impl_->mutex);
  Use use(impl_->key_get, "job_for_key");
  use.text(1, key);
  if (!use.step()) return std::nullopt;
  return KeyedJob{use.column_text(0), use.column_text(1)};
}

void JobStore::insert_keyed(StoredJob& job, const std::string& key,
                            const std::string& request_sha256, double now) {
  std::lock_guard lock(impl_->mutex);
  std::uint64_t seq = 0;
  impl_->transaction("insert_keyed", [&] {
    seq = impl_->insert_one(job);
    Use use(impl_->key_put, "insert_keyed");
    use.text(1, key).text(2, job.id).text(3, request_sha256).real(4, now);
    use.run();
  });
  job.seq = seq;
}

void JobStore::backup_to(const std::string& out_path) const {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(out_path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  DbHandle out(raw);
  if (rc != SQLITE_OK) {
    throw std::runtime_error("JobStore: cannot create the backup '" + out_path +
                             "': " + (out ? sqlite3_errmsg(out.get()) : sqlite3_errstr(rc)));
  }
  std::lock_guard lock(impl_->mutex);
  sqlite3_backup* backup = sqlite3_backup_init(out.get(), "main", impl_->db.get(), "main");
  if (backup == nullptr) fail(out.get(), "start backup");
  const int step = sqlite3_backup_step(backup, -1);  // everything, in one consistent snapshot
  sqlite3_backup_finish(backup);
  if (step != SQLITE_DONE) fail(out.get(), "backup");
}

}  // namespace kgym::service
