// The service's persistence layer: jobs, the result cache and reference timings in one SQLite
// file, so that a restarted service can queue again what the last process left unfinished
// (docs/service-api.md, "Caching and persistence").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kgym::service {

struct StoredJob {
  std::string id;
  std::string status;  // queued | running | done | cancelled | failed
  int priority = 0;
  std::string task_id;
  std::string request_json;  // the request as accepted (normalised JSON text)
  std::string cache_key;     // hex sha256, may be empty
  std::string result_json;   // the full job answer once finished (empty before)
  int attempts = 0;          // how many times it was started
  bool cached = false;
  double created_at = 0, started_at = 0, finished_at = 0;  // unix seconds, 0 = not yet
  // The boot clock when it finished (clock.hpp), -1 when not known (not finished, or finished
  // during an earlier boot): the age retention goes by.
  double finished_boot = -1;
  std::string client;     // the client that submitted it ("" in single-token mode)
  std::uint64_t seq = 0;  // arrival order, assigned by insert(); never reused
};

// What retention keeps (JobStore::prune): the `keep_jobs` most recent finished jobs by arrival
// order, and of those the ones younger than `max_age_s`. A job's age comes from the boot clock
// when it finished during this boot, else from its wall-clock finished_at, and is never
// negative (a finished_at ahead of now is age 0). Deletions by age that would take more than
// `max_age_share` of the finished jobs at once (and more than kAgeRefusalFloor) are refused:
// on a clock that jumped forward across a reboot, every job would look old.
struct RetentionRule {
  double max_age_s = 7 * 86400.0;
  std::uint64_t keep_jobs = 100000;
  double max_age_share = 0.5;
  static constexpr std::uint64_t kAgeRefusalFloor = 10;
};

struct RetentionPass {
  std::uint64_t by_count = 0;  // deleted beyond keep_jobs
  std::uint64_t by_age = 0;    // deleted for their age (0 when refused)
  std::uint64_t aged = 0;      // finished jobs older than max_age_s (deleted, or refused)
  std::uint64_t finished = 0;  // finished jobs before the pass
  bool refused = false;        // the deletions by age were refused (too large a share)
};

// One connection guarded by a mutex: every method may be called from any thread. SQL failures
// throw std::runtime_error naming the operation and SQLite's message; a call that names a job
// the store does not hold (mark_running, finish) throws std::runtime_error too, and finish()
// with a status that is not a final one throws std::invalid_argument.
class JobStore {
 public:
  // The schema version this code writes (PRAGMA user_version); a file with a newer one is refused.
  static constexpr int kSchemaVersion = 2;

  // ":memory:" is allowed. Creates the schema if the file has none; WAL mode, synchronous=NORMAL,
  // busy_timeout 5000 ms. Refuses (std::runtime_error saying what to do) a file that fails
  // SQLite's quick_check, and one whose identity differs from the marker file `path + ".id"`
  // written when the store was first used (a database emptied or swapped while stopped).
  // A finished job keeps its answer, not its request: request_json is cleared when a job
  // finishes (or is inserted finished), so stored sizes stay bounded by the answers.
  // `boot_id` names this boot (current_boot_id() when empty): a file last used during another
  // boot has its jobs' boot-clock stamps cleared at open, since they no longer compare.
  explicit JobStore(const std::string& path, const std::string& boot_id = "");
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // Assigns job.seq. A duplicate id or a status outside the five names throws.
  void insert(StoredJob& job);
  // One transaction: all or none. Each job's seq is assigned only if the whole batch commits.
  void insert_many(std::vector<StoredJob>& jobs);
  // status=running, started_at=now, attempts+=1.
  void mark_running(const std::string& id, double now);
  // status must be done, cancelled or failed; sets result_json, finished_at=now and
  // finished_boot=boot_now (-1: not known). Overwrites whatever state the job had: the service,
  // not the store, decides which final state wins.
  void finish(const std::string& id, const std::string& status, const std::string& result_json,
              double now, double boot_now = -1);
  std::optional<StoredJob> get(const std::string& id) const;
  // Jobs that were queued or running when the last process died: running ones go back to queued
  // (attempts kept, started_at cleared). Returned in (priority desc, seq asc) order. Called once
  // at start-up.
  std::vector<StoredJob> recover_unfinished();

  // Result cache: the finished job answer (JSON text) by cache key.
  std::optional<std::string> cached_result(const std::string& key) const;
  void put_cached_result(const std::string& key, const std::string& result_json, double now);

  // Reference timings per (task hash, device, software) with when they were measured.
  struct ReferenceTiming {
    double median_ms = 0;
    int samples = 0;
    double measured_at = 0;
  };
  std::optional<ReferenceTiming> reference_timing(const std::string& key) const;
  void put_reference_timing(const std::string& key, const ReferenceTiming& t);

  // Every status name is present, with 0 where no job has it, so metrics series stay stable.
  std::map<std::string, std::uint64_t> counts_by_status() const;
  // One retention pass (RetentionRule), in one transaction; `force` deletes by age whatever
  // the share. Unfinished jobs are never deleted; cache entries and reference timings are kept.
  RetentionPass prune(const RetentionRule& rule, double wall_now, double boot_now,
                      bool force = false);
  // Idempotency keys: the job a key created and the SHA-256 of the request that created it.
  struct KeyedJob {
    std::string job_id;
    std::string request_sha256;
  };
  std::optional<KeyedJob> job_for_key(const std::string& key) const;
  // insert() and the key in one transaction; a key already present throws.
  void insert_keyed(StoredJob& job, const std::string& key, const std::string& request_sha256,
                    double now);

  // Writes a small row (the health probe): throws when the database cannot be written (a full
  // disk, a read-only file), which reads alone would not show.
  void probe_write(double now);

  // A consistent copy of the whole file to `out_path` (SQLite's online backup), safe while the
  // service runs. To restore: stop the service and put the copy in the database's place; it
  // carries the same store id, so the marker beside the database still matches.
  void backup_to(const std::string& out_path) const;

 private:
  struct Impl;  // keeps <sqlite3.h> out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace kgym::service
