// The service's side of a GPU keeper (service/gpu_keeper.hpp), with shell stand-ins for
// `kgym-gym gpu-keeper`: what it says decides its state, closing its stdin ends it, and a keeper
// that dies or never starts leaves a state that says so. The keeper's CUDA side runs on a GPU
// only (tests/test_gpu_keeper.py).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "kgym/sandbox/program.hpp"
#include "kgym/service/gpu_keeper.hpp"

using kgym::sandbox::command_line;
using kgym::service::GpuKeeper;

namespace {

std::unique_ptr<GpuKeeper> keeper(const std::string& script) {
  return std::make_unique<GpuKeeper>(
      command_line({"/bin/sh", "-c", script}),
      std::vector<std::pair<std::string, std::string>>{{"PATH", "/usr/bin:/bin"}}, "gpu7");
}

// The state once it is no longer "starting" (or after 10 s).
std::string settled(const GpuKeeper& k) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (k.state() == "starting" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return k.state();
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

}  // namespace

TEST(GpuKeeper, HoldsUntilItsStdinClosesThenIsReaped) {
  const auto marker = std::filesystem::temp_directory_path() /
                      ("kgym-keeper-" + std::to_string(::getpid()) + ".pid");
  // Writes its pid, says it holds, and waits for stdin to close, as the real keeper does.
  auto k = keeper("echo $$ > " + marker.string() + "; echo holding; cat > /dev/null; exit 0");
  EXPECT_EQ(k->label(), "gpu7");
  EXPECT_EQ(settled(*k), "holding");
  pid_t pid = 0;
  std::ifstream(marker) >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(alive(pid));
  const auto began = std::chrono::steady_clock::now();
  k.reset();  // closes its stdin: it ends by itself, well before the 5 s grace
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(3));
  EXPECT_FALSE(alive(pid));  // reaped, not a zombie
  std::filesystem::remove(marker);
}

TEST(GpuKeeper, AKeeperWithNothingToHoldSaysWhy) {
  auto k = keeper("echo 'the CUDA driver (libcuda.so.1) cannot be loaded'; exit 0");
  EXPECT_EQ(settled(*k), "not holding: the CUDA driver (libcuda.so.1) cannot be loaded");
}

TEST(GpuKeeper, AKeeperThatDiesAfterHoldingIsNoLongerHolding) {
  auto k = keeper("echo holding; sleep 0.2; kill -9 $$");
  EXPECT_EQ(settled(*k), "holding");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (k->state() == "holding" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(k->state(), "not holding: the keeper ended");
}

TEST(GpuKeeper, AKeeperThatSaysNothingAndExitsIsNotHolding) {
  auto k = keeper("exit 3");
  EXPECT_EQ(settled(*k), "not holding: the keeper ended");
}

TEST(GpuKeeper, AProgramThatCannotStartIsNotHolding) {
  GpuKeeper k(command_line({"/nonexistent/kgym-gym", "gpu-keeper"}), {}, "gpu0");
  const auto state = settled(k);
  // posix_spawn reports a missing file either at once or as the child's exit 127.
  EXPECT_TRUE(state.rfind("not holding: ", 0) == 0) << state;
}

TEST(GpuKeeper, AKeeperTakesSignalsTheServiceBlocks) {
  // The service blocks SIGTERM in its threads (a sigwait thread takes it); the keeper must not
  // inherit that, or an operator's SIGTERM would leave it holding the GPU.
  sigset_t term, before;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &term, &before), 0);
  const auto marker = std::filesystem::temp_directory_path() /
                      ("kgym-keeper-term-" + std::to_string(::getpid()) + ".pid");
  // `read` is the shell's own: no child process keeps the keeper's stdout open after it dies.
  auto k = keeper("echo $$ > " + marker.string() + "; echo holding; read line; exit 0");
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ASSERT_EQ(settled(*k), "holding");
  pid_t pid = 0;
  std::ifstream(marker) >> pid;
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (k->state() == "holding" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(k->state(), "not holding: the keeper ended");
  std::filesystem::remove(marker);
}
