#include "kgym/service/fair_queue.hpp"

#include <tuple>

namespace kgym::service {

void FairQueue::push(Entry entry) {
  auto& queue = levels_[entry.priority][entry.client];
  const auto seq = entry.seq;
  if (queue.by_seq.try_emplace(seq, std::move(entry)).second) ++size_;
}

std::optional<FairQueue::Entry> FairQueue::pop(
    const std::function<std::size_t(const std::string&)>& running,
    const std::function<bool(const std::string&)>& live) {
  while (!levels_.empty()) {
    auto level = levels_.begin();
    auto& clients = level->second;
    // Drop what is no longer live from the head of each client's queue first.
    for (auto it = clients.begin(); it != clients.end();) {
      auto& by_seq = it->second.by_seq;
      while (!by_seq.empty() && !live(by_seq.begin()->second.id)) {
        by_seq.erase(by_seq.begin());
        --size_;
      }
      it = by_seq.empty() ? clients.erase(it) : std::next(it);
    }
    if (clients.empty()) {
      levels_.erase(level);
      continue;
    }
    auto best = clients.end();
    std::tuple<std::size_t, std::uint64_t, std::uint64_t> best_key{};
    for (auto it = clients.begin(); it != clients.end(); ++it) {
      const auto served = last_served_.find(it->first);
      const std::tuple<std::size_t, std::uint64_t, std::uint64_t> key{
          running(it->first), served == last_served_.end() ? 0 : served->second,
          it->second.by_seq.begin()->first};
      if (best == clients.end() || key < best_key) {
        best = it;
        best_key = key;
      }
    }
    auto& by_seq = best->second.by_seq;
    Entry entry = std::move(by_seq.begin()->second);
    by_seq.erase(by_seq.begin());
    --size_;
    last_served_[best->first] = ++pops_;
    if (by_seq.empty()) clients.erase(best);
    if (clients.empty()) levels_.erase(level);
    return entry;
  }
  return std::nullopt;
}

}  // namespace kgym::service
