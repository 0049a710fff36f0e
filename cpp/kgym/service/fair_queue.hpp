// The service's queue: higher priority first; within a priority, a fair share across clients.
// The next job is the oldest of the client with the fewest jobs running, ties going to the
// client served least recently, so that one client's 200 queued jobs hold another's single
// job back by no more than the time until a worker is free.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace kgym::service {

class FairQueue {
 public:
  struct Entry {
    int priority = 0;
    std::uint64_t seq = 0;  // arrival order: each client's jobs run in it
    std::string id;
    std::string client;
  };

  void push(Entry entry);
  // The next entry under the policy above, removed; nullopt when empty. `running(client)` says
  // how many of that client's jobs run now; entries for which `live(id)` is false (cancelled,
  // finished meanwhile) are dropped on the way and never chosen.
  std::optional<Entry> pop(const std::function<std::size_t(const std::string&)>& running,
                           const std::function<bool(const std::string&)>& live);
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct ClientQueue {
    std::map<std::uint64_t, Entry> by_seq;  // a re-queued job keeps its place
  };
  // priority (highest first) -> client -> its entries
  std::map<int, std::map<std::string, ClientQueue>, std::greater<>> levels_;
  std::map<std::string, std::uint64_t> last_served_;  // client -> pop counter when last served
  std::uint64_t pops_ = 0;
  std::size_t size_ = 0;
};

}  // namespace kgym::service
