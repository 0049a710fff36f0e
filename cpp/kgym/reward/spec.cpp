#include "kgym/reward/spec.hpp"

#include <cmath>
#include <set>
#include <string_view>

#include <fmt/format.h>

namespace kgym::reward {

namespace {

using nlohmann::json;

[[noreturn]] void spec_fail(const std::string& path, const std::string& message) {
  if (path.empty()) throw SpecError(fmt::format("reward spec: {}", message));
  throw SpecError(fmt::format("reward spec: {}: {}", path, message));
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) {
    if (!out.empty()) out += ", ";
    out += x;
  }
  return out;
}

std::string sub(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

// Reads the keys of one JSON object, checking types and rejecting keys it was not asked about.
class ObjectReader {
 public:
  ObjectReader(const json& obj, std::string path, std::vector<std::string> allowed)
      : obj_(obj), path_(std::move(path)), allowed_(std::move(allowed)) {
    if (!obj_.is_object()) {
      spec_fail(path_, fmt::format("expected an object, got {}", obj_.type_name()));
    }
    for (const auto& [key, value] : obj_.items()) {
      bool known = false;
      for (const auto& a : allowed_) known = known || a == key;
      if (!known) {
        spec_fail(sub(path_, key), fmt::format("unknown key (allowed: {})", join(allowed_)));
      }
    }
  }

  const json* find(std::string_view key) const {
    const auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }

  double number(std::string_view key, double fallback, double lo, double hi) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_number() || v->is_boolean()) {
      spec_fail(sub(path_, key), fmt::format("expected a number, got {}", v->type_name()));
    }
    const double x = v->get<double>();
    if (!std::isfinite(x)) spec_fail(sub(path_, key), "must be finite");
    if (x < lo || x > hi) {
      spec_fail(sub(path_, key), fmt::format("{} is out of range [{}, {}]", x, lo, hi));
    }
    return x;
  }

  bool boolean(std::string_view key, bool fallback) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) {
      spec_fail(sub(path_, key), fmt::format("expected true or false, got {}", v->type_name()));
    }
    return v->get<bool>();
  }

  std::string string(std::string_view key, std::string fallback) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) {
      spec_fail(sub(path_, key), fmt::format("expected a string, got {}", v->type_name()));
    }
    return v->get<std::string>();
  }

  std::string choice(std::string_view key, std::string fallback,
                     const std::vector<std::string>& choices) const {
    std::string s = string(key, std::move(fallback));
    for (const auto& c : choices) {
      if (c == s) return s;
    }
    spec_fail(sub(path_, key), fmt::format("'{}' is not one of: {}", s, join(choices)));
  }

  const std::string& path() const { return path_; }

 private:
  const json& obj_;
  std::string path_;
  std::vector<std::string> allowed_;
};

constexpr double kInf = 1e300;

MissingPolicy parse_missing(const ObjectReader& r, std::string_view key) {
  const json* v = r.find(key);
  MissingPolicy p;
  if (v == nullptr) return p;
  if (v->is_string()) {
    const auto s = v->get<std::string>();
    if (s == "zero") return p;
    if (s == "error") {
      p.kind = MissingPolicy::Kind::kError;
      return p;
    }
    spec_fail(sub(r.path(), key), fmt::format("'{}' is not one of: zero, error, or a number", s));
  }
  if (v->is_number() && !v->is_boolean()) {
    p.kind = MissingPolicy::Kind::kAssume;
    p.value = r.number(key, 0.0, 0.0, kInf);
    return p;
  }
  spec_fail(sub(r.path(), key),
            fmt::format("expected \"zero\", \"error\" or a number, got {}", v->type_name()));
}

json missing_to_json(const MissingPolicy& p) {
  switch (p.kind) {
    case MissingPolicy::Kind::kZero:
      return "zero";
    case MissingPolicy::Kind::kError:
      return "error";
    case MissingPolicy::Kind::kAssume:
      return p.value;
  }
  return "zero";
}

void check_assumed_speedup(const MissingPolicy& p, const std::string& path) {
  if (p.kind == MissingPolicy::Kind::kAssume && p.value <= 0.0) {
    spec_fail(sub(path, "missing_speedup"), "an assumed speedup must be > 0");
  }
}

Penalties parse_penalties(const ObjectReader& r) {
  Penalties p;
  const json* v = r.find("penalties");
  if (v == nullptr) return p;
  const ObjectReader pr(*v, sub(r.path(), "penalties"), {"hacked", "warning"});
  p.hacked = pr.number("hacked", 0.0, 0.0, kInf);
  p.warning = pr.number("warning", 0.0, 0.0, kInf);
  return p;
}

SpeedupSource parse_source(const ObjectReader& r) {
  return r.choice("speedup_source", "eager", {"eager", "compile"}) == "eager"
             ? SpeedupSource::kEager
             : SpeedupSource::kCompile;
}

RewardSpec parse_at(const json& j, const std::string& path);

DrKernelSpec parse_dr_kernel(const json& j, const std::string& path) {
  const ObjectReader r(j, path,
                       {"kind", "weights", "cap", "speedup_source", "missing_speedup",
                        "missing_profile", "penalties"});
  DrKernelSpec s;
  if (const json* w = r.find("weights")) {
    const ObjectReader wr(*w, sub(path, "weights"), {"correct", "speedup", "profile"});
    s.w_correct = wr.number("correct", s.w_correct, -kInf, kInf);
    s.w_speedup = wr.number("speedup", s.w_speedup, -kInf, kInf);
    s.w_profile = wr.number("profile", s.w_profile, -kInf, kInf);
  }
  s.cap = r.number("cap", s.cap, 0.0, kInf);
  if (s.cap <= 0.0) spec_fail(sub(path, "cap"), "must be > 0");
  s.source = parse_source(r);
  s.missing_speedup = parse_missing(r, "missing_speedup");
  check_assumed_speedup(s.missing_speedup, path);
  s.missing_profile = parse_missing(r, "missing_profile");
  if (s.missing_profile.kind == MissingPolicy::Kind::kAssume && s.missing_profile.value > 1.0) {
    spec_fail(sub(path, "missing_profile"), "an assumed PR must lie in [0, 1]");
  }
  s.penalties = parse_penalties(r);
  return s;
}

StagedSpec parse_staged(const json& j, const std::string& path) {
  const ObjectReader r(j, path,
                       {"kind", "weights", "cap", "speedup_transform", "speedup_source",
                        "missing_speedup", "penalties"});
  StagedSpec s;
  if (const json* w = r.find("weights")) {
    const ObjectReader wr(*w, sub(path, "weights"), {"compile", "correct", "speedup"});
    s.w_compile = wr.number("compile", s.w_compile, -kInf, kInf);
    s.w_correct = wr.number("correct", s.w_correct, -kInf, kInf);
    s.w_speedup = wr.number("speedup", s.w_speedup, -kInf, kInf);
  }
  s.cap = r.number("cap", s.cap, 0.0, kInf);
  if (s.cap <= 0.0) spec_fail(sub(path, "cap"), "must be > 0");
  s.transform = r.choice("speedup_transform", "linear", {"linear", "log2"}) == "linear"
                    ? SpeedupTransform::kLinear
                    : SpeedupTransform::kLog2;
  s.source = parse_source(r);
  s.missing_speedup = parse_missing(r, "missing_speedup");
  check_assumed_speedup(s.missing_speedup, path);
  s.penalties = parse_penalties(r);
  return s;
}

KernelCoderSpec parse_kernel_coder(const json& j, const std::string& path) {
  const ObjectReader r(j, path,
                       {"kind", "weights", "partial_format", "prepend_think", "eos_token",
                        "require_answer_tag", "autojunk"});
  KernelCoderSpec s;
  if (const json* w = r.find("weights")) {
    const ObjectReader wr(*w, sub(path, "weights"), {"format", "similarity"});
    s.w_format = wr.number("format", s.w_format, -kInf, kInf);
    s.w_similarity = wr.number("similarity", s.w_similarity, -kInf, kInf);
  }
  s.partial_format = r.number("partial_format", s.partial_format, 0.0, 1.0);
  s.prepend_think = r.boolean("prepend_think", s.prepend_think);
  s.eos_token = r.string("eos_token", s.eos_token);
  s.require_answer_tag = r.boolean("require_answer_tag", s.require_answer_tag);
  s.autojunk = r.boolean("autojunk", s.autojunk);
  return s;
}

CompositeSpec parse_composite(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"kind", "terms"});
  const json* terms = r.find("terms");
  if (terms == nullptr) spec_fail(sub(path, "terms"), "missing (a list of {name, weight, spec})");
  if (!terms->is_array() || terms->empty()) {
    spec_fail(sub(path, "terms"), "expected a non-empty list of {name, weight, spec}");
  }
  CompositeSpec c;
  std::set<std::string> names;
  for (std::size_t i = 0; i < terms->size(); ++i) {
    const std::string tpath = fmt::format("{}[{}]", sub(path, "terms"), i);
    const ObjectReader tr((*terms)[i], tpath, {"name", "weight", "spec"});
    const json* inner = tr.find("spec");
    if (inner == nullptr) spec_fail(sub(tpath, "spec"), "missing");
    CompositeTerm t;
    t.spec.push_back(parse_at(*inner, sub(tpath, "spec")));
    t.weight = tr.number("weight", 1.0, -kInf, kInf);
    t.name = tr.string("name", t.spec.front().kind());
    if (t.name.empty()) spec_fail(sub(tpath, "name"), "must not be empty");
    if (!names.insert(t.name).second) {
      spec_fail(sub(tpath, "name"),
                fmt::format("duplicate term name '{}' (give each term a distinct name)", t.name));
    }
    c.terms.push_back(std::move(t));
  }
  return c;
}

RewardSpec parse_at(const json& j, const std::string& path) {
  if (!j.is_object()) spec_fail(path, fmt::format("expected an object, got {}", j.type_name()));
  const auto it = j.find("kind");
  if (it == j.end()) {
    spec_fail(sub(path, "kind"), "missing (one of: dr_kernel, staged, kernel_coder, composite)");
  }
  if (!it->is_string()) {
    spec_fail(sub(path, "kind"), fmt::format("expected a string, got {}", it->type_name()));
  }
  const auto kind = it->get<std::string>();
  if (kind == "dr_kernel") return RewardSpec{parse_dr_kernel(j, path)};
  if (kind == "staged") return RewardSpec{parse_staged(j, path)};
  if (kind == "kernel_coder") return RewardSpec{parse_kernel_coder(j, path)};
  if (kind == "composite") return RewardSpec{parse_composite(j, path)};
  spec_fail(sub(path, "kind"),
            fmt::format("'{}' is not one of: dr_kernel, staged, kernel_coder, composite", kind));
}

const char* source_name(SpeedupSource s) {
  return s == SpeedupSource::kEager ? "eager" : "compile";
}

json penalties_json(const Penalties& p) { return {{"hacked", p.hacked}, {"warning", p.warning}}; }

}  // namespace

std::string RewardSpec::kind() const {
  struct Visitor {
    std::string operator()(const DrKernelSpec&) const { return "dr_kernel"; }
    std::string operator()(const StagedSpec&) const { return "staged"; }
    std::string operator()(const KernelCoderSpec&) const { return "kernel_coder"; }
    std::string operator()(const CompositeSpec&) const { return "composite"; }
  };
  return std::visit(Visitor{}, body);
}

RewardSpec parse_reward_spec(const nlohmann::json& spec) { return parse_at(spec, ""); }

RewardSpec parse_reward_spec(std::string_view json_text) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw SpecError(fmt::format("reward spec: not valid JSON: {}", e.what()));
  }
  return parse_reward_spec(j);
}

nlohmann::json to_json(const RewardSpec& spec) {
  struct Visitor {
    json operator()(const DrKernelSpec& s) const {
      return {{"kind", "dr_kernel"},
              {"weights",
               {{"correct", s.w_correct}, {"speedup", s.w_speedup}, {"profile", s.w_profile}}},
              {"cap", s.cap},
              {"speedup_source", source_name(s.source)},
              {"missing_speedup", missing_to_json(s.missing_speedup)},
              {"missing_profile", missing_to_json(s.missing_profile)},
              {"penalties", penalties_json(s.penalties)}};
    }
    json operator()(const StagedSpec& s) const {
      return {{"kind", "staged"},
              {"weights",
               {{"compile", s.w_compile}, {"correct", s.w_correct}, {"speedup", s.w_speedup}}},
              {"cap", s.cap},
              {"speedup_transform", s.transform == SpeedupTransform::kLinear ? "linear" : "log2"},
              {"speedup_source", source_name(s.source)},
              {"missing_speedup", missing_to_json(s.missing_speedup)},
              {"penalties", penalties_json(s.penalties)}};
    }
    json operator()(const KernelCoderSpec& s) const {
      return {{"kind", "kernel_coder"},
              {"weights", {{"format", s.w_format}, {"similarity", s.w_similarity}}},
              {"partial_format", s.partial_format},
              {"prepend_think", s.prepend_think},
              {"eos_token", s.eos_token},
              {"require_answer_tag", s.require_answer_tag},
              {"autojunk", s.autojunk}};
    }
    json operator()(const CompositeSpec& c) const {
      json terms = json::array();
      for (const auto& t : c.terms) {
        terms.push_back(
            {{"name", t.name}, {"weight", t.weight}, {"spec", to_json(t.spec.front())}});
      }
      return {{"kind", "composite"}, {"terms", terms}};
    }
  };
  return std::visit(Visitor{}, spec.body);
}

}  // namespace kgym::reward
