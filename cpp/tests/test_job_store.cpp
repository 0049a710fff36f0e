#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "kgym/service/job_store.hpp"

using kgym::service::JobStore;
using kgym::service::StoredJob;

namespace {

// A fresh directory per test, removed afterwards: WAL mode puts -wal and -shm files beside the
// database, and reopening must find the same path.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kgym-job-store-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

StoredJob make_job(const std::string& id, int priority = 0, double created_at = 100) {
  StoredJob job;
  job.id = id;
  job.status = "queued";
  job.priority = priority;
  job.task_id = "01_relu";
  job.request_json = R"({"task":{"id":"01_relu"},"candidate":{"source":"x"}})";
  job.cache_key = std::string(64, 'a');
  job.created_at = created_at;
  return job;
}

// Reads a PRAGMA straight from the file, without the store: what the store wrote, not what it
// believes it wrote.
std::string read_pragma(const std::string& path, const std::string& pragma) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string value;
  if (sqlite3_prepare_v2(db, ("PRAGMA " + pragma).c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

std::string big_json(size_t bytes) {
  nlohmann::json doc;
  doc["status"] = "ok";
  doc["log"] = std::string(bytes, 'x');
  doc["unicode"] = "μs → ✓";
  return doc.dump();
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::runtime_error";
  return {};
}

}  // namespace

TEST(JobStore, InsertGetRoundTrip) {
  JobStore store(":memory:");
  StoredJob job = make_job("j-1", 3, 1732260000.125);
  job.result_json = R"({"status":"ok"})";
  job.attempts = 2;
  job.cached = true;
  job.started_at = 1732260001.5;
  job.finished_at = 1732260002.75;
  job.status = "done";
  store.insert(job);
  EXPECT_GT(job.seq, 0u);

  const auto got = store.get("j-1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->id, "j-1");
  EXPECT_EQ(got->status, "done");
  EXPECT_EQ(got->priority, 3);
  EXPECT_EQ(got->task_id, "01_relu");
  EXPECT_EQ(got->request_json, "");  // a finished job keeps its answer, not its request
  EXPECT_EQ(got->cache_key, job.cache_key);
  EXPECT_EQ(got->result_json, job.result_json);
  EXPECT_EQ(got->attempts, 2);
  EXPECT_TRUE(got->cached);
  EXPECT_DOUBLE_EQ(got->created_at, 1732260000.125);
  EXPECT_DOUBLE_EQ(got->started_at, 1732260001.5);
  EXPECT_DOUBLE_EQ(got->finished_at, 1732260002.75);
  EXPECT_EQ(got->seq, job.seq);

  EXPECT_FALSE(store.get("j-missing").has_value());
}

TEST(JobStore, SeqFollowsArrivalOrder) {
  JobStore store(":memory:");
  StoredJob a = make_job("a"), b = make_job("b"), c = make_job("c");
  store.insert(a);
  store.insert(b);
  store.insert(c);
  EXPECT_LT(a.seq, b.seq);
  EXPECT_LT(b.seq, c.seq);
}

TEST(JobStore, ValuesAreBoundNotSpliced) {
  JobStore store(":memory:");
  const std::string id = "x'); DROP TABLE jobs; --\"";
  StoredJob job = make_job(id);
  job.task_id = "it's \"quoted\"";
  store.insert(job);
  const auto got = store.get(id);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->task_id, job.task_id);
  EXPECT_EQ(store.counts_by_status().at("queued"), 1u);
}

TEST(JobStore, DuplicateIdThrowsNamingTheOperation) {
  JobStore store(":memory:");
  StoredJob first = make_job("j-1");
  store.insert(first);
  StoredJob again = make_job("j-1");
  const std::string message = error_of([&] { store.insert(again); });
  EXPECT_NE(message.find("insert"), std::string::npos) << message;
  EXPECT_NE(message.find("UNIQUE"), std::string::npos) << message;
  EXPECT_EQ(again.seq, 0u);
}

TEST(JobStore, UnknownStatusRejected) {
  JobStore store(":memory:");
  StoredJob job = make_job("j-1");
  job.status = "finished";
  EXPECT_THROW(store.insert(job), std::runtime_error);
  EXPECT_FALSE(store.get("j-1").has_value());
}

TEST(JobStore, InsertManyAssignsSeqsInOrder) {
  JobStore store(":memory:");
  std::vector<StoredJob> jobs = {make_job("a"), make_job("b"), make_job("c")};
  store.insert_many(jobs);
  EXPECT_GT(jobs[0].seq, 0u);
  EXPECT_LT(jobs[0].seq, jobs[1].seq);
  EXPECT_LT(jobs[1].seq, jobs[2].seq);
  for (const auto& job : jobs) {
    const auto got = store.get(job.id);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->seq, job.seq);
  }
  std::vector<StoredJob> none;
  store.insert_many(none);  // an empty batch is no error
}

TEST(JobStore, InsertManyIsAllOrNone) {
  JobStore store(":memory:");
  // A duplicate inside the batch, after rows that would have been inserted.
  std::vector<StoredJob> batch = {make_job("a"), make_job("b"), make_job("c"), make_job("b")};
  EXPECT_THROW(store.insert_many(batch), std::runtime_error);
  for (const auto& job : batch) {
    EXPECT_FALSE(store.get(job.id).has_value()) << job.id;
    EXPECT_EQ(job.seq, 0u) << "a rolled back batch must not report seqs";
  }
  EXPECT_EQ(store.counts_by_status().at("queued"), 0u);

  // A duplicate of a job already stored: the existing one stays, the new ones do not appear.
  StoredJob existing = make_job("old");
  store.insert(existing);
  std::vector<StoredJob> clash = {make_job("new-1"), make_job("old"), make_job("new-2")};
  EXPECT_THROW(store.insert_many(clash), std::runtime_error);
  EXPECT_FALSE(store.get("new-1").has_value());
  EXPECT_FALSE(store.get("new-2").has_value());
  EXPECT_TRUE(store.get("old").has_value());

  // The store is usable afterwards: no transaction was left open.
  std::vector<StoredJob> good = {make_job("a"), make_job("b")};
  store.insert_many(good);
  EXPECT_EQ(store.counts_by_status().at("queued"), 3u);
}

TEST(JobStore, StatusTransitions) {
  JobStore store(":memory:");
  StoredJob job = make_job("j-1");
  store.insert(job);
  EXPECT_EQ(store.get("j-1")->attempts, 0);

  store.mark_running("j-1", 200.5);
  auto got = store.get("j-1");
  EXPECT_EQ(got->status, "running");
  EXPECT_DOUBLE_EQ(got->started_at, 200.5);
  EXPECT_EQ(got->attempts, 1);
  EXPECT_DOUBLE_EQ(got->finished_at, 0);
  EXPECT_TRUE(got->result_json.empty());

  store.mark_running("j-1", 201);
  EXPECT_EQ(store.get("j-1")->attempts, 2);

  store.finish("j-1", "done", R"({"result":{"status":"ok"}})", 250.25);
  got = store.get("j-1");
  EXPECT_EQ(got->status, "done");
  EXPECT_EQ(got->result_json, R"({"result":{"status":"ok"}})");
  EXPECT_DOUBLE_EQ(got->finished_at, 250.25);
  EXPECT_DOUBLE_EQ(got->started_at, 201);
  EXPECT_EQ(got->attempts, 2);

  StoredJob queued = make_job("j-2");
  store.insert(queued);
  store.finish("j-2", "cancelled", R"({"status":"cancelled"})", 300);  // never ran
  got = store.get("j-2");
  EXPECT_EQ(got->status, "cancelled");
  EXPECT_EQ(got->attempts, 0);
  EXPECT_DOUBLE_EQ(got->started_at, 0);

  StoredJob failing = make_job("j-3");
  store.insert(failing);
  store.mark_running("j-3", 301);
  store.finish("j-3", "failed", R"({"error":{"code":"internal"}})", 302);
  EXPECT_EQ(store.get("j-3")->status, "failed");
}

TEST(JobStore, TransitionErrors) {
  JobStore store(":memory:");
  StoredJob job = make_job("j-1");
  store.insert(job);
  EXPECT_THROW(store.finish("j-1", "running", "{}", 1), std::invalid_argument);
  EXPECT_THROW(store.finish("j-1", "queued", "{}", 1), std::invalid_argument);
  EXPECT_EQ(store.get("j-1")->status, "queued");

  const std::string message = error_of([&] { store.mark_running("nope", 1); });
  EXPECT_NE(message.find("mark_running"), std::string::npos) << message;
  EXPECT_NE(message.find("nope"), std::string::npos) << message;
  EXPECT_THROW(store.finish("nope", "done", "{}", 1), std::runtime_error);
}

TEST(JobStore, ReopenSeesEverythingCommitted) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  std::uint64_t seq = 0;
  {
    JobStore store(path);
    StoredJob job = make_job("j-1", 5);
    store.insert(job);
    seq = job.seq;
    store.mark_running("j-1", 10);
    store.finish("j-1", "done", R"({"reward":0.73})", 20);
    store.put_cached_result("key-1", R"({"cached":true})", 21);
    store.put_reference_timing("ref-1", {2.5, 40, 22});
  }
  JobStore store(path);
  const auto got = store.get("j-1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, "done");
  EXPECT_EQ(got->result_json, R"({"reward":0.73})");
  EXPECT_EQ(got->attempts, 1);
  EXPECT_EQ(got->priority, 5);
  EXPECT_EQ(got->seq, seq);
  EXPECT_EQ(store.cached_result("key-1"), R"({"cached":true})");
  const auto timing = store.reference_timing("ref-1");
  ASSERT_TRUE(timing.has_value());
  EXPECT_DOUBLE_EQ(timing->median_ms, 2.5);

  // New jobs continue after the old seqs.
  StoredJob next = make_job("j-2");
  store.insert(next);
  EXPECT_GT(next.seq, seq);
}

TEST(JobStore, TwoStoresOnOneFileSeeEachOthersCommits) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  JobStore writer(path);
  JobStore reader(path);
  StoredJob job = make_job("j-1");
  writer.insert(job);
  ASSERT_TRUE(reader.get("j-1").has_value());
  reader.mark_running("j-1", 5);
  EXPECT_EQ(writer.get("j-1")->status, "running");
}

TEST(JobStore, RecoveryAfterReopen) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  {
    JobStore store(path);
    std::vector<StoredJob> jobs = {make_job("low-1", 0),  make_job("high-1", 9),
                                   make_job("mid-1", 5),  make_job("low-2", 0),
                                   make_job("high-2", 9), make_job("done-1", 9)};
    store.insert_many(jobs);
    store.mark_running("mid-1", 50);  // was running when the process died
    store.mark_running("mid-1", 51);  // its second attempt, in fact
    store.mark_running("done-1", 52);
    store.finish("done-1", "done", "{}", 53);
    StoredJob cancelled = make_job("cancelled-1", 9);
    store.insert(cancelled);
    store.finish("cancelled-1", "cancelled", "{}", 54);
    // The store is destroyed without any shutdown step: what a crash leaves behind.
  }
  JobStore store(path);
  const auto recovered = store.recover_unfinished();
  std::vector<std::string> ids;
  for (const auto& job : recovered) ids.push_back(job.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"high-1", "high-2", "mid-1", "low-1", "low-2"}));
  for (const auto& job : recovered) EXPECT_EQ(job.status, "queued") << job.id;

  const auto mid = std::find_if(recovered.begin(), recovered.end(),
                                [](const StoredJob& j) { return j.id == "mid-1"; });
  ASSERT_NE(mid, recovered.end());
  EXPECT_EQ(mid->attempts, 2) << "attempts count every run, the lost one included";
  EXPECT_DOUBLE_EQ(mid->started_at, 0);
  EXPECT_EQ(store.get("mid-1")->status, "queued");  // written back, not only returned

  // Recovery is idempotent: a second call (or a second crash before anything ran) returns the
  // same jobs.
  EXPECT_EQ(store.recover_unfinished().size(), recovered.size());
  const auto counts = store.counts_by_status();
  EXPECT_EQ(counts.at("queued"), 5u);
  EXPECT_EQ(counts.at("running"), 0u);
  EXPECT_EQ(counts.at("done"), 1u);
  EXPECT_EQ(counts.at("cancelled"), 1u);

  // The next run counts as the third attempt.
  store.mark_running("mid-1", 60);
  EXPECT_EQ(store.get("mid-1")->attempts, 3);
}

TEST(JobStore, CacheRoundTrip) {
  JobStore store(":memory:");
  const std::string key = std::string(64, 'f');
  EXPECT_FALSE(store.cached_result(key).has_value());
  store.put_cached_result(key, R"({"v":1})", 10);
  EXPECT_EQ(store.cached_result(key), R"({"v":1})");
  store.put_cached_result(key, R"({"v":2})", 11);  // a later answer replaces the older one
  EXPECT_EQ(store.cached_result(key), R"({"v":2})");
  EXPECT_FALSE(store.cached_result(std::string(64, 'e')).has_value());
}

TEST(JobStore, ReferenceTimingRoundTrip) {
  JobStore store(":memory:");
  EXPECT_FALSE(store.reference_timing("t|H100|torch-2.5").has_value());
  store.put_reference_timing("t|H100|torch-2.5", {1.2345, 100, 1732260000.5});
  auto timing = store.reference_timing("t|H100|torch-2.5");
  ASSERT_TRUE(timing.has_value());
  EXPECT_DOUBLE_EQ(timing->median_ms, 1.2345);
  EXPECT_EQ(timing->samples, 100);
  EXPECT_DOUBLE_EQ(timing->measured_at, 1732260000.5);

  store.put_reference_timing("t|H100|torch-2.5", {1.5, 50, 1732270000});  // re-measured
  timing = store.reference_timing("t|H100|torch-2.5");
  EXPECT_DOUBLE_EQ(timing->median_ms, 1.5);
  EXPECT_EQ(timing->samples, 50);
  EXPECT_FALSE(store.reference_timing("t|H200|torch-2.5").has_value());
}

TEST(JobStore, CountsByStatus) {
  JobStore store(":memory:");
  auto counts = store.counts_by_status();
  EXPECT_EQ(counts.size(), 5u) << "every status is listed, even at zero";
  for (const auto& [status, n] : counts) EXPECT_EQ(n, 0u) << status;

  std::vector<StoredJob> jobs = {make_job("a"), make_job("b"), make_job("c"),
                                 make_job("d"), make_job("e"), make_job("f")};
  store.insert_many(jobs);
  store.mark_running("a", 1);
  store.mark_running("b", 1);
  store.mark_running("c", 1);
  store.finish("c", "done", "{}", 2);
  store.finish("d", "cancelled", "{}", 2);
  store.mark_running("e", 1);
  store.finish("e", "failed", "{}", 2);
  counts = store.counts_by_status();
  EXPECT_EQ(counts.at("queued"), 1u);
  EXPECT_EQ(counts.at("running"), 2u);
  EXPECT_EQ(counts.at("done"), 1u);
  EXPECT_EQ(counts.at("cancelled"), 1u);
  EXPECT_EQ(counts.at("failed"), 1u);
}

using kgym::service::RetentionRule;

constexpr double kDay = 86400.0;

// Jobs finished at wall time 1000 + i and boot time 10 + i (i = 0..n-1), plus one queued job.
std::vector<StoredJob> finished_jobs(JobStore& store, int n) {
  std::vector<StoredJob> jobs;
  for (int i = 0; i < n; ++i) jobs.push_back(make_job("j" + std::to_string(i), 0, 1));
  jobs.push_back(make_job("unfinished", 0, 1));
  store.insert_many(jobs);
  for (int i = 0; i < n; ++i) {
    store.finish("j" + std::to_string(i), "done", "{}", 1000.0 + i, 10.0 + i);
  }
  return jobs;
}

TEST(JobStore, PruneByAgeGoesByTheBootClockWithinABoot) {
  JobStore store(":memory:", "boot-a");
  const auto jobs = finished_jobs(store, 20);
  const RetentionRule rule{7 * kDay, 1000, 0.5};
  // The wall clock 8 days ahead (or behind): the boot clock says the jobs are seconds old.
  for (const double wall : {1100 + 8 * kDay, 1100 - 8 * kDay}) {
    const auto pass = store.prune(rule, wall, 100);
    EXPECT_EQ(pass.by_age + pass.by_count, 0u);
    EXPECT_FALSE(pass.refused);
  }
  // Seven days and a bit of boot time later, the first five are old, the rest are not.
  const auto pass = store.prune(rule, 0, 14.5 + 7 * kDay);
  EXPECT_EQ(pass.by_age, 5u);
  EXPECT_EQ(pass.finished, 20u);
  EXPECT_FALSE(store.get("j4").has_value());
  EXPECT_TRUE(store.get("j5").has_value());
  EXPECT_TRUE(store.get("unfinished").has_value()) << "unfinished jobs are never pruned";

  // Pruning the newest rows does not let their seqs be handed out again.
  EXPECT_EQ(store.prune(rule, 0, 1e9, true).by_age, 15u);
  StoredJob next = make_job("after-prune");
  store.insert(next);
  EXPECT_GT(next.seq, jobs.back().seq);
}

TEST(JobStore, AfterARebootAgesComeFromTheWallClockWithAShareBound) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  {
    JobStore store(path, "boot-a");
    finished_jobs(store, 40);
  }
  JobStore store(path, "boot-b");  // the boot-clock stamps of boot-a compare with nothing now
  EXPECT_LT(store.get("j0")->finished_boot, 0);
  const RetentionRule rule{7 * kDay, 1000, 0.5};
  // A wall clock 8 days ahead makes every job look old: refused, and nothing is lost.
  auto pass = store.prune(rule, 1040 + 8 * kDay, 5);
  EXPECT_TRUE(pass.refused);
  EXPECT_EQ(pass.aged, 40u);
  EXPECT_EQ(pass.by_age, 0u);
  EXPECT_TRUE(store.get("j0").has_value());
  // A wall clock behind the stamps: a finished_at ahead of now is never old.
  pass = store.prune(rule, 0, 5);
  EXPECT_EQ(pass.aged, 0u);
  // A share under the bound goes: 15 of 40 finished more than 7 days before 1015 + 7 days.
  pass = store.prune(rule, 1015 + 7 * kDay, 5);
  EXPECT_FALSE(pass.refused);
  EXPECT_EQ(pass.by_age, 15u);
  // The operator's force deletes what the bound refused.
  pass = store.prune(rule, 1e9, 5);
  EXPECT_TRUE(pass.refused);
  pass = store.prune(rule, 1e9, 5, true);
  EXPECT_EQ(pass.by_age, 25u);
  EXPECT_TRUE(store.get("unfinished").has_value());
}

TEST(JobStore, PruneByCountKeepsTheLatestArrivals) {
  JobStore store(":memory:", "boot-a");
  std::vector<StoredJob> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back(make_job("j" + std::to_string(i)));
  store.insert_many(jobs);
  // The wall clock went back while j3 and j4 ran: their finished_at is the oldest, yet they
  // arrived last and are kept.
  for (int i = 0; i < 5; ++i) {
    store.finish("j" + std::to_string(i), "done", "{}", i >= 3 ? 1.0 : 10.0 + i, i);
  }
  const RetentionRule rule{7 * kDay, 2, 0.5};
  EXPECT_EQ(store.prune(rule, 20, 5).by_count, 3u);
  EXPECT_FALSE(store.get("j0").has_value());
  EXPECT_FALSE(store.get("j2").has_value());
  EXPECT_TRUE(store.get("j3").has_value());
  EXPECT_TRUE(store.get("j4").has_value());
  EXPECT_TRUE(store.get("j5").has_value()) << "unfinished jobs are never pruned";
  EXPECT_EQ(store.prune(rule, 20, 5).by_count, 0u);
}

TEST(JobStore, AVersionOneFileIsMigrated) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* v1 =
        "CREATE TABLE jobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, "
        "status TEXT NOT NULL, priority INTEGER NOT NULL DEFAULT 0, task_id TEXT NOT NULL "
        "DEFAULT '', request_json TEXT NOT NULL DEFAULT '', cache_key TEXT NOT NULL DEFAULT '', "
        "result_json TEXT NOT NULL DEFAULT '', attempts INTEGER NOT NULL DEFAULT 0, cached "
        "INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL DEFAULT 0, started_at REAL NOT "
        "NULL DEFAULT 0, finished_at REAL NOT NULL DEFAULT 0);"
        "CREATE TABLE result_cache (key TEXT PRIMARY KEY, result_json TEXT NOT NULL, "
        "created_at REAL NOT NULL);"
        "CREATE TABLE reference_timings (key TEXT PRIMARY KEY, median_ms REAL NOT NULL, "
        "samples INTEGER NOT NULL, measured_at REAL NOT NULL);"
        "INSERT INTO jobs (id, status, finished_at) VALUES ('old', 'done', 5);"
        "PRAGMA user_version = 1;";
    ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  JobStore store(path, "boot-a");
  EXPECT_EQ(read_pragma(path, "user_version"), "2");
  const auto old = store.get("old");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->client, "");
  EXPECT_LT(old->finished_boot, 0);
  StoredJob job = make_job("new");
  job.client = "alice";
  store.insert(job);
  EXPECT_EQ(store.get("new")->client, "alice");
}

TEST(JobStore, TheHealthProbeWrites) {
  JobStore store(":memory:");
  EXPECT_NO_THROW(store.probe_write(12.5));
}

TEST(JobStore, LargeResultsRoundTrip) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  const std::string result = big_json(1 << 20);
  ASSERT_GT(result.size(), 1u << 20);
  {
    JobStore store(path);
    StoredJob job = make_job("big");
    job.request_json = big_json(1 << 20);  // a candidate at the 1 MiB limit
    store.insert(job);
    store.mark_running("big", 1);
    store.finish("big", "done", result, 2);
    store.put_cached_result("big-key", result, 3);
  }
  JobStore store(path);
  const auto got = store.get("big");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->result_json, result);  // byte for byte, multi-byte UTF-8 included
  EXPECT_EQ(got->request_json, "");     // the 1 MiB request is dropped once the job finished
  EXPECT_EQ(store.cached_result("big-key"), result);
  EXPECT_EQ(nlohmann::json::parse(got->result_json)["unicode"], "μs → ✓");
}

TEST(JobStore, ConcurrentInsertsFromEightThreads) {
  TempDir dir;
  JobStore store(dir.file("jobs.sqlite3"));
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100;
  std::vector<std::vector<std::uint64_t>> seqs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        StoredJob job = make_job("t" + std::to_string(t) + "-" + std::to_string(i), t);
        store.insert(job);
        seqs[t].push_back(job.seq);
        // Readers and writers interleaved with the inserts of the other threads.
        if (i % 10 == 0) {
          store.mark_running(job.id, i);
          (void)store.counts_by_status();
          (void)store.get(job.id);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();

  std::set<std::uint64_t> unique;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seqs[t].size(), static_cast<size_t>(kPerThread));
    // Within one thread, a later insert arrived later.
    EXPECT_TRUE(std::is_sorted(seqs[t].begin(), seqs[t].end()));
    for (int i = 0; i < kPerThread; ++i) {
      unique.insert(seqs[t][i]);
      const auto got = store.get("t" + std::to_string(t) + "-" + std::to_string(i));
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(got->seq, seqs[t][i]);
    }
  }
  EXPECT_EQ(unique.size(), static_cast<size_t>(kThreads * kPerThread));
  const auto counts = store.counts_by_status();
  EXPECT_EQ(counts.at("queued") + counts.at("running"),
            static_cast<std::uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(counts.at("running"), static_cast<std::uint64_t>(kThreads * kPerThread / 10));
}

TEST(JobStore, SchemaVersionAndWalRecorded) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  { JobStore store(path); }
  EXPECT_EQ(read_pragma(path, "user_version"), std::to_string(JobStore::kSchemaVersion));
  EXPECT_EQ(read_pragma(path, "journal_mode"), "wal");
  JobStore reopened(path);  // the current version opens again without trying to recreate tables
}

TEST(JobStore, NewerSchemaVersionRefused) {
  TempDir dir;
  const std::string path = dir.file("future.sqlite3");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE jobs (x); PRAGMA user_version = 3", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string message = error_of([&] { JobStore store(path); });
  EXPECT_NE(message.find("schema version 3"), std::string::npos) << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
  // Refused without touching the file.
  EXPECT_EQ(read_pragma(path, "user_version"), "3");
  EXPECT_EQ(read_pragma(path, "journal_mode"), "delete");
}

TEST(JobStore, BadPathGivesClearError) {
  TempDir dir;
  const std::string path = dir.file("no-such-dir/jobs.sqlite3");
  const std::string message = error_of([&] { JobStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("unable to open"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(JobStore, NotADatabaseGivesClearError) {
  TempDir dir;
  const std::string path = dir.file("notes.txt");
  {
    std::ofstream out(path);
    out << std::string(4096, '#') << "\nthis is not an SQLite database\n";
  }
  const std::string message = error_of([&] { JobStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a database"), std::string::npos) << message;
}

TEST(JobStore, RequestIsKeptUntilTheJobFinishes) {
  JobStore store(":memory:");
  StoredJob job = make_job("j");
  store.insert(job);
  EXPECT_EQ(store.get("j")->request_json, job.request_json);  // recovery needs it
  store.mark_running("j", 1);
  store.finish("j", "done", "{}", 2);
  EXPECT_EQ(store.get("j")->request_json, "");
}

TEST(JobStore, AnEmptiedDatabaseIsRefusedAtStart) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  {
    JobStore store(path);
    StoredJob job = make_job("kept");
    store.insert(job);
  }
  // Truncated to 0 bytes while stopped (WAL and shm files gone too): every job would be lost.
  std::filesystem::resize_file(path, 0);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  try {
    JobStore again(path);
    FAIL() << "an emptied database was opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not the database this service used before"),
              std::string::npos)
        << e.what();
  }
}

TEST(JobStore, BackupRestoresEverythingAndKeepsTheMarkerValid) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3"), copy = dir.file("backup.sqlite3");
  {
    JobStore store(path);
    StoredJob job = make_job("kept");
    store.insert(job);
    store.backup_to(copy);
  }
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  std::filesystem::copy_file(copy, path, std::filesystem::copy_options::overwrite_existing);
  JobStore restored(path);
  EXPECT_TRUE(restored.get("kept").has_value());
}

TEST(JobStore, ADamagedDatabaseIsRefusedAtStart) {
  TempDir dir;
  const std::string path = dir.file("jobs.sqlite3");
  {
    JobStore store(path);
    std::vector<StoredJob> jobs;
    for (int i = 0; i < 200; ++i) {
      jobs.push_back(make_job("j" + std::to_string(i)));
      jobs.back().request_json = big_json(4096);
    }
    store.insert_many(jobs);
  }
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  // Garbage over a page in the middle of the file (the header stays intact).
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8 * 4096);
    const std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  EXPECT_THROW(JobStore again(path), std::runtime_error);
}
