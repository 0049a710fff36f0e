// The layer that takes the GPU's device nodes away (sandbox/device_fence.hpp), on a stand-in
// device directory: its `nvidia*` entries no longer open, for reading or writing, and every
// other file still does, beside it, above it and elsewhere.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "kgym/sandbox/device_fence.hpp"

namespace {

namespace fs = std::filesystem;

bool opens(const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// Runs `body` in a forked child (the layer cannot be taken off a process) and returns its exit
// code: 0 when every expectation held, else the number of the first that did not.
template <typename Body>
int in_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

class DeviceFence : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kgym-device-fence-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "dev" / "nvidia-caps");
    fs::create_directories(root_ / "beside");
    for (const char* name : {"dev/nvidia0", "dev/nvidiactl", "dev/nvidia-caps/cap1", "dev/null",
                             "beside/file", "above"}) {
      std::ofstream(root_ / name) << "x";
    }
    fs::create_symlink(root_ / "dev" / "nvidia0", root_ / "beside" / "link-to-gpu");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(DeviceFence, TheDevicesNoLongerOpenAndEverythingElseDoes) {
  const fs::path root = root_;
  const int code = in_child([&root] {
    const auto outcome = kgym::sandbox::fence_off_devices((root / "dev").string(), "nvidia");
    if (!outcome.applied) return 99;  // no Landlock here: said by the test, below
    if (opens(root / "dev" / "nvidia0", O_RDWR) || errno != EACCES) return 1;
    if (opens(root / "dev" / "nvidia0", O_RDONLY)) return 2;
    if (opens(root / "dev" / "nvidiactl", O_WRONLY)) return 3;
    if (opens(root / "dev" / "nvidia-caps" / "cap1", O_RDONLY)) return 4;
    if (opens(root / "beside" / "link-to-gpu", O_RDONLY)) return 5;  // a link leads nowhere new
    if (!opens(root / "dev" / "null", O_RDWR)) return 6;
    if (!opens(root / "beside" / "file", O_RDWR)) return 7;
    if (!opens(root / "above", O_RDONLY)) return 8;
    if (!opens("/proc/self/status", O_RDONLY)) return 9;
    if (!opens(fs::temp_directory_path(), O_RDONLY | O_DIRECTORY)) return 10;
    // A file moved up from a scratch directory, as Triton writes its cache.
    fs::create_directories(root / "beside" / "scratch");
    std::ofstream(root / "beside" / "scratch" / "entry") << "x";
    if (::rename((root / "beside" / "scratch" / "entry").c_str(),
                 (root / "beside" / "entry").c_str()) != 0) {
      return 11;
    }
    return 0;
  });
  if (code == 99) GTEST_SKIP() << "this kernel offers no Landlock";
  EXPECT_EQ(code, 0);
}

TEST_F(DeviceFence, RefusesToFenceOffNothing) {
  const auto outcome = kgym::sandbox::fence_off_devices((root_ / "dev").string(), "");
  EXPECT_FALSE(outcome.applied);
  EXPECT_NE(outcome.note.find("no prefix"), std::string::npos) << outcome.note;
  const auto missing = kgym::sandbox::fence_off_devices((root_ / "none").string(), "nvidia");
  EXPECT_FALSE(missing.applied);
  EXPECT_NE(missing.note.find("none"), std::string::npos) << missing.note;
}

}  // namespace
