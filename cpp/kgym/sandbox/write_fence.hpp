// Confines where the child may write, with Landlock (Linux 5.13+): anything that creates,
// changes, renames or removes a file is allowed only beneath the job's own directories; reads
// are left alone. A candidate can then neither plant a poisoned cache entry for later jobs nor
// persist state between evaluations, whatever the static screen missed.
#pragma once

#include <string>
#include <vector>

namespace kgym::sandbox {

enum class FenceStatus : char {
  kFenced = 'F',       // writes confined
  kUnsupported = 'U',  // the kernel has no Landlock (or it is disabled): writes not confined
  kFailed = 'X',       // Landlock exists but the rules could not be applied
  kOff = 'O',          // not asked for
};

// Paths are opened before fork so that the child only makes syscalls. A path that does not
// exist is skipped.
struct WriteFence {
  std::vector<int> writable_dirs;  // O_PATH descriptors: full write access beneath each
  std::vector<int> device_dirs;    // O_PATH descriptors: existing files opened for writing only
  // The paths they were opened from, to open them again in a new file-system view (Landlock
  // refuses descriptors whose mount is not in the caller's namespace).
  std::vector<std::string> writable_paths;
  std::vector<std::string> device_paths;
  // false: writes into existing files are not handled by this fence (only creating, removing,
  // renaming and linking are). The job-level fence of a GPU job is so: its runners mount a
  // procfs of their own PID namespace, which a fence made before that mount could not name, and
  // the judge and every runner then stack a full fence of their own.
  bool confine_existing = true;
  ~WriteFence();
};

void prepare_fence(WriteFence& fence, const std::vector<std::string>& writable,
                   const std::vector<std::string>& devices);

// Opens the paths again (after pivot_root into the job's view): close, then open, in place.
// Async-signal-safe; a path that no longer opens gets -1 and no rule.
void reopen_fence(WriteFence& fence);

// Runs in the forked child (async-signal-safe: only syscalls). Sets no_new_privs.
FenceStatus apply_fence(const WriteFence& fence);

// A line for results when the status is not kFenced.
const char* fence_note(FenceStatus status);

}  // namespace kgym::sandbox
