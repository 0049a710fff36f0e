// Counters and histograms exposed at GET /metrics in the Prometheus text format.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace kgym::service {

class Metrics {
 public:
  static constexpr std::array<double, 12> kBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                                      2.5,  5,    10,  30,   60,  300};
  // Label sets per metric at most; further ones are counted under {overflow="true"}, so that
  // values that reach a label cannot grow the exposition without bound.
  static constexpr std::size_t kMaxSeries = 64;

  // `key="value"` with the value escaped as the text format requires (\, " and newlines).
  static std::string label(std::string_view key, std::string_view value);

  void count(const std::string& name, const std::string& labels = "", std::uint64_t n = 1);
  void observe(const std::string& name, const std::string& labels, double seconds);
  void set_gauge(const std::string& name, const std::string& labels, double value);
  // Appends everything, with HELP/TYPE lines from `help`.
  std::string render(const std::map<std::string, std::pair<std::string, std::string>>& help) const;

 private:
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> buckets{};
    std::uint64_t count = 0;
    double sum = 0;
  };
  template <typename Series>
  static std::string bounded(const Series& series, const std::string& labels);
  mutable std::mutex mu_;
  std::map<std::string, std::map<std::string, std::uint64_t>> counters_;
  std::map<std::string, std::map<std::string, double>> gauges_;
  std::map<std::string, std::map<std::string, Histogram>> histograms_;
};

}  // namespace kgym::service
