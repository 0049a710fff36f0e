// The pool's queue against a real redis-server (started per test on a private unix socket; the
// tests skip, saying why, where redis-server is not installed). Built only with hiredis.
#ifdef KGYM_HAVE_HIREDIS

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "kgym/pool/redis_connection.hpp"
#include "kgym/pool/redis_url.hpp"
#include "kgym/pool/stream_queue.hpp"

namespace fs = std::filesystem;
using namespace kgym::pool;
using namespace std::chrono_literals;

namespace {

bool redis_installed() { return std::system("command -v redis-server >/dev/null 2>&1") == 0; }

}  // namespace

// redis-server in the foreground on a unix socket in a temporary directory; killed at the end.
class StreamQueueRedis : public ::testing::Test {
 protected:
  void SetUp() override {
    // As kgym-gym does: a write to a connection the server closed must fail, not kill.
    ::signal(SIGPIPE, SIG_IGN);
    if (!redis_installed())
      GTEST_SKIP() << "redis-server is not installed (apt-get install redis-server)";
    std::string pattern = (fs::temp_directory_path() / "kgym-redis-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    socket_ = (dir_ / "r.sock").string();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a test binary killed midway leaves no server
      const std::string dir = dir_.string();
      ::execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", socket_.c_str(),
               "--dir", dir.c_str(), "--save", "", "--appendonly", "no", "--logfile",
               (dir + "/log").c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    address_ = parse_redis_url("unix://" + socket_);
    // Ready when it answers: the socket file appears at bind(), before the server listens, so a
    // connection made as soon as the file exists may be refused.
    bool ready = false;
    for (int i = 0; i < 250 && !ready; ++i) {
      try {
        RedisConnection probe(address_, 200ms);
        ready = probe.command({"PING"}).as_string() == "PONG";
      } catch (const RedisUnavailable&) {
        std::this_thread::sleep_for(20ms);
      }
    }
    ASSERT_TRUE(ready) << "redis-server did not answer on " << socket_;
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  QueueConfig config(std::chrono::milliseconds lease = 30s) const {
    QueueConfig c;
    c.pool = "test";
    c.lease = lease;
    return c;
  }

  fs::path dir_;
  std::string socket_;
  pid_t pid_ = -1;
  RedisAddress address_;
};

TEST(RedisUrl, ParsesTcpUnixPasswordAndDatabase) {
  auto a = parse_redis_url("redis://example.org:6380/2");
  EXPECT_EQ(a.host, "example.org");
  EXPECT_EQ(a.port, 6380);
  EXPECT_EQ(a.db, 2);
  a = parse_redis_url("redis://:s3cret@10.0.0.5");
  EXPECT_EQ(a.host, "10.0.0.5");
  EXPECT_EQ(a.port, 6379);
  EXPECT_EQ(a.password, "s3cret");
  EXPECT_EQ(a.display().find("s3cret"), std::string::npos);
  a = parse_redis_url("unix:///run/redis.sock?db=3");
  EXPECT_EQ(a.socket_path, "/run/redis.sock");
  EXPECT_EQ(a.db, 3);
}

TEST(RedisUrl, RefusesBadUrlsWithoutShowingThePassword) {
  for (const char* bad : {"localhost:6379", "redis://", "redis://h:99999", "redis://h:12x",
                          "unix://relative.sock", "redis://user:pw@h", "redis://[::1]:6379"}) {
    EXPECT_THROW(parse_redis_url(bad), std::invalid_argument) << bad;
  }
  try {
    parse_redis_url("redis://:hunter2@h:notaport");
    FAIL() << "accepted a bad port";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("port"), std::string::npos) << e.what();
  }
}

TEST(PoolName, OnlyKeySafeNames) {
  EXPECT_NO_THROW(check_pool_name("gpu-pool_1.a"));
  EXPECT_THROW(check_pool_name(""), std::invalid_argument);
  EXPECT_THROW(check_pool_name("a:b"), std::invalid_argument);
  EXPECT_THROW(check_pool_name(std::string(65, 'a')), std::invalid_argument);
}

TEST(RedisConnectionErrors, UnreachableServerIsUnavailableAndSaysWhere) {
  RedisConnection c(parse_redis_url("unix:///nonexistent/kgym.sock"), 200ms);
  try {
    c.command({"PING"});
    FAIL() << "connected to nothing";
  } catch (const RedisUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kgym.sock"), std::string::npos);
  }
}

TEST_F(StreamQueueRedis, CommandErrorsAreNotConnectionErrors) {
  RedisConnection c(address_);
  EXPECT_THROW(c.command({"NOSUCHCOMMAND"}), RedisCommandError);
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");  // the connection is still usable
}

TEST_F(StreamQueueRedis, PublishingIsIdempotent) {
  RedisConnection c(address_);
  StreamQueue q(c, config());
  EXPECT_TRUE(q.publish("j-1", 0, "{}"));
  EXPECT_FALSE(q.publish("j-1", 0, "{}"));  // queued already
  EXPECT_EQ(c.command({"XLEN", q.keys().stream(0)}).as_integer(), 1);
}

TEST_F(StreamQueueRedis, HigherPriorityIsTakenFirst) {
  RedisConnection c(address_);
  StreamQueue q(c, config());
  q.publish("low", -3, "{}");
  q.publish("mid", 0, "{}");
  q.publish("high", 7, "{}");
  std::vector<std::string> order;
  while (auto d = q.take("w-0", 0ms)) order.push_back(d->job_id);
  EXPECT_EQ(order, (std::vector<std::string>{"high", "mid", "low"}));
}

TEST_F(StreamQueueRedis, OnlyTheOwnerAnswersAndOnlyOnce) {
  RedisConnection c(address_);
  StreamQueue q(c, config());
  q.ensure_inbox();
  q.publish("j-1", 0, "{\"x\":1}");
  const auto d = q.take("w-a", 0ms);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->payload, "{\"x\":1}");
  EXPECT_EQ(d->deliveries, 1);
  EXPECT_EQ(q.complete(*d, "w-b", "{\"by\":\"b\"}"), Completion::kLeaseLost);
  EXPECT_EQ(q.complete(*d, "w-a", "{\"by\":\"a\"}"), Completion::kRecorded);
  // Sent again (its reply was lost): its own answer, already recorded, not a second one.
  EXPECT_EQ(q.complete(*d, "w-a", "{\"by\":\"a\"}"), Completion::kRecorded);
  const auto events = q.read_inbox(false, 0ms);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "result");
  EXPECT_EQ(events[0].payload, "{\"by\":\"a\"}");
  // Answered: publishing it again queues nothing.
  EXPECT_FALSE(q.publish("j-1", 0, "{}"));
}

TEST_F(StreamQueueRedis, AnExpiredLeaseIsTakenOverAndTheLateAnswerRefused) {
  RedisConnection c(address_);
  StreamQueue q(c, config(300ms));
  q.ensure_inbox();
  q.publish("j-1", 0, "{}");
  const auto first = q.take("w-a", 0ms);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(q.take("w-b", 0ms).has_value());  // within its lease: not another's
  std::this_thread::sleep_for(400ms);
  const auto second = q.take("w-b", 0ms);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->job_id, "j-1");
  EXPECT_EQ(second->deliveries, 2);
  EXPECT_FALSE(q.heartbeat(*first, "w-a"));  // a paused worker does not take it back
  EXPECT_TRUE(q.heartbeat(*second, "w-b"));
  EXPECT_EQ(q.complete(*first, "w-a", "late"), Completion::kLeaseLost);
  EXPECT_EQ(q.complete(*second, "w-b", "on time"), Completion::kRecorded);
  const auto events = q.read_inbox(false, 0ms);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].payload, "on time");
}

TEST_F(StreamQueueRedis, HeartbeatsKeepTheLease) {
  RedisConnection c(address_);
  StreamQueue q(c, config(300ms));
  q.publish("j-1", 0, "{}");
  const auto d = q.take("w-a", 0ms);
  ASSERT_TRUE(d.has_value());
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(q.heartbeat(*d, "w-a"));
  }
  EXPECT_FALSE(q.take("w-b", 0ms).has_value());
}

TEST_F(StreamQueueRedis, TwoEntriesOfOneJobGiveOneResult) {
  // A Redis that lost the marker (restarted without its data) may get a job published twice.
  RedisConnection c(address_);
  StreamQueue q(c, config());
  q.ensure_inbox();
  q.publish("j-1", 0, "{}");
  c.command({"DEL", q.keys().published("j-1")});
  ASSERT_TRUE(q.publish("j-1", 0, "{}"));
  const auto a = q.take("w-a", 0ms);
  const auto b = q.take("w-b", 0ms);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(q.complete(*a, "w-a", "a"), Completion::kRecorded);
  EXPECT_EQ(q.complete(*b, "w-b", "b"), Completion::kDuplicate);
  EXPECT_EQ(q.read_inbox(false, 0ms).size(), 1u);
  EXPECT_FALSE(q.take("w-c", 0ms).has_value());  // both entries acknowledged
}

TEST_F(StreamQueueRedis, UnacknowledgedEventsAreReadAgainAfterARestart) {
  RedisConnection c(address_);
  StreamQueue q(c, config());
  q.ensure_inbox();
  q.publish("j-1", 0, "{}");
  const auto d = q.take("w-a", 0ms);
  ASSERT_TRUE(d.has_value());
  q.announce(*d, "started", "{}");
  ASSERT_EQ(q.read_inbox(false, 0ms).size(), 1u);  // read, then the front door "dies"
  RedisConnection again(address_);
  StreamQueue q2(again, config());
  auto pending = q2.read_inbox(true, 0ms);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].kind, "started");
  q2.ack_inbox(pending[0]);
  EXPECT_TRUE(q2.read_inbox(true, 0ms).empty());
}

TEST_F(StreamQueueRedis, ACancelledJobIsVisibleToWorkers) {
  RedisConnection c(address_);
  StreamQueue q(c, config());
  EXPECT_FALSE(q.cancel_requested("j-1"));
  q.request_cancel("j-1");
  EXPECT_TRUE(q.cancel_requested("j-1"));
}

TEST_F(StreamQueueRedis, ARestartedServerIsReconnectedTo) {
  RedisConnection c(address_, 500ms);
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
  const auto before = c.connects();
  RedisConnection killer(address_);
  killer.command({"CLIENT", "KILL", "TYPE", "normal"});  // every connection but the killer's
  EXPECT_THROW(c.command({"PING"}), RedisUnavailable);
  EXPECT_EQ(c.command({"PING"}).as_string(), "PONG");
  EXPECT_GT(c.connects(), before);
}

#endif  // KGYM_HAVE_HIREDIS
