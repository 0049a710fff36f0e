// What a sandboxed child runs, held as parts rather than as a command line: the fork server must
// know which interpreter, which start-up options and which module a job asks for, and parsing
// that back out of an argv is guesswork (`-m` could be any argument's value).
#pragma once

#include <string>
#include <vector>

namespace kgym::sandbox {

struct Program {
  std::string executable;            // an absolute path
  std::vector<std::string> options;  // the interpreter's own options, e.g. {"-I", "-X", "x"}
  std::string module;                // run as `-m module` when set
  std::vector<std::string> args;     // the program's arguments (after the module, when set)

  // The command line to exec: executable, options, `-m module` when set, args.
  std::vector<std::string> argv() const;
  // Same interpreter with the same start-up options: what a warm interpreter must share with a
  // job for the job to run as if started fresh (sys.flags are fixed at start-up).
  bool same_interpreter(const Program& other) const;
  std::string describe() const;  // the command line, for messages

  bool operator==(const Program&) const = default;
};

// `python OPTIONS -m module ARGS`.
Program python_module(std::string python, std::vector<std::string> options, std::string module,
                      std::vector<std::string> args = {});
// A plain command line: argv[0] is the executable, the rest its arguments.
Program command_line(std::vector<std::string> argv);

}  // namespace kgym::sandbox
