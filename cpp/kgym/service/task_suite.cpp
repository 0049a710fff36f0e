#include "kgym/service/task_suite.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "kgym/service/hashing.hpp"

namespace kgym::service {

namespace fs = std::filesystem;

void TaskSuite::load_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw std::runtime_error(fmt::format("task directory '{}' does not exist", dir));
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".py") continue;
    const auto stem = entry.path().stem().string();
    if (stem.starts_with("_")) continue;  // __init__.py and helpers are not tasks
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    SuiteTask task{stem, text.str(), ""};
    task.sha256 = sha256_hex(task.source);
    tasks_[stem] = std::move(task);
  }
  if (ec) throw std::runtime_error(fmt::format("cannot read '{}': {}", dir, ec.message()));
}

void TaskSuite::add(const std::string& id, const std::string& source) {
  tasks_[id] = SuiteTask{id, source, sha256_hex(source)};
}

const SuiteTask* TaskSuite::find(const std::string& id) const {
  const auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

}  // namespace kgym::service
