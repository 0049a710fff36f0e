// A job's directory, where the supervisor writes the job's files and the job writes whatever it
// writes: its own tmpfs of a fixed size when the supervisor may mount one (root), so that a job
// that fills it fills only itself (a tmpfs's pages are memory, charged to the job's cgroup too).
// The destructor removes it and everything in it. A service's scratch directory is its own:
// at start-up no job of it runs, so the sweep removes every job directory a crash left there.
// A shared one (the temporary directory `kgym check` uses) is swept by lock: each directory's
// supervisor holds an flock on `<directory>.lock` beside it for its life, which the kernel lets
// go when that process dies, however it dies.
#pragma once

#include <cstdint>
#include <string>

namespace kgym::sandbox {

class JobDirectory {
 public:
  // mkdtemp("<scratch>/kgym-job-XXXXXX") and its lock, then a tmpfs of `size_bytes` on it
  // when > 0.
  // Throws std::runtime_error when the directory cannot be made; a tmpfs that cannot be mounted
  // leaves the directory on `scratch`'s file system, and note() says why.
  JobDirectory(const std::string& scratch, std::uint64_t size_bytes);
  ~JobDirectory();
  JobDirectory(const JobDirectory&) = delete;
  JobDirectory& operator=(const JobDirectory&) = delete;

  const std::string& path() const { return path_; }
  bool size_limited() const { return mounted_; }
  const std::string& note() const { return note_; }

 private:
  std::string path_;
  int lock_fd_ = -1;
  bool mounted_ = false;
  std::string note_;
};

// Removes a job directory: what is mounted in or on it is detached first, then everything in it
// (whoever owns it).
void remove_job_directory(const std::string& path);

// Removes every kgym-job-* directory in `scratch`, and their locks; returns how many.
int sweep_job_directories(const std::string& scratch);

// Removes the kgym-job-* directories in `scratch` whose supervisor is gone (their lock, made by
// this uid, is free) and whose lock is at least `min_age_s` old (a directory is made a moment
// before its lock is taken); returns how many. Directories without a lock are left alone.
int sweep_abandoned_job_directories(const std::string& scratch, int min_age_s = 2);

// Gives this process a mount namespace of its own that receives the host's mounts and sends
// none back, so that the job directories' tmpfs it mounts from now on are seen only by it and
// its children (fork servers, jobs), and go with the last of them: a service killed with -9
// leaves no mount behind, only the empty directories, which the next start sweeps. Only as root,
// while the process has one thread and before it starts a child. "" or why not (its mounts then
// stay visible until they are removed).
std::string own_mount_namespace();

}  // namespace kgym::sandbox
