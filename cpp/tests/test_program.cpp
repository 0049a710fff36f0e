// sandbox::Program: a launch spec in parts, and the command line made from it.
#include "kgym/sandbox/program.hpp"

#include <gtest/gtest.h>

using kgym::sandbox::command_line;
using kgym::sandbox::Program;
using kgym::sandbox::python_module;

TEST(Program, ModuleProgramsPutOptionsBeforeTheModule) {
  const auto p =
      python_module("/usr/bin/python3", {"-I", "-X", "faulthandler"}, "kgym.harness", {"job.json"});
  EXPECT_EQ(p.argv(), (std::vector<std::string>{"/usr/bin/python3", "-I", "-X", "faulthandler",
                                                "-m", "kgym.harness", "job.json"}));
  EXPECT_EQ(p.describe(), "/usr/bin/python3 -I -X faulthandler -m kgym.harness job.json");
}

TEST(Program, CommandLineKeepsEveryWordAsAnArgument) {
  const auto p = command_line({"/bin/sh", "-c", "true", "-m", "kgym.harness"});
  EXPECT_EQ(p.executable, "/bin/sh");
  EXPECT_TRUE(p.options.empty());
  EXPECT_TRUE(p.module.empty());  // "-m" here is the script's argument, not a module
  EXPECT_EQ(p.argv(), (std::vector<std::string>{"/bin/sh", "-c", "true", "-m", "kgym.harness"}));
  EXPECT_TRUE(command_line({}).executable.empty());
}

TEST(Program, SameInterpreterMeansSameExecutableAndOptions) {
  const auto server = python_module("/py", {"-I"}, "kgym.harness.forkserver");
  EXPECT_TRUE(python_module("/py", {"-I"}, "kgym.harness", {"a"}).same_interpreter(server));
  EXPECT_FALSE(python_module("/py", {"-I", "-O"}, "kgym.harness").same_interpreter(server));
  EXPECT_FALSE(python_module("/py", {}, "kgym.harness").same_interpreter(server));
  EXPECT_FALSE(python_module("/other", {"-I"}, "kgym.harness").same_interpreter(server));
}
