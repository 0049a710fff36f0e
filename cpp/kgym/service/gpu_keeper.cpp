#include "kgym/service/gpu_keeper.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

namespace kgym::service {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reaps the keeper; after `grace` it is killed first (a keeper stuck in the driver).
void reap(pid_t pid, std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (::waitpid(pid, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      return;
    }
    ::usleep(10'000);
  }
}

}  // namespace

GpuKeeper::GpuKeeper(sandbox::Program program, std::vector<std::pair<std::string, std::string>> env,
                     std::string label)
    : label_(std::move(label)) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    state_ = fmt::format("not holding: no pipe ({})", std::strerror(errno));
    return;
  }
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    state_ = fmt::format("not holding: no pipe ({})", std::strerror(errno));
    return;
  }
  // posix_spawn, not fork: the service has threads by now, and only exec is safe after a fork
  // of a threaded process. dup2 clears close-on-exec on the keeper's two ends.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  // Every signal at its default and none blocked: the service blocks SIGTERM and SIGINT in its
  // threads (one thread takes them with sigwait), and a keeper that inherited that mask would
  // shrug off an operator's SIGTERM.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const auto args = program.argv();
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> entries;
  for (const auto& [k, v] : env) entries.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program.executable.c_str(), &actions, &attributes, argv.data(),
                               envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    state_ =
        fmt::format("not holding: {} did not start ({})", program.describe(), std::strerror(rc));
    return;
  }
  pid_ = pid;
  to_keeper_ = in[1];
  from_keeper_ = out[0];
  watcher_ = std::thread([this] { watch(); });
}

void GpuKeeper::watch() {
  std::string line;
  char buf[512];
  bool first = true;
  for (;;) {
    const ssize_t n = ::read(from_keeper_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!first) continue;  // only its first line means anything; the rest is drained
    line.append(buf, static_cast<std::size_t>(n));
    const auto end = line.find('\n');
    if (end == std::string::npos && line.size() < 400) continue;
    line.resize(std::min(end, line.size()));
    first = false;
    std::lock_guard lock(mutex_);
    state_ = line == "holding" ? line : "not holding: " + line;
    if (line != "holding") {
      std::cerr << fmt::format("kgym-gym: {}: the GPU keeper holds no context ({})\n", label_,
                               line);
    }
  }
  std::lock_guard lock(mutex_);
  if (!stopping_ && state_ == "holding") {
    // A keeper lost mid-service (killed, a driver fault): jobs go on, only colder.
    std::cerr << fmt::format(
        "kgym-gym: {}: the GPU keeper ended; jobs start their CUDA contexts without it\n", label_);
  }
  if (!stopping_ && (state_ == "holding" || state_ == "starting")) {
    state_ = "not holding: the keeper ended";
  }
}

GpuKeeper::~GpuKeeper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  close_fd(to_keeper_);  // its read of stdin ends: it lets go of the context and exits
  if (pid_ > 0) reap(pid_, std::chrono::seconds(5));
  if (watcher_.joinable()) watcher_.join();  // its stdout closed with it
  close_fd(from_keeper_);
}

std::string GpuKeeper::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

// --- the keeper process ----------------------------------------------------------------------

namespace {

// The few driver entry points the keeper needs, declared here: kgym builds without CUDA's
// headers, and the driver's ABI for these has been stable since CUDA 4.
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
constexpr int kComputeModeAttribute = 20;  // CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
constexpr int kComputeModeDefault = 0;     // CU_COMPUTEMODE_DEFAULT

void say(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

int run_gpu_keeper(pid_t parent_pid) {
  // Gone with the service, however it ends (its stdin closes too, but a kill -9 of a service
  // whose pipe a child inherited would leave that end open).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (parent_pid > 0 && ::getppid() != parent_pid) return 0;
  // Nothing of the service's but the two pipes: a listening socket it inherited would outlive
  // the service for as long as the keeper does.
  ::close_range(3, ~0U, 0);
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    say("the CUDA driver (libcuda.so.1) cannot be loaded");
    return 0;
  }
  auto symbol = [driver](const char* name) { return ::dlsym(driver, name); };
  const auto cu_init = reinterpret_cast<CUresult (*)(unsigned)>(symbol("cuInit"));
  const auto device_get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(symbol("cuDeviceGet"));
  const auto attribute =
      reinterpret_cast<CUresult (*)(int*, int, CUdevice)>(symbol("cuDeviceGetAttribute"));
  const auto retain =
      reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(symbol("cuDevicePrimaryCtxRetain"));
  const auto release =
      reinterpret_cast<CUresult (*)(CUdevice)>(symbol("cuDevicePrimaryCtxRelease_v2"));
  if (cu_init == nullptr || device_get == nullptr || attribute == nullptr || retain == nullptr ||
      release == nullptr) {
    say("the CUDA driver lacks an entry point the keeper needs");
    return 0;
  }
  CUdevice device = 0;
  int mode = -1;
  CUcontext context = nullptr;
  if (CUresult rc = cu_init(0); rc != 0) {
    say(fmt::format("cuInit failed (CUresult {})", rc));
    return 0;
  }
  if (CUresult rc = device_get(&device, 0); rc != 0) {
    say(fmt::format("no device 0 in CUDA_VISIBLE_DEVICES (CUresult {})", rc));
    return 0;
  }
  if (attribute(&mode, kComputeModeAttribute, device) != 0 || mode != kComputeModeDefault) {
    say(fmt::format(
        "the GPU's compute mode is not Default ({}): a context held here could keep jobs off it",
        mode));
    return 0;
  }
  if (CUresult rc = retain(&context, device); rc != 0) {
    say(fmt::format("cuDevicePrimaryCtxRetain failed (CUresult {})", rc));
    return 0;
  }
  say("holding");
  char buf[64];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  release(device);
  return 0;
}

}  // namespace kgym::service
