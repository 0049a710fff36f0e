// Single-threaded throughput of kgym::screen::screen_candidate on realistic candidates: the
// built-in solutions plus mutated variants (renamed identifiers, docstrings and comments, extra
// helper kernels and autotune configs) sized like real completions (about 1-8 KB).
// Prints one JSON object.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kgym/screen/screen.hpp"

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

const char* kDoc =
    "\"\"\"Triton implementation of the task.\n\nThe forward pass launches fused kernels; block "
    "sizes are chosen per device.\nShapes are read from the inputs, strides are passed "
    "explicitly.\n\"\"\"\n# ------------------------------------------------------------------\n"
    "# Notes: inputs are made contiguous; outputs are allocated with torch.empty.\n"
    "# ------------------------------------------------------------------\n";

const char* kHelper = R"(

@triton.jit
def _aux_copy_kernel_N(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    # An auxiliary copy kernel (layout change before the main kernel).
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    values = tl.load(src_ptr + offsets, mask=mask, other=0.0)
    tl.store(dst_ptr + offsets, values, mask=mask)


def _grid_N(n_elements: int, block: int) -> tuple:
    return (triton.cdiv(n_elements, block),)
)";

const char* kAutotune = R"(
@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SZ": 256}, num_warps=2),
        triton.Config({"BLOCK_SZ": 512}, num_warps=4),
        triton.Config({"BLOCK_SZ": 1024}, num_warps=8),
    ],
    key=["n"],
)
@triton.jit
def _tuned_scale_kernel(x_ptr, y_ptr, n, BLOCK_SZ: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SZ + tl.arange(0, BLOCK_SZ)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 1.0, mask=m)
)";

std::vector<std::string> corpus(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".py") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (const auto& f : files) {
    const std::string src = read(f);
    out.push_back(src);
    out.push_back(replace_all(replace_all(src, "BLOCK", "TILE_SIZE"), "_ptr", "_pointer"));
    std::string with_doc = kDoc + src;
    out.push_back(with_doc);
    for (const std::size_t target : {3000u, 6000u}) {
      std::string big = with_doc;
      const auto at = big.find("\n\nclass ModelNew");
      std::string extra = kAutotune;
      for (int i = 0; big.size() + extra.size() < target; ++i) {
        extra += replace_all(kHelper, "_N", "_" + std::to_string(i));
      }
      big.insert(at == std::string::npos ? big.size() : at, extra);
      out.push_back(big);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? argv[1] : "tasks/solutions";
  const double seconds = argc > 2 ? std::stod(argv[2]) : 2.0;
  const auto sources = corpus(dir);
  std::size_t bytes = 0, rejects = 0, min_b = SIZE_MAX, max_b = 0;
  for (const auto& s : sources) {
    bytes += s.size();
    min_b = std::min(min_b, s.size());
    max_b = std::max(max_b, s.size());
    if (kgym::screen::has_reject(kgym::screen::screen_candidate(s))) ++rejects;
  }
  using clock = std::chrono::steady_clock;
  std::size_t sink = 0;
  // Median of 5 timed repetitions over `set`, in candidates per second.
  auto measure = [&](const std::vector<const std::string*>& set, double budget) {
    std::vector<double> rates;
    for (int rep = 0; rep < 5; ++rep) {
      std::size_t n = 0;
      const auto t0 = clock::now();
      double elapsed = 0;
      while (elapsed < budget / 5) {
        for (const auto* s : set) sink += kgym::screen::screen_candidate(*s).size();
        n += set.size();
        elapsed = std::chrono::duration<double>(clock::now() - t0).count();
      }
      rates.push_back(static_cast<double>(n) / elapsed);
    }
    std::sort(rates.begin(), rates.end());
    return rates;
  };
  std::vector<const std::string*> all, small, large;
  std::size_t large_bytes = 0;
  for (const auto& s : sources) {
    all.push_back(&s);
    if (s.size() >= 3000) {
      large.push_back(&s);
      large_bytes += s.size();
    } else {
      small.push_back(&s);
    }
  }
  measure(all, 0.5);  // warm-up: caches, allocator, CPU clock
  const auto r_all = measure(all, seconds);
  const auto r_large = measure(large, seconds);
  const auto r_small = measure(small, seconds);
  const double median = r_all[2];
  std::printf(
      "{\"sources\": %zu, \"mean_bytes\": %.0f, \"min_bytes\": %zu, \"max_bytes\": %zu, "
      "\"rejected\": %zu, \"candidates_per_s\": %.0f, \"min_rate\": %.0f, \"max_rate\": %.0f, "
      "\"us_per_candidate\": %.2f, \"mb_per_s\": %.1f, \"large_sources\": %zu, "
      "\"large_mean_bytes\": %.0f, \"large_candidates_per_s\": %.0f, \"small_sources\": %zu, "
      "\"small_candidates_per_s\": %.0f, \"sink\": %zu}\n",
      sources.size(), static_cast<double>(bytes) / static_cast<double>(sources.size()), min_b,
      max_b, rejects, median, r_all.front(), r_all.back(), 1e6 / median,
      median * static_cast<double>(bytes) / static_cast<double>(sources.size()) / 1e6, large.size(),
      static_cast<double>(large_bytes) / static_cast<double>(large.size()), r_large[2],
      small.size(), r_small[2], sink);
  return 0;
}
