// The Prometheus exposition stays well-formed and bounded whatever reaches a label.
#include <gtest/gtest.h>

#include "kgym/service/metrics.hpp"

namespace {
using kgym::service::Metrics;

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(Metrics::label("phase", "a\"b\\c\nd"), "phase=\"a\\\"b\\\\c\\nd\"");
  Metrics m;
  m.count("kgym_x_total", Metrics::label("phase", "x\"} 1\nkgym_forged 9"));
  const auto text = m.render({});
  EXPECT_EQ(text.find("\nkgym_forged"), std::string::npos) << text;
}

TEST(Metrics, SeriesPerMetricAreBounded) {
  Metrics m;
  for (int i = 0; i < 1000; ++i) {
    m.count("kgym_y_total", Metrics::label("k", std::to_string(i)));
    m.observe("kgym_h_seconds", Metrics::label("k", std::to_string(i)), 0.1);
  }
  const auto text = m.render({});
  std::size_t lines = 0;
  for (const char c : text) lines += c == '\n';
  // 64 series and the overflow one per metric, a histogram series being 15 lines.
  EXPECT_LE(lines, 2 + (Metrics::kMaxSeries + 1) * (1 + 15));
  EXPECT_NE(text.find("kgym_y_total{overflow=\"true\"} 936"), std::string::npos);
}

}  // namespace
