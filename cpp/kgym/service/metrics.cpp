#include "kgym/service/metrics.hpp"

#include <fmt/format.h>

namespace kgym::service {

std::string Metrics::label(std::string_view key, std::string_view value) {
  std::string out(key);
  out += "=\"";
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

template <typename Series>
std::string Metrics::bounded(const Series& series, const std::string& labels) {
  if (series.contains(labels) || series.size() < kMaxSeries) return labels;
  return "overflow=\"true\"";
}

void Metrics::count(const std::string& name, const std::string& labels, std::uint64_t n) {
  std::lock_guard lock(mu_);
  auto& series = counters_[name];
  series[bounded(series, labels)] += n;
}

void Metrics::observe(const std::string& name, const std::string& labels, double seconds) {
  std::lock_guard lock(mu_);
  auto& series = histograms_[name];
  auto& h = series[bounded(series, labels)];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

void Metrics::set_gauge(const std::string& name, const std::string& labels, double value) {
  std::lock_guard lock(mu_);
  auto& series = gauges_[name];
  series[bounded(series, labels)] = value;
}

namespace {
std::string with_label(const std::string& labels, const std::string& extra) {
  if (labels.empty()) return "{" + extra + "}";
  return "{" + labels + "," + extra + "}";
}
std::string braced(const std::string& labels) { return labels.empty() ? "" : "{" + labels + "}"; }
}  // namespace

std::string Metrics::render(
    const std::map<std::string, std::pair<std::string, std::string>>& help) const {
  std::lock_guard lock(mu_);
  std::string out;
  auto header = [&](const std::string& name, const char* type) {
    const auto it = help.find(name);
    if (it != help.end()) out += fmt::format("# HELP {} {}\n", name, it->second.first);
    out += fmt::format("# TYPE {} {}\n", name, type);
  };
  for (const auto& [name, series] : counters_) {
    header(name, "counter");
    for (const auto& [labels, v] : series) out += fmt::format("{}{} {}\n", name, braced(labels), v);
  }
  for (const auto& [name, series] : gauges_) {
    header(name, "gauge");
    for (const auto& [labels, v] : series) out += fmt::format("{}{} {}\n", name, braced(labels), v);
  }
  for (const auto& [name, series] : histograms_) {
    header(name, "histogram");
    for (const auto& [labels, h] : series) {
      for (std::size_t i = 0; i < kBuckets.size(); ++i) {
        out += fmt::format("{}_bucket{} {}\n", name,
                           with_label(labels, fmt::format("le=\"{}\"", kBuckets[i])), h.buckets[i]);
      }
      out += fmt::format("{}_bucket{} {}\n", name, with_label(labels, "le=\"+Inf\""), h.count);
      out += fmt::format("{}_sum{} {}\n", name, braced(labels), h.sum);
      out += fmt::format("{}_count{} {}\n", name, braced(labels), h.count);
    }
  }
  return out;
}

}  // namespace kgym::service
