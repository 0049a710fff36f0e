// Bindings of the RL core: kgym._core.rl (returns, advantages, rejection sampling, mismatch
// correction) and kgym._core.reward (reward specs, rewards, difflib-exact similarity).
// Arrays come in as NumPy arrays of the exact dtype (kgym.rl / kgym.rewards convert and validate
// shapes first) and go out as NumPy arrays that own C++ buffers: no copies either way.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "kgym/reward/reward.hpp"
#include "kgym/reward/spec.hpp"
#include "kgym/rl/advantages.hpp"
#include "kgym/rl/rejection.hpp"
#include "kgym/text/similarity.hpp"

namespace nb = nanobind;

namespace kgym::bindings {

namespace {

template <typename T>
using In1 = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <typename T>
using Out1 = nb::ndarray<nb::numpy, T, nb::ndim<1>>;
template <typename T>
using Out2 = nb::ndarray<nb::numpy, T, nb::ndim<2>>;

// A fresh C++ buffer handed to NumPy (freed when the array dies).
template <typename T>
struct Buffer {
  T* data = nullptr;
  std::size_t size = 0;
  nb::capsule owner;

  explicit Buffer(std::size_t n) : data(new T[n > 0 ? n : 1]()), size(n) {
    owner = nb::capsule(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  }
  template <typename U = T>
  std::span<U> span() {
    static_assert(sizeof(U) == sizeof(T));
    return {reinterpret_cast<U*>(data), size};
  }
  Out1<T> array() { return Out1<T>(data, {size}, owner); }
};

template <typename T>
std::span<const T> view(const In1<T>& a) {
  return {a.data(), a.shape(0)};
}
template <typename T>
std::span<const T> view(const std::optional<In1<T>>& a) {
  return a ? view(*a) : std::span<const T>{};
}
std::span<const std::uint8_t> bool_view(const std::optional<In1<bool>>& a) {
  if (!a) return {};
  return {reinterpret_cast<const std::uint8_t*>(a->data()), a->shape(0)};
}

// ------------------------------------------------------------------------------------------------
// Python str -> code points, straight from CPython's storage (no UTF-8 round trip).

void str_to_code_points(nb::handle h, std::u32string& out, const char* what) {
  PyObject* o = h.ptr();
  if (!PyUnicode_Check(o)) {
    throw nb::type_error(
        fmt::format("{} must be a str, got {}", what, Py_TYPE(o)->tp_name).c_str());
  }
  const Py_ssize_t n = PyUnicode_GET_LENGTH(o);
  const int kind = PyUnicode_KIND(o);
  const void* data = PyUnicode_DATA(o);
  out.resize(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<char32_t>(PyUnicode_READ(kind, data, i));
  }
}

std::span<const std::uint32_t> symbols(const std::u32string& s) {
  return {reinterpret_cast<const std::uint32_t*>(s.data()), s.size()};
}

// ------------------------------------------------------------------------------------------------
// kgym._core.rl

nb::tuple advantages(const In1<double>& rewards, const In1<std::int64_t>& group_ids,
                     const std::optional<In1<std::int64_t>>& traj_ids,
                     const std::optional<In1<std::int64_t>>& turn_ids,
                     const std::optional<In1<bool>>& valid, std::string_view estimator,
                     double gamma, double eps, bool unbiased_std, bool group_by_turn) {
  rl::AdvantageOptions opt;
  const auto est = rl::parse_estimator(estimator);
  if (!est) {
    throw std::invalid_argument(fmt::format(
        "unknown estimator '{}' (expected one of: grpo, dr_grpo, rloo, trloo)", estimator));
  }
  opt.estimator = *est;
  opt.gamma = gamma;
  opt.eps = eps;
  opt.unbiased_std = unbiased_std;
  opt.group_by_turn = group_by_turn;
  const std::size_t n = rewards.shape(0);
  Buffer<double> adv(n);
  Buffer<double> ret(n);
  Buffer<std::int64_t> count(n);
  rl::compute_advantages(
      rl::Batch{view(rewards), view(group_ids), view(traj_ids), view(turn_ids), bool_view(valid)},
      opt, rl::AdvantageOutputs{adv.span(), ret.span(), count.span()});
  return nb::make_tuple(adv.array(), ret.array(), count.array());
}

Out1<double> turn_returns(const In1<double>& rewards, const In1<std::int64_t>& traj_ids,
                          const In1<std::int64_t>& turn_ids, double gamma) {
  std::vector<double> g = rl::turn_returns(view(rewards), view(traj_ids), view(turn_ids), gamma);
  Buffer<double> out(g.size());
  std::copy(g.begin(), g.end(), out.data);
  return out.array();
}

nb::tuple prs(const In1<bool>& correct, const In1<double>& pr,
              const std::optional<In1<std::uint64_t>>& keys, double tau, double s,
              std::uint64_t seed, std::string_view missing) {
  rl::PrsOptions opt;
  opt.tau = tau;
  opt.s = s;
  opt.seed = seed;
  const auto m = rl::parse_missing_pr(missing);
  if (!m) {
    throw std::invalid_argument(
        fmt::format("unknown missing-PR policy '{}' (expected keep, drop or error)", missing));
  }
  opt.missing = *m;
  const std::size_t n = correct.shape(0);
  Buffer<bool> keep(n);
  Buffer<double> prob(n);
  rl::prs_sample({reinterpret_cast<const std::uint8_t*>(correct.data()), n}, view(pr), view(keys),
                 opt, keep.span<std::uint8_t>(), prob.span());
  return nb::make_tuple(keep.array(), prob.array());
}

template <typename T>
rl::TokenLogProbs<T> tokens(const In1<T>& train, const In1<T>& rollout,
                            const In1<std::int64_t>& offsets,
                            const std::optional<In1<bool>>& mask) {
  return rl::TokenLogProbs<T>{view(train), view(rollout), view(offsets), bool_view(mask)};
}

std::size_t sequences(const In1<std::int64_t>& offsets) {
  if (offsets.shape(0) == 0) throw std::invalid_argument("offsets must hold B + 1 entries");
  return offsets.shape(0) - 1;
}

template <typename T>
void bind_token_functions(nb::module_& m) {
  m.def(
      "geometric_rejection",
      [](const In1<T>& train, const In1<T>& rollout, const In1<std::int64_t>& offsets,
         const std::optional<In1<bool>>& mask, double lo, double hi, double veto) {
        const std::size_t b = sequences(offsets);
        Buffer<bool> keep(b);
        Buffer<double> geo(b);
        Buffer<bool> vetoed(b);
        {
          nb::gil_scoped_release release;
          rl::geometric_rejection(tokens(train, rollout, offsets, mask),
                                  rl::GeometricOptions{lo, hi, veto}, keep.span<std::uint8_t>(),
                                  geo.span(), vetoed.span<std::uint8_t>());
        }
        return nb::make_tuple(keep.array(), geo.array(), vetoed.array());
      },
      nb::arg("logp_train"), nb::arg("logp_rollout"), nb::arg("offsets"), nb::arg("mask").none(),
      nb::arg("lo"), nb::arg("hi"), nb::arg("veto"));
  m.def(
      "token_tis",
      [](const In1<T>& train, const In1<T>& rollout, const In1<std::int64_t>& offsets,
         const std::optional<In1<bool>>& mask, double cap) {
        Buffer<double> w(train.shape(0));
        {
          nb::gil_scoped_release release;
          rl::token_tis_weights(tokens(train, rollout, offsets, mask), cap, w.span());
        }
        return w.array();
      },
      nb::arg("logp_train"), nb::arg("logp_rollout"), nb::arg("offsets"), nb::arg("mask").none(),
      nb::arg("cap"));
  m.def(
      "token_mis",
      [](const In1<T>& train, const In1<T>& rollout, const In1<std::int64_t>& offsets,
         const std::optional<In1<bool>>& mask, double lo, double hi) {
        Buffer<bool> out(train.shape(0));
        {
          nb::gil_scoped_release release;
          rl::token_mis_mask(tokens(train, rollout, offsets, mask), lo, hi,
                             out.span<std::uint8_t>());
        }
        return out.array();
      },
      nb::arg("logp_train"), nb::arg("logp_rollout"), nb::arg("offsets"), nb::arg("mask").none(),
      nb::arg("lo"), nb::arg("hi"));
  m.def(
      "sequence_mis",
      [](const In1<T>& train, const In1<T>& rollout, const In1<std::int64_t>& offsets,
         const std::optional<In1<bool>>& mask, double lo, double hi) {
        const std::size_t b = sequences(offsets);
        Buffer<bool> keep(b);
        Buffer<double> log_ratio(b);
        {
          nb::gil_scoped_release release;
          rl::sequence_mis_mask(tokens(train, rollout, offsets, mask), lo, hi,
                                keep.span<std::uint8_t>(), log_ratio.span());
        }
        return nb::make_tuple(keep.array(), log_ratio.array());
      },
      nb::arg("logp_train"), nb::arg("logp_rollout"), nb::arg("offsets"), nb::arg("mask").none(),
      nb::arg("lo"), nb::arg("hi"));
}

// ------------------------------------------------------------------------------------------------
// kgym._core.reward

nb::dict breakdown_dict(const reward::RewardBreakdown& b) {
  nb::dict d;
  d["total"] = b.total;
  d["valid"] = b.valid;
  d["reason"] = b.reason;
  nb::dict terms;
  for (const auto& [k, v] : b.terms) terms[k.c_str()] = v;
  nb::dict metrics;
  for (const auto& [k, v] : b.metrics) metrics[k.c_str()] = v;
  d["terms"] = terms;
  d["metrics"] = metrics;
  return d;
}

struct PyRewardSpec {
  reward::RewardSpec spec;

  static PyRewardSpec from_json(std::string_view text) {
    return PyRewardSpec{reward::parse_reward_spec(text)};
  }

  reward::RewardBreakdown run(const std::optional<std::string>& result_json,
                              const std::optional<std::string>& completion,
                              const std::optional<std::string>& reference) const {
    nlohmann::json result;
    reward::RewardInput in;
    if (result_json) {
      try {
        result = nlohmann::json::parse(*result_json);
      } catch (const nlohmann::json::parse_error& e) {
        throw reward::InputError(fmt::format("result: not valid JSON: {}", e.what()));
      }
      in.result = &result;
    }
    if (completion) in.completion = *completion;
    if (reference) in.reference = *reference;
    return reward::compute_reward(spec, in);
  }
};

template <typename T>
const T* item(const std::optional<std::vector<T>>& xs, std::size_t i) {
  return xs ? &(*xs)[i] : nullptr;
}

nb::tuple compute_batch(const PyRewardSpec& self,
                        const std::optional<std::vector<std::optional<std::string>>>& results,
                        const std::optional<std::vector<std::optional<std::string>>>& completions,
                        const std::optional<std::vector<std::optional<std::string>>>& references) {
  std::size_t n = 0;
  bool sized = false;
  for (const auto* xs : {&results, &completions, &references}) {
    if (!*xs) continue;
    if (sized && (*xs)->size() != n) {
      throw std::invalid_argument(
          fmt::format("results, completions and references must have the same length ({} vs {})", n,
                      (*xs)->size()));
    }
    n = (*xs)->size();
    sized = true;
  }
  if (!sized) throw std::invalid_argument("give at least one of results, completions, references");
  std::vector<reward::RewardBreakdown> rows(n);
  {
    nb::gil_scoped_release release;
    for (std::size_t i = 0; i < n; ++i) {
      const auto* r = item(results, i);
      const auto* c = item(completions, i);
      const auto* f = item(references, i);
      try {
        rows[i] = self.run(r ? *r : std::nullopt, c ? *c : std::nullopt, f ? *f : std::nullopt);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("sample {}: {}", i, e.what()));
      }
    }
  }
  Buffer<double> totals(n);
  Buffer<bool> valid(n);
  std::vector<std::string> term_names;
  std::vector<std::string> metric_names;
  std::size_t nt = 0;
  std::size_t nm = 0;
  if (n > 0) {
    for (const auto& [k, v] : rows[0].terms) term_names.push_back(k);
    for (const auto& [k, v] : rows[0].metrics) metric_names.push_back(k);
    nt = term_names.size();
    nm = metric_names.size();
  }
  Buffer<double> terms(n * nt);
  Buffer<double> metrics(n * nm);
  for (std::size_t i = 0; i < n; ++i) {
    totals.data[i] = rows[i].total;
    valid.data[i] = rows[i].valid;
    for (std::size_t k = 0; k < nt; ++k) terms.data[i * nt + k] = rows[i].terms[k].second;
    for (std::size_t k = 0; k < nm; ++k) metrics.data[i * nm + k] = rows[i].metrics[k].second;
  }
  Out2<double> term_arr(terms.data, {n, nt}, terms.owner);
  Out2<double> metric_arr(metrics.data, {n, nm}, metrics.owner);
  return nb::make_tuple(totals.array(), valid.array(), term_names, term_arr, metric_names,
                        metric_arr);
}

double similarity_ratio(nb::handle a, nb::handle b, bool autojunk) {
  thread_local std::u32string a32;
  thread_local std::u32string b32;
  str_to_code_points(a, a32, "a");
  str_to_code_points(b, b32, "b");
  nb::gil_scoped_release release;
  return text::sequence_ratio(a32, b32, autojunk);
}

Out1<double> similarity_ratio_many(nb::sequence as, nb::handle b, bool autojunk) {
  std::u32string b32;
  str_to_code_points(b, b32, "b");
  std::vector<std::u32string> items;
  for (nb::handle h : as) {
    items.emplace_back();
    str_to_code_points(h, items.back(), "each element of a");
  }
  Buffer<double> out(items.size());
  {
    nb::gil_scoped_release release;
    text::SequenceMatcher m;
    m.set_b(symbols(b32), autojunk);
    for (std::size_t i = 0; i < items.size(); ++i) out.data[i] = m.ratio(symbols(items[i]));
  }
  return out.array();
}

Out1<double> similarity_ratio_pairs(nb::sequence as, nb::sequence bs, bool autojunk) {
  const std::size_t na = nb::len(as);
  const std::size_t nbs = nb::len(bs);
  if (na != nbs) {
    throw std::invalid_argument(fmt::format("a has {} strings but b has {}", na, nbs));
  }
  std::vector<std::u32string> a32(na);
  std::vector<std::u32string> b32(na);
  for (std::size_t i = 0; i < na; ++i) {
    str_to_code_points(as[i], a32[i], "each element of a");
    str_to_code_points(bs[i], b32[i], "each element of b");
  }
  Buffer<double> out(na);
  {
    nb::gil_scoped_release release;
    text::SequenceMatcher m;
    for (std::size_t i = 0; i < na; ++i) {
      m.set_b(symbols(b32[i]), autojunk);
      out.data[i] = m.ratio(symbols(a32[i]));
    }
  }
  return out.array();
}

std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> matching_blocks(nb::handle a,
                                                                               nb::handle b,
                                                                               bool autojunk) {
  std::u32string a32;
  std::u32string b32;
  str_to_code_points(a, a32, "a");
  str_to_code_points(b, b32, "b");
  std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> out;
  for (const auto& m : text::matching_blocks(a32, b32, autojunk))
    out.emplace_back(m.a, m.b, m.size);
  return out;
}

}  // namespace

void bind_rl(nb::module_& root) {
  // Both submodules raise ValueError (std::invalid_argument and its subclasses) on bad input.
  nb::module_ m = root.def_submodule("rl", "Returns, advantages, rejection sampling, mismatch");

  m.def("advantages", &advantages, nb::arg("rewards"), nb::arg("group_ids"),
        nb::arg("traj_ids").none(), nb::arg("turn_ids").none(), nb::arg("valid").none(),
        nb::arg("estimator"), nb::arg("gamma"), nb::arg("eps"), nb::arg("unbiased_std"),
        nb::arg("group_by_turn"),
        "(advantages, returns, n_valid) of a flat batch; see kgym.rl.advantages.");
  m.def("turn_returns", &turn_returns, nb::arg("rewards"), nb::arg("traj_ids"), nb::arg("turn_ids"),
        nb::arg("gamma"));
  m.def("prs", &prs, nb::arg("correct"), nb::arg("pr"), nb::arg("keys").none(), nb::arg("tau"),
        nb::arg("s"), nb::arg("seed"), nb::arg("missing"),
        "(keep, probability) of profiling-based rejection sampling.");
  m.def("uniform01", &rl::uniform01, nb::arg("seed"), nb::arg("key"),
        "The counter-based uniform draw in [0, 1) that PRS compares with its keep probability.");
  bind_token_functions<double>(m);
  bind_token_functions<float>(m);

  nb::module_ r = root.def_submodule("reward", "Reward specs, rewards and text similarity");
  nb::class_<PyRewardSpec>(r, "RewardSpec")
      .def_static("from_json", &PyRewardSpec::from_json, nb::arg("text"),
                  "Parse and validate a reward spec given as JSON text.")
      .def("to_json", [](const PyRewardSpec& s) { return reward::to_json(s.spec).dump(); })
      .def_prop_ro("kind", [](const PyRewardSpec& s) { return s.spec.kind(); })
      .def(
          "compute",
          [](const PyRewardSpec& s, const std::optional<std::string>& result,
             const std::optional<std::string>& completion,
             const std::optional<std::string>& reference) {
            return breakdown_dict(s.run(result, completion, reference));
          },
          nb::arg("result").none(), nb::arg("completion").none(), nb::arg("reference").none())
      .def("compute_batch", &compute_batch, nb::arg("results").none(),
           nb::arg("completions").none(), nb::arg("references").none());

  r.def("similarity_ratio", &similarity_ratio, nb::arg("a"), nb::arg("b"),
        nb::arg("autojunk") = false,
        "difflib.SequenceMatcher(None, a, b, autojunk=autojunk).ratio(), exactly.");
  r.def("similarity_ratio_many", &similarity_ratio_many, nb::arg("a"), nb::arg("b"),
        nb::arg("autojunk") = false, "The ratio of each string of a against the one string b.");
  r.def("similarity_ratio_pairs", &similarity_ratio_pairs, nb::arg("a"), nb::arg("b"),
        nb::arg("autojunk") = false, "The ratio of each pair (a[i], b[i]).");
  r.def(
      "similarity_ratio_lines",
      [](const std::vector<std::string>& a, const std::vector<std::string>& b, bool autojunk) {
        return text::sequence_ratio_lines(a, b, autojunk);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("autojunk") = false,
      "The ratio of two sequences of lines (each line one element).");
  r.def("matching_blocks", &matching_blocks, nb::arg("a"), nb::arg("b"),
        nb::arg("autojunk") = false, "difflib's get_matching_blocks() as (a, b, size) tuples.");
  r.def(
      "kernel_coder_format",
      [](std::string_view completion, bool prepend_think, const std::string& eos_token,
         bool require_answer_tag, double partial_format) {
        reward::KernelCoderSpec spec;
        spec.prepend_think = prepend_think;
        spec.eos_token = eos_token;
        spec.require_answer_tag = require_answer_tag;
        spec.partial_format = partial_format;
        const reward::FormatCheck f = reward::kernel_coder_format(completion, spec);
        return nb::make_tuple(f.score, f.think_ok, f.code);
      },
      nb::arg("completion"), nb::arg("prepend_think") = true, nb::arg("eos_token") = "",
      nb::arg("require_answer_tag") = false, nb::arg("partial_format") = 0.5,
      "(score, think_ok, code or None) of Kernel Coder's format check.");
}

}  // namespace kgym::bindings
