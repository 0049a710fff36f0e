// Typed access to the fields of one JSON object inside a Result, for result.cpp's reader.
//
// Every accessor knows the field's path (e.g. "timing.speedup"), so that a strict reader's
// error names the field. A lenient reader (feedback and the service must go on with a damaged
// result) gets the caller's fallback for a field that is missing or of the wrong type instead.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kgym::result::detail {

enum class Strictness { kStrict, kLenient };

class Fields {
 public:
  // `object` need not be an object: a lenient reader then finds no fields at all.
  Fields(const nlohmann::json& object, std::string path, Strictness strictness);

  bool lenient() const { return strictness_ == Strictness::kLenient; }
  std::string path_of(std::string_view key) const;
  // Strict: throws ResultError("result.<path>.<key>: <message>"). Lenient: returns, and the
  // caller keeps its fallback (or, for a value out of range, the value as read).
  void fail(std::string_view key, std::string_view message) const;

  // The field as it is, nullptr when absent (null is a value here).
  const nlohmann::json* find(std::string_view key) const;

  // Required fields: absent or of another type fails.
  bool boolean(std::string_view key, bool fallback) const;
  std::string string(std::string_view key, std::string fallback) const;
  int integer(std::string_view key, int fallback) const;
  double number(std::string_view key, double fallback) const;

  // Optional fields: absent or null is nullopt; another type fails.
  std::optional<bool> optional_boolean(std::string_view key) const;
  std::optional<std::string> optional_string(std::string_view key) const;
  std::optional<int> optional_integer(std::string_view key) const;
  std::optional<double> optional_number(std::string_view key) const;
  // nullptr when absent or null. A lenient reader also takes an object for a list and reads
  // its values, as feedback always iterated whatever it found there.
  const nlohmann::json* optional_object(std::string_view key) const;
  const nlohmann::json* optional_list(std::string_view key) const;

  // A nested object's fields, with its path.
  Fields nested(const nlohmann::json& object, std::string_view key) const;

 private:
  using Matcher = bool (*)(const nlohmann::json&);
  enum class Presence { kRequired, kNullable };
  // The field if it has the expected type; otherwise fails (when absent: only if required).
  // `null_note` is what a message adds to the expected kind for a nullable field.
  const nlohmann::json* typed(std::string_view key, std::string_view kind, Matcher matches,
                              Presence presence, std::string_view null_note = " or null") const;
  Matcher integer_matcher() const;

  const nlohmann::json& object_;
  std::string path_;
  Strictness strictness_;
};

// JSON numbers as int: a lenient reader takes any number, truncated and clamped to int's range.
int to_int(const nlohmann::json& number);

}  // namespace kgym::result::detail
