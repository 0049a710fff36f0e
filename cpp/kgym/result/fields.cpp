#include "kgym/result/fields.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "kgym/result/result.hpp"

namespace kgym::result::detail {

using nlohmann::json;

namespace {

bool is_boolean(const json& j) { return j.is_boolean(); }
bool is_string(const json& j) { return j.is_string(); }
bool is_integer(const json& j) { return j.is_number_integer(); }
bool is_number(const json& j) { return j.is_number(); }  // never true for a boolean
bool is_object(const json& j) { return j.is_object(); }
bool is_array(const json& j) { return j.is_array(); }
bool is_iterable(const json& j) { return j.is_array() || j.is_object(); }

}  // namespace

int to_int(const json& number) {
  constexpr auto kMin = std::numeric_limits<int>::min();
  constexpr auto kMax = std::numeric_limits<int>::max();
  if (number.is_number_unsigned()) {
    return static_cast<int>(std::min<std::uint64_t>(number.get<std::uint64_t>(), kMax));
  }
  if (number.is_number_integer()) {
    return static_cast<int>(std::clamp<std::int64_t>(number.get<std::int64_t>(), kMin, kMax));
  }
  // Clamped first: converting a double outside int's range is undefined.
  return static_cast<int>(std::clamp(std::trunc(number.get<double>()), static_cast<double>(kMin),
                                     static_cast<double>(kMax)));
}

Fields::Fields(const json& object, std::string path, Strictness strictness)
    : object_(object), path_(std::move(path)), strictness_(strictness) {}

std::string Fields::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

void Fields::fail(std::string_view key, std::string_view message) const {
  if (lenient()) return;
  throw ResultError(fmt::format("result.{}: {}", path_of(key), message));
}

const json* Fields::find(std::string_view key) const {
  if (!object_.is_object()) return nullptr;
  const auto it = object_.find(std::string(key));
  return it == object_.end() ? nullptr : &*it;
}

const json* Fields::typed(std::string_view key, std::string_view kind, Matcher matches,
                          Presence presence, std::string_view null_note) const {
  const json* value = find(key);
  const bool required = presence == Presence::kRequired;
  if (value == nullptr) {
    if (required) fail(key, fmt::format("missing ({} is required)", kind));
    return nullptr;
  }
  if (value->is_null() && !required) return nullptr;
  if (!matches(*value)) {
    fail(key,
         fmt::format("expected {}{}, got {}", kind, required ? "" : null_note, value->type_name()));
    return nullptr;
  }
  return value;
}

Fields::Matcher Fields::integer_matcher() const { return lenient() ? is_number : is_integer; }

bool Fields::boolean(std::string_view key, bool fallback) const {
  const json* v = typed(key, "a boolean", is_boolean, Presence::kRequired);
  return v != nullptr ? v->get<bool>() : fallback;
}

std::string Fields::string(std::string_view key, std::string fallback) const {
  const json* v = typed(key, "a string", is_string, Presence::kRequired);
  return v != nullptr ? v->get<std::string>() : std::move(fallback);
}

int Fields::integer(std::string_view key, int fallback) const {
  const json* v = typed(key, "an integer", integer_matcher(), Presence::kRequired);
  return v != nullptr ? to_int(*v) : fallback;
}

double Fields::number(std::string_view key, double fallback) const {
  const json* v = typed(key, "a number", is_number, Presence::kRequired);
  return v != nullptr ? v->get<double>() : fallback;
}

std::optional<bool> Fields::optional_boolean(std::string_view key) const {
  const json* v = typed(key, "a boolean", is_boolean, Presence::kNullable);
  return v != nullptr ? std::optional<bool>(v->get<bool>()) : std::nullopt;
}

std::optional<std::string> Fields::optional_string(std::string_view key) const {
  const json* v = typed(key, "a string", is_string, Presence::kNullable);
  return v != nullptr ? std::optional<std::string>(v->get<std::string>()) : std::nullopt;
}

std::optional<int> Fields::optional_integer(std::string_view key) const {
  const json* v = typed(key, "an integer", integer_matcher(), Presence::kNullable);
  return v != nullptr ? std::optional<int>(to_int(*v)) : std::nullopt;
}

std::optional<double> Fields::optional_number(std::string_view key) const {
  const json* v = typed(key, "a number", is_number, Presence::kNullable);
  return v != nullptr ? std::optional<double>(v->get<double>()) : std::nullopt;
}

const json* Fields::optional_object(std::string_view key) const {
  return typed(key, "an object", is_object, Presence::kNullable, "");
}

const json* Fields::optional_list(std::string_view key) const {
  return typed(key, "a list", lenient() ? is_iterable : is_array, Presence::kNullable, "");
}

Fields Fields::nested(const json& object, std::string_view key) const {
  return Fields(object, path_of(key), strictness_);
}

}  // namespace kgym::result::detail
