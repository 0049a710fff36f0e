#include "kgym/sandbox/program.hpp"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kgym::sandbox {

std::vector<std::string> Program::argv() const {
  std::vector<std::string> out;
  out.reserve(1 + options.size() + 2 + args.size());
  out.push_back(executable);
  out.insert(out.end(), options.begin(), options.end());
  if (!module.empty()) {
    out.emplace_back("-m");
    out.push_back(module);
  }
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

bool Program::same_interpreter(const Program& other) const {
  return executable == other.executable && options == other.options;
}

std::string Program::describe() const { return fmt::format("{}", fmt::join(argv(), " ")); }

Program python_module(std::string python, std::vector<std::string> options, std::string module,
                      std::vector<std::string> args) {
  return Program{std::move(python), std::move(options), std::move(module), std::move(args)};
}

Program command_line(std::vector<std::string> argv) {
  Program p;
  if (argv.empty()) return p;
  p.executable = std::move(argv.front());
  p.args.assign(std::make_move_iterator(argv.begin() + 1), std::make_move_iterator(argv.end()));
  return p;
}

}  // namespace kgym::sandbox
