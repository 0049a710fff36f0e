// Takes a machine's GPU away from a process that keeps everything else: a Landlock layer under
// which no file beneath `dir` whose name starts with `prefix` (the GPU's device nodes:
// /dev/nvidia*) can be opened, for reading or writing, while every other file stays as open as
// the layers below it leave it. Without its device nodes a process cannot make a CUDA context
// or reach the driver (NVML too goes through /dev/nvidiactl); what it had open before keeps
// working, so it is applied in a process that has opened none of them.
//
// Used for the candidate's compilation before its job holds the GPU (harness/precompile.py):
// candidate code runs there outside the GPU's lock, so it must not be able to launch anything.
#pragma once

#include <string>

#include "kgym/sandbox/runner_confinement.hpp"

namespace kgym::sandbox {

// Allows reading and writing everywhere but beneath the entries of `dir` whose names begin with
// `prefix` (Landlock is an allow-list: every sibling along the path from / to `dir`, and every
// entry of `dir` but those, gets a rule; a file created later in one of those directories is
// refused too, which a GPU's device nodes never need.) Symbolic links get no rule of their own:
// what they lead to is reached through its own place. The rules are made from the entries present
// now: call it after any mount the process still makes.
LayerOutcome fence_off_devices(const std::string& dir, const std::string& prefix);

}  // namespace kgym::sandbox
