// What of the host a job's view (sandbox/job_view.hpp) must show for one Python interpreter: its
// installation (prefixes and every sys.path entry) read-only, and the installed kgym package's
// reference solutions hidden. Asked of the interpreter itself, once per interpreter and process:
// venvs, pyenv, conda and editable installs all put their files in different places.
#pragma once

#include <string>
#include <vector>

namespace kgym::check {

struct InterpreterView {
  std::vector<std::string> readonly;
  std::vector<std::string> hidden;
  std::string error;  // why the interpreter could not be asked (then the view lacks it)
};

// Runs `python -I -c ...` (unsandboxed: it imports nothing of ours) the first time; cached.
const InterpreterView& interpreter_view(const std::string& python);

}  // namespace kgym::check
