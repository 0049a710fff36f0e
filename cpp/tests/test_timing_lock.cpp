// check::gpu_timing_lock: every check and service of a user on one GPU shares its lock.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "kgym/check/evaluate.hpp"

namespace fs = std::filesystem;

namespace {

struct EnvVar {
  std::string name;
  std::string old;
  bool had;
  EnvVar(std::string n, const char* value) : name(std::move(n)) {
    const char* o = std::getenv(name.c_str());
    had = o != nullptr;
    if (had) old = o;
    if (value != nullptr) {
      ::setenv(name.c_str(), value, 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  ~EnvVar() {
    if (had) {
      ::setenv(name.c_str(), old.c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
};

}  // namespace

TEST(TimingLock, OnePerGpuAndUserWithItsGate) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("kgym-lock-test-{}", ::getpid());
  fs::create_directories(dir);
  EnvVar run("XDG_RUNTIME_DIR", dir.c_str());
  EnvVar visible("CUDA_VISIBLE_DEVICES", nullptr);
  kgym::check::CheckJob job;
  job.device = "cpu";
  EXPECT_EQ(kgym::check::default_timing_lock(job), "");  // no GPU, no lock
  job.device = "cuda";
  const auto first = kgym::check::default_timing_lock(job);
  EXPECT_EQ(first, (dir / "kgym" / "gpu0.timing.lock").string());
  EXPECT_TRUE(fs::exists(first));
  EXPECT_TRUE(fs::exists(first + ".gate"));
  EXPECT_TRUE(fs::exists(first + ".start"));
  job.visible_devices = "3,1";
  EXPECT_EQ(kgym::check::default_timing_lock(job), (dir / "kgym" / "gpu3.timing.lock").string());
  job.visible_devices = "GPU-1a/../x";  // a UUID-style value never leaves the directory
  const auto odd = kgym::check::default_timing_lock(job);
  EXPECT_EQ(fs::path(odd).parent_path(), dir / "kgym");
  fs::remove_all(dir);
}

TEST(TimingLock, AnAutoDeviceJobOnAGpuMachineTakesTheLock) {
  // `kgym check` without --device runs on the GPU wherever the harness sees one; it took no
  // lock, so its timing window overlapped other checks' (four at once on an H200: two honest
  // solutions rejected, the judge's own per-call time a seventh of the kernels').
  const fs::path dir = fs::temp_directory_path() / fmt::format("kgym-lock-auto-{}", ::getpid());
  const fs::path dev = dir / "dev";
  fs::create_directories(dev);
  EnvVar run("XDG_RUNTIME_DIR", dir.c_str());
  EnvVar visible("CUDA_VISIBLE_DEVICES", nullptr);
  kgym::check::CheckJob job;
  job.device = "auto";
  EXPECT_EQ(kgym::check::default_timing_lock(job, dev), "");  // no GPU's device nodes
  std::ofstream{dev / "nvidiactl"};
  EXPECT_EQ(kgym::check::default_timing_lock(job, dev), "");  // the driver, no GPU
  std::ofstream{dev / "nvidia0"};
  EXPECT_EQ(kgym::check::default_timing_lock(job, dev),
            (dir / "kgym" / "gpu0.timing.lock").string());
  {
    EnvVar hidden("CUDA_VISIBLE_DEVICES", "-1");
    EXPECT_EQ(kgym::check::default_timing_lock(job, dev), "");  // every GPU hidden
  }
  job.device = "cpu";
  EXPECT_EQ(kgym::check::default_timing_lock(job, dev), "");
  fs::remove_all(dir);
}

TEST(TimingLock, ChecksAndServicesOfOneUserShareIt) {
  // kgym-gym's slots take gpu_timing_lock(id) whatever their --state-dir: the file that a check
  // on that GPU takes, so two services (or a service and a check) never time at once.
  const fs::path dir = fs::temp_directory_path() / fmt::format("kgym-lock-share-{}", ::getpid());
  fs::create_directories(dir);
  EnvVar run("XDG_RUNTIME_DIR", dir.c_str());
  kgym::check::CheckJob job;
  job.device = "cuda";
  job.visible_devices = "2";
  EXPECT_EQ(kgym::check::gpu_timing_lock("2"), kgym::check::default_timing_lock(job));
  EnvVar no_run("XDG_RUNTIME_DIR", nullptr);
  EnvVar home("HOME", dir.c_str());
  const auto lock = kgym::check::gpu_timing_lock("1");
  EXPECT_EQ(lock, (dir / ".cache" / "kgym" / "locks" / "gpu1.timing.lock").string());
  EXPECT_TRUE(fs::exists(lock + ".gate"));
  EnvVar no_home("HOME", nullptr);
  EXPECT_EQ(kgym::check::gpu_timing_lock("1"), "");  // nowhere to put it: the caller's fallback
  fs::remove_all(dir);
}
