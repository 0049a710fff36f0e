// kgym-gym: the C++ gym executable. Subcommands: check (one candidate against one task),
// extract (completion -> candidate code), feedback (Result JSON -> model-facing text),
// screen (static screen of candidate sources), serve (the HTTP service), worker (a host of a
// pool of workers), backup, openapi.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include "kgym_gym_pool.hpp"
#include "kgym_gym_serve.hpp"

#include "kgym/check/evaluate.hpp"
#include "kgym/check/options.hpp"
#include "kgym/result/feedback.hpp"
#include "kgym/screen/screen.hpp"
#include "kgym/service/gpu_keeper.hpp"
#include "kgym/text/extract.hpp"

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uintmax_t kMaxInputBytes = 4u << 20;  // tasks and completions are small

std::string read_text(const std::string& path) {
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw std::runtime_error(fmt::format("{}: no such file", path));
  if (fs::file_size(path, ec) > kMaxInputBytes) {
    throw std::runtime_error(fmt::format("{}: larger than {} bytes", path, kMaxInputBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot be read", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The check command's option flags, one per option of the table (kgym/check/options.hpp) that
// has one. Values are kept as given and validated by the table after parsing.
struct GivenOptions {
  std::map<std::string, std::string> values;  // option name -> text given
  std::map<std::string, bool> switched_off;   // booleans turned off by --no-<flag>
};

void add_option_flags(CLI::App* cmd, GivenOptions& given) {
  for (const auto& spec : kgym::check::option_table()) {
    if (!spec.job || spec.cli.empty()) continue;
    const std::string shown = spec.fallback.is_null()     ? "the task's"
                              : spec.fallback.is_string() ? spec.fallback.get<std::string>()
                                                          : spec.fallback.dump();
    if (spec.kind == kgym::check::OptionKind::kBoolean) {
      given.switched_off[spec.name] = false;
      cmd->add_flag("--no-" + spec.cli, given.switched_off[spec.name],
                    fmt::format("turns off: {} (on by default)", spec.help));
      continue;
    }
    auto* option = cmd->add_option("--" + spec.cli, given.values[spec.name],
                                   fmt::format("{} (default {})", spec.help, shown));
    if (spec.kind == kgym::check::OptionKind::kChoice) option->check(CLI::IsMember(spec.choices));
  }
}

// The given flags as the job's option fields, validated by the table.
json given_options_json(const GivenOptions& given) {
  json out = json::object();
  for (const auto& spec : kgym::check::option_table()) {
    if (const auto it = given.switched_off.find(spec.name);
        it != given.switched_off.end() && it->second) {
      out[spec.name] = false;
    }
    const auto it = given.values.find(spec.name);
    if (it == given.values.end() || it->second.empty()) continue;
    const std::string& text = it->second;
    try {
      std::size_t used = 0;
      if (spec.kind == kgym::check::OptionKind::kInteger) {
        out[spec.name] = std::stoll(text, &used);
      } else if (spec.kind == kgym::check::OptionKind::kNumber) {
        out[spec.name] = std::stod(text, &used);
      } else {
        out[spec.name] = text;
        used = text.size();
      }
      if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::logic_error&) {
      throw std::invalid_argument(
          fmt::format("--{}: '{}' is not a valid {}", spec.cli, text,
                      spec.kind == kgym::check::OptionKind::kInteger ? "integer" : "number"));
    }
  }
  return out;
}

std::string summary_line(const json& r) {
  std::string line = fmt::format("{}: {}", r.value("task_id", "?"), r.value("status", "?"));
  const auto& c = r["correctness"];
  if (c.is_object() && c.contains("max_abs_error") && c["max_abs_error"].is_number()) {
    line += fmt::format(", max abs error {:.3g}", c["max_abs_error"].get<double>());
  }
  const auto& t = r["timing"];
  if (t.is_object() && t.value("available", false)) {
    line += fmt::format(", speedup {:.3f}x [{:.3f}, {:.3f}]", t["speedup"].get<double>(),
                        t["speedup_ci"][0].get<double>(), t["speedup_ci"][1].get<double>());
  }
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kgym-gym: the kgym gym (C++). Checks Triton candidates against tasks."};
  app.require_subcommand(1);

  auto* check_cmd = app.add_subcommand("check", "Evaluate one candidate against one task");
  std::string task_path, candidate_path, extract_rule = "auto", python;
  bool as_json = false, no_timing = false;
  GivenOptions given;
  check_cmd->add_option("task", task_path, "KernelBench-format task file")->required();
  check_cmd
      ->add_option("candidate", candidate_path, "candidate .py or raw completion ('-' = stdin)")
      ->required();
  add_option_flags(check_cmd, given);
  check_cmd->add_option("--python", python, "python interpreter with kgym, torch and triton");
  check_cmd->add_flag("--no-timing", no_timing, "skip timing (= --baseline none)");
  check_cmd->add_flag("--json", as_json, "print the Result JSON");

  auto* extract_cmd = app.add_subcommand("extract", "Print the candidate code of a completion");
  std::string completion_path;
  extract_cmd->add_option("completion", completion_path, "completion file ('-' = stdin)")
      ->required();
  extract_cmd->add_option("--rule", extract_rule, "auto, last_python_block, answer_tag or whole");
  extract_cmd->add_flag("--json", as_json, "print {ok, code, rule, error} as JSON");

  auto* feedback_cmd = app.add_subcommand("feedback", "Render the feedback text of a Result JSON");
  std::string result_path;
  feedback_cmd->add_option("result", result_path, "Result JSON file ('-' = stdin)")->required();

  auto* screen_cmd =
      app.add_subcommand("screen", "Static screen of candidate sources (findings by rule)");
  std::vector<std::string> screen_paths;
  screen_cmd->add_option("files", screen_paths, "candidate .py files ('-' = stdin)")->required();
  screen_cmd->add_flag("--json", as_json, "print findings as JSON ({file: findings} for several)");

  ServeOptions serve_options;
  auto* serve_cmd = add_serve_command(app, serve_options);
  auto* openapi_cmd = add_openapi_command(app);
  BackupOptions backup_options;
  auto* backup_cmd = add_backup_command(app, backup_options);
  WorkerOptions worker_options;
  auto* worker_cmd = add_worker_command(app, worker_options);

  // Started by serve and worker, one per GPU (kgym/service/gpu_keeper.hpp); not for people.
  auto* keeper_cmd =
      app.add_subcommand("gpu-keeper", "Hold a CUDA context on device 0 until stdin closes");
  keeper_cmd->group("");
  int keeper_parent = 0;
  keeper_cmd->add_option("--parent", keeper_parent, "exit at once unless this is the parent");

  CLI11_PARSE(app, argc, argv);
  if (*keeper_cmd) return kgym::service::run_gpu_keeper(keeper_parent);
  if (*openapi_cmd) return run_openapi();
  if (*backup_cmd) return run_backup(backup_options);
  if (*serve_cmd) {
    try {
      return run_serve(serve_options);
    } catch (const std::exception& e) {
      std::cerr << "kgym-gym serve: " << e.what() << "\n";
      return 2;
    }
  }
  if (*worker_cmd) {
    try {
      return run_worker(worker_options);
    } catch (const std::exception& e) {
      std::cerr << "kgym-gym worker: " << e.what() << "\n";
      return 2;
    }
  }

  if (*screen_cmd) {
    // Exit 0 when every file was screened (findings or not), 2 when one could not be read.
    int rc = 0;
    json all = json::object();
    for (const auto& path : screen_paths) {
      std::string source;
      try {
        source = read_text(path);
      } catch (const std::exception& e) {
        std::cerr << "kgym-gym: " << e.what() << "\n";
        rc = 2;
        continue;
      }
      const auto findings = kgym::screen::screen_candidate(source);
      if (as_json) {
        all[path] = kgym::screen::to_json(findings);
        continue;
      }
      for (const auto& f : findings) {
        std::cout << fmt::format("{}:{}: [{}] {}: {}\n", path, f.line, f.rule, f.severity,
                                 f.detail);
      }
    }
    if (as_json) {
      if (screen_paths.size() == 1 && all.contains(screen_paths.front())) {
        std::cout << all[screen_paths.front()].dump(2) << "\n";
      } else {
        std::cout << all.dump(2) << "\n";
      }
    }
    return rc;
  }

  try {
    if (*check_cmd) {
      kgym::check::CheckJob job;
      job.task_id = fs::path(task_path).stem().string();
      job.task_source = read_text(task_path);
      job.candidate_text = read_text(candidate_path);
      json options = given_options_json(given);
      if (!options.contains("extract") && candidate_path.ends_with(".py")) {
        options["extract"] = "whole";
      }
      if (no_timing) options["baseline"] = "none";
      kgym::check::apply_options(job, options, "--", false);
      job.python = python;
      const bool progress = !as_json && ::isatty(STDERR_FILENO);
      const auto result = kgym::check::evaluate(job, [&](const std::string& phase) {
        if (progress) fmt::print(stderr, "  ... {}\n", phase);
      });
      if (as_json) {
        std::cout << result.dump(2) << "\n";
      } else {
        std::cout << summary_line(result) << "\n" << kgym::result::render_feedback(result) << "\n";
      }
      return 0;
    }
    if (*extract_cmd) {
      const auto parsed = kgym::text::parse_extract_rule(extract_rule);
      if (!parsed) throw std::runtime_error("--rule: unknown rule " + extract_rule);
      const auto e = kgym::text::extract_candidate(read_text(completion_path), *parsed);
      if (as_json) {
        std::cout << json{{"ok", e.ok}, {"code", e.code}, {"rule", e.rule_used}, {"error", e.error}}
                         .dump(2)
                  << "\n";
        return 0;
      }
      if (!e.ok) {
        std::cerr << "kgym-gym extract: " << e.error << "\n";
        return 1;
      }
      std::cout << e.code;
      return 0;
    }
    if (*feedback_cmd) {
      const auto j = json::parse(read_text(result_path), nullptr, false);
      if (j.is_discarded() || !j.is_object())
        throw std::runtime_error("the result is not a JSON object");
      std::cout << kgym::result::render_feedback(j) << "\n";
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "kgym-gym: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
