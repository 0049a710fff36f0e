// Clients and the queue they share: tokens, scopes and limits read from a clients file; a fair
// share across clients within a priority; bodies bounded by their JSON values.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "kgym/service/clients.hpp"
#include "kgym/service/fair_queue.hpp"
#include "kgym/service/hashing.hpp"
#include "kgym/service/json_limits.hpp"

namespace {

using kgym::service::Client;
using kgym::service::ClientRegistry;
using kgym::service::FairQueue;
using kgym::service::Scope;

std::string error_of(const std::string& text) {
  try {
    ClientRegistry::from_json_text(text, "clients");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return {};
}

TEST(Clients, FileNamesTokensScopesAndLimits) {
  const auto digest = kgym::service::sha256_hex("alice-token-0123456789");
  const auto registry = ClientRegistry::from_json_text(
      R"({"clients": [{"name": "alice", "token_sha256": ")" + digest +
          R"(", "scopes": ["submit", "read_own"], "max_in_flight": 3, "max_priority": 5,
          "max_timeout_s": 60},
         {"name": "ops", "token": "ops-token-0123456789", "scopes": ["admin"]}]})",
      "clients");
  EXPECT_TRUE(registry.requires_token());
  const Client* alice = registry.authenticate("Bearer alice-token-0123456789");
  ASSERT_NE(alice, nullptr);
  EXPECT_EQ(alice->name, "alice");
  EXPECT_TRUE(alice->has(Scope::kSubmit));
  EXPECT_FALSE(alice->has(Scope::kReadAll));
  EXPECT_TRUE(alice->may_read("alice"));
  EXPECT_FALSE(alice->may_read("ops"));
  EXPECT_EQ(alice->max_in_flight, 3u);
  EXPECT_EQ(alice->max_priority, 5);
  EXPECT_DOUBLE_EQ(alice->max_timeout_s, 60);
  const Client* ops = registry.authenticate("Bearer ops-token-0123456789");
  ASSERT_NE(ops, nullptr);
  EXPECT_TRUE(ops->has(Scope::kReadAll) && ops->has(Scope::kSubmit));  // admin holds all
  EXPECT_TRUE(ops->may_read("alice"));
  EXPECT_EQ(registry.authenticate("Bearer alice-token-012345678"), nullptr);
  EXPECT_EQ(registry.authenticate("alice-token-0123456789"), nullptr);  // not a bearer
  EXPECT_EQ(registry.authenticate(""), nullptr);
}

TEST(Clients, SingleTokenIsOneAdminAndOpenIsAnonymous) {
  const auto single = ClientRegistry::single_token("s3cret");
  const Client* c = single.authenticate("Bearer s3cret");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "default");
  EXPECT_TRUE(c->has(Scope::kAdmin));
  EXPECT_EQ(single.authenticate("Bearer s3cre"), nullptr);
  const auto open = ClientRegistry::open();
  EXPECT_FALSE(open.requires_token());
  ASSERT_NE(open.authenticate(""), nullptr);
  EXPECT_TRUE(open.authenticate("")->has(Scope::kAdmin));
}

TEST(Clients, BadFilesAreRefusedSayingWhere) {
  EXPECT_NE(error_of("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"clients": []})").find("non-empty"), std::string::npos);
  const std::string ok_token = R"("token": "0123456789abcdef")";
  EXPECT_NE(error_of(R"({"clients": [{"name": "a b", )" + ok_token + R"(, "scopes": ["admin"]}]})")
                .find("clients[0].name"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"clients": [{"name": "a", )" + ok_token + R"(, "scopes": ["root"]}]})")
                .find("unknown scope"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"clients": [{"name": "a", "token": "short", "scopes": ["admin"]}]})")
                .find("at least 16"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"clients": [{"name": "a", )" + ok_token +
                     R"(, "scopes": ["admin"]}, {"name": "b", )" + ok_token +
                     R"(, "scopes": ["admin"]}]})")
                .find("the same token"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"clients": [{"name": "a", )" + ok_token +
                     R"(, "scopes": ["admin"], "max_priority": 5000}]})")
                .find("max_priority"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"clients": [{"name": "a", "token_sha256": "abc", "scopes": ["admin"]}]})")
                .find("64 hexadecimal"),
            std::string::npos);
}

TEST(FairQueue, HigherPriorityFirstThenTheClientWithFewestRunning) {
  FairQueue q;
  std::map<std::string, std::size_t> running;
  std::set<std::string> dead;
  auto running_of = [&](const std::string& c) { return running[c]; };
  auto live = [&](const std::string& id) { return !dead.contains(id); };
  std::uint64_t seq = 0;
  for (int i = 0; i < 200; ++i) q.push({0, ++seq, "a" + std::to_string(i), "alice"});
  q.push({0, ++seq, "b0", "bob"});
  q.push({5, ++seq, "urgent", "alice"});
  EXPECT_EQ(q.size(), 202u);
  EXPECT_EQ(q.pop(running_of, live)->id, "urgent");
  running["alice"] = 1;  // one of Alice's runs: Bob's single job is next, whatever her queue
  EXPECT_EQ(q.pop(running_of, live)->id, "b0");
  running["bob"] = 1;
  // Both have one running: the least recently served goes first, each in arrival order.
  EXPECT_EQ(q.pop(running_of, live)->id, "a0");
  dead.insert("a1");  // cancelled while queued: dropped, never chosen
  EXPECT_EQ(q.pop(running_of, live)->id, "a2");
  EXPECT_EQ(q.size(), 197u);
}

TEST(FairQueue, RoundRobinAmongEqualClients) {
  FairQueue q;
  auto none = [](const std::string&) { return std::size_t{0}; };
  auto live = [](const std::string&) { return true; };
  std::uint64_t seq = 0;
  for (const char* c : {"a", "a", "a", "b", "c"}) q.push({0, ++seq, std::to_string(seq), c});
  std::string order;
  while (auto e = q.pop(none, live)) order += e->client;
  EXPECT_EQ(order, "abcaa");
  EXPECT_TRUE(q.empty());
}

TEST(JsonLimits, ValuesAreCountedOnTheTextBeforeParsing) {
  using kgym::service::json_shape;
  EXPECT_EQ(json_shape(R"({"a": [1, 2, {"b": "[,{"}]})", 64, 1000).elements, 5u);
  EXPECT_EQ(json_shape(R"({"a": [1, 2, {"b": "[,{"}]})", 64, 1000).depth, 3);
  std::string many = "[";
  for (int i = 0; i < 5000; ++i) many += "{},";
  many += "{}]";
  const auto shape = json_shape(many, 64, 1000);
  EXPECT_GT(shape.elements, 1000u);  // stopped once over the bound
  EXPECT_EQ(kgym::service::json_nesting_depth(std::string(100, '[')), 65);
}

}  // namespace
