// The tasks a service answers for by id: every `*.py` file of the given directories, the file's
// stem being the task id (`01_relu.py` -> `01_relu`).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kgym::service {

struct SuiteTask {
  std::string id;
  std::string source;
  std::string sha256;
};

class TaskSuite {
 public:
  // Throws std::runtime_error when the directory cannot be read.
  void load_dir(const std::string& dir);
  // One task by id (a pool worker's suite: the one task a job names, sent with it).
  void add(const std::string& id, const std::string& source);
  const SuiteTask* find(const std::string& id) const;
  const std::map<std::string, SuiteTask>& tasks() const { return tasks_; }

 private:
  std::map<std::string, SuiteTask> tasks_;
};

}  // namespace kgym::service
