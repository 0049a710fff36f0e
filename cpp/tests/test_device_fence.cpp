// The layer that takes the GPU's device nodes away (sandbox/device_fence.hpp), on a stand-in
// device directory: its `nvidia*` entries no longer open, for reading or writing; other device
// nodes still do; files are read everywhere but written only beneath the writable directory; and
// no signal reaches the parent, which is outside the layer.
#include <fcntl.h>
#include <signal.h>
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
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0600);
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
    fs::create_directories(root_ / "own" / "scratch");
    for (const char* name : {"dev/nvidia0", "dev/nvidiactl", "dev/nvidia-caps/cap1", "dev/null",
                             "beside/file", "above"}) {
      std::ofstream(root_ / name) << "x";
    }
    fs::create_symlink(root_ / "dev" / "nvidia0", root_ / "beside" / "link-to-gpu");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(DeviceFence, TheDevicesNoLongerOpenAndWritesStayInTheirDirectory) {
  const fs::path root = root_;
  const int code = in_child([&root] {
    const auto outcome = kgym::sandbox::fence_off_devices((root / "dev").string(), "nvidia",
                                                          (root / "own").string());
    if (!outcome.applied) {
      std::fprintf(stderr, "%s\n", outcome.note.c_str());
      return 99;  // no Landlock of ABI 6 here: said by the test, below
    }
    if (opens(root / "dev" / "nvidia0", O_RDWR) || errno != EACCES) return 1;
    if (opens(root / "dev" / "nvidia0", O_RDONLY)) return 2;
    if (opens(root / "dev" / "nvidiactl", O_WRONLY)) return 3;
    if (opens(root / "dev" / "nvidia-caps" / "cap1", O_RDONLY)) return 4;
    if (opens(root / "beside" / "link-to-gpu", O_RDONLY)) return 5;  // a link leads nowhere new
    if (!opens(root / "dev" / "null", O_RDONLY)) return 6;  // a plain file there: read only
    if (opens(root / "dev" / "null", O_RDWR)) return 15;
    if (!opens(root / "beside" / "file", O_RDONLY)) return 7;
    if (opens(root / "beside" / "file", O_RDWR)) return 8;  // read, not written
    if (opens(root / "beside" / "new", O_WRONLY | O_CREAT)) return 9;
    if (!opens(root / "above", O_RDONLY)) return 10;
    if (!opens("/proc/self/status", O_RDONLY)) return 11;
    // Its own directory: written, and a file moved up from a scratch directory in it, as Triton
    // writes its cache.
    if (!opens(root / "own" / "scratch" / "entry", O_WRONLY | O_CREAT)) return 12;
    if (::rename((root / "own" / "scratch" / "entry").c_str(), (root / "own" / "entry").c_str()) !=
        0) {
      return 13;
    }
    if (::kill(::getppid(), 0) == 0 || errno != EPERM) return 14;  // the parent: out of reach
    return 0;
  });
  if (code == 99) GTEST_SKIP() << "this kernel offers no Landlock of ABI 6";
  EXPECT_EQ(code, 0);
}

TEST_F(DeviceFence, RefusesToFenceOffNothing) {
  const std::string own = (root_ / "own").string();
  const auto outcome = kgym::sandbox::fence_off_devices((root_ / "dev").string(), "", own);
  EXPECT_FALSE(outcome.applied);
  EXPECT_NE(outcome.note.find("no prefix"), std::string::npos) << outcome.note;
  const auto missing = kgym::sandbox::fence_off_devices((root_ / "none").string(), "nvidia", own);
  EXPECT_FALSE(missing.applied);
  EXPECT_NE(missing.note.find("none"), std::string::npos) << missing.note;
}

}  // namespace
