// Which layers of the sandbox a job got, for a service told to refuse to run without all of them
// (`kgym-gym serve --require-sandbox`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym::check {

// The layers a Result says were missing, each as "layer: why" (empty: none). The uid is judged
// only when the judge got as far as dropping it (before any task code ran).
std::vector<std::string> sandbox_gaps(const nlohmann::json& result);

// Starts one sandboxed child of `python` with every layer asked for and says which it did not
// get (empty: all). Run once at start: a machine that refuses a layer refuses it to every job.
std::vector<std::string> probe_sandbox(const std::string& python, std::int64_t sandbox_uid);

}  // namespace kgym::check
