// The evaluation options, written once. Every edge derives from this table: the job JSON
// (job.hpp), the service's "options" object and its normalized view (service/request.cpp), the
// OpenAPI schema (service/openapi.cpp), the Python CheckOptions and both command lines (kgym,
// kgym-gym). A default or a bound lives here and nowhere else.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/check/job.hpp"

namespace kgym::check {

enum class OptionKind { kInteger, kNumber, kBoolean, kChoice };

struct OptionSpec {
  std::string name;  // the option's name in every JSON form and in Python
  OptionKind kind = OptionKind::kNumber;
  nlohmann::json fallback;  // the default; null where "not set" has a meaning (atol: the task's)
  double min = 0;           // bounds of kInteger and kNumber, inclusive
  double max = 0;
  std::vector<std::string> choices;  // kChoice
  std::string help;
  bool service = false;  // accepted in the HTTP API's "options"
  bool job = true;       // a field of CheckJob (false: the service's own, e.g. priority)
  // The operator's: a flag of `serve` and `worker` too, whose value every job of theirs gets
  // (a limit no client may choose).
  bool host = false;
  // The command-line flag without dashes ("" = none). A boolean whose default is true is
  // turned off by --no-<cli>.
  std::string cli;
  std::function<void(CheckJob&, const nlohmann::json&)> set;  // the value is already valid
  std::function<nlohmann::json(const CheckJob&)> get;
};

const std::vector<OptionSpec>& option_table();
// nullptr when there is no such option.
const OptionSpec* find_option(const std::string& name);

// The value checked against its spec (type, bounds, choices; null gives the default).
// Throws std::invalid_argument("<where><name>: <why>").
nlohmann::json validated_option(const OptionSpec& spec, const nlohmann::json& value,
                                const std::string& where = "");

// Sets every option `options` names on `job`, validated; keys outside the table (or, with
// `service_only`, outside the service's options) are left to the caller.
void apply_options(CheckJob& job, const nlohmann::json& options, const std::string& where,
                   bool service_only);

// The job's options as a flat object (the service's or all of them).
nlohmann::json options_of(const CheckJob& job, bool service_only);

// JSON Schema of the options object ("properties" keyed by name): the OpenAPI document's.
nlohmann::json options_schema(bool service_only);

// The table itself as JSON, for the Python side (kgym._core.option_table()).
nlohmann::json option_table_json();

}  // namespace kgym::check
