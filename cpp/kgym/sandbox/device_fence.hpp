// Takes a machine's GPU away from a process that keeps what it needs to compile: a Landlock layer
// under which no file beneath `dir` whose name begins with `prefix` (the GPU's device nodes:
// /dev/nvidia*) can be opened, nor any device file reached another way be driven by ioctl; files
// are written only beneath `writable` (and device nodes of `dir`, such as /dev/null); and no
// signal reaches, nor abstract socket connects to, a process outside the layer. Without its
// device nodes a process cannot make a CUDA context or reach the driver (NVML too goes through
// /dev/nvidiactl); what it had open before keeps working, so it is applied in a process that has
// opened none of them.
//
// Used for the candidate's compilation before its job holds the GPU (harness/precompile.py):
// candidate code runs there outside the GPU's lock and beside its runner's trusted start, so it
// must not launch anything, write where the runner reads, or stop or interrupt the runner.
#pragma once

#include <string>

#include "kgym/sandbox/runner_confinement.hpp"

namespace kgym::sandbox {

// Landlock is an allow-list: every sibling along the path from / to `dir` gets a rule to read,
// every device node of `dir` but the fenced-off ones a rule to read, write and ioctl (its other
// entries, such as /dev/shm, a rule to read), and `writable` every right; a file created later in a
// directory with no rule of its own is refused too, which a GPU's device nodes never need. Symbolic
// links get no rule of their own: what they lead to is reached through its own place. Needs
// Landlock ABI 6 (Linux 6.12: signals and abstract sockets scoped); on an older kernel nothing is
// applied and the outcome says why. The rules are made from the entries present now: call it after
// any mount the process still makes.
LayerOutcome fence_off_devices(const std::string& dir, const std::string& prefix,
                               const std::string& writable);

}  // namespace kgym::sandbox
