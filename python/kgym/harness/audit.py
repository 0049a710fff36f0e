"""PEP 578 audit hooks in the candidate's runner: a second layer behind the process boundary.

The judge does not need this to stay honest (nothing in the candidate's process is believed),
but a candidate that reaches for new code (``exec``/``compile``), frames, the garbage collector,
``__code__``, native code (ctypes), processes, signals or sockets is cheating or about to, and is
stopped there: the hook ends the process at once with ``AUDIT_EXIT_CODE``, which the judge reads
from ``waitpid`` (a channel the candidate cannot forge into a pass), after writing the event's
name to the audit descriptor for the finding's detail.

An event counts as the candidate's when, walking the stack from the event outwards and skipping
the standard library and torch (which a candidate can call into to launder a request), the first
frame met is the candidate's file. Triton's and kgym's own frames met first make it theirs:
Triton compiles and ``exec``s its launchers while a candidate's forward is on the stack.
Audit hooks cannot be removed once added (PEP 578), so a candidate cannot switch this off.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Callable
from typing import Any

from kgym.harness.real_type import is_a

AUDIT_EXIT_CODE = 86

# Events a candidate never needs: each is a way to reach code, memory or processes the judge did
# not give it.
BLOCKED_EVENTS = frozenset(
    {
        "exec",
        "compile",
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.settrace",
        "sys.setprofile",
        "sys.addaudithook",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "code.__new__",
        "function.__new__",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.dlsym/handle",
        "ctypes.cdata",
        "ctypes.cdata/buffer",
        "ctypes.addressof",
        "ctypes.call_function",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "ctypes.get_errno",
        "ctypes.set_errno",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "os.putenv",
        "os.unsetenv",
        "subprocess.Popen",
        "signal.pthread_kill",
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "pty.spawn",
        "mmap.__new__",
        "sys.unraisablehook",
        "sys.excepthook",
        "cpython.PyInterpreterState_Clear",
        "cpython.run_command",
        "cpython.run_file",
        "builtins.input",
        "pickle.find_class",
    }
)
# Standard-library modules that compile code, read a caller's frame or set up a class for their
# own purposes (dataclasses' generated methods, typing's and enum's module names, namedtuple's
# class and its __module__) and hand the candidate neither a frame nor code of its choosing
# beyond what its own source could say: an event they raise themselves is theirs. The events
# stay refused where the candidate raises them directly or through a module that returns what
# it got (inspect, code, runpy).
BENIGN_RAISERS = (
    "typing.py",
    "dataclasses.py",
    "enum.py",
    "collections/__init__.py",
    "warnings.py",
)
BENIGN_EVENTS = frozenset({"exec", "compile", "sys._getframe"})

# Attributes whose reading or writing (object.__getattr__ / __setattr__ events) reach code and
# frames.
BLOCKED_ATTRIBUTES = frozenset(
    {"__code__", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "tb_frame"}
)
# Modules a candidate may not import (only modules not yet loaded raise the import event).
BLOCKED_IMPORTS = frozenset(
    {
        "ctypes",
        "subprocess",
        "socket",
        "multiprocessing",
        "signal",
        "pty",
        "pickle",
        "marshal",
        "code",
        "codeop",
        "runpy",
        "gc",
        "resource",
        "mmap",
        "shutil",
        "urllib",
        "http",
        "asyncio",
        "concurrent",
        "threading",
        "_thread",
        "kgym",
        "importlib",
        "zipimport",
        "webbrowser",
    }
)


# Events that start processes or load native code. Triton does these while it compiles a
# kernel (gcc for its launcher, ptxas), so Triton's frames vouch for them only while a launch is
# in progress; outside one, a candidate calling Triton's build helpers is the candidate.
NATIVE_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "ctypes.dlopen",
    }
)


def _prefixes() -> tuple[tuple[str, ...], str, str]:
    """(installed, triton, kgym): path prefixes of the installed Python code (the standard
    library and site-packages, which the candidate cannot write), Triton's and kgym's."""
    import triton

    import kgym

    paths = sysconfig.get_paths()
    installed = {paths[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return (
        tuple(sorted(installed)),
        os.path.dirname(triton.__file__) + os.sep,
        os.path.dirname(kgym.__file__) + os.sep,
    )


def install(
    candidate_file: str, report_fd: int, protected: list[str], in_launch: Callable[[], bool]
) -> None:
    """Adds the hook. ``protected``: path prefixes no one in this process may open;
    ``in_launch``: whether a Triton kernel launch is in progress.

    Long on purpose: the hook is one closure over the prefixes computed here, so that the
    candidate reaches no module-level state of it; its event table reads best in one place."""
    installed, triton_dir, kgym_dir = _prefixes()
    candidate_file = os.path.realpath(candidate_file)
    # Where the candidate may write: its runner's directory (the cwd), and device nodes.
    own_dir = os.path.realpath(os.getcwd()) + os.sep
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    get_frame: Callable[[int], Any] = sys._getframe
    exit_now = os._exit
    write = os.write
    busy = [False]
    stdlib = sysconfig.get_paths()["stdlib"] + os.sep
    benign = tuple(stdlib + name for name in BENIGN_RAISERS)

    def raised_by_benign_library() -> bool:
        """Walking out from the event through the standard library, one of BENIGN_RAISERS is
        met before any other code (``dataclass`` calling ``inspect.signature``, say)."""
        frame = get_frame(2)
        while frame is not None and frame.f_code.co_filename.startswith(stdlib):
            if frame.f_code.co_filename.startswith(benign):
                return True
            frame = frame.f_back
        return False

    def candidate_origin(triton_vouches: bool = True) -> bool:
        """Walking out from the event: the candidate's frame before kgym's, before the body of
        an installed module being imported, or (when it vouches) before Triton's. Other frames
        of the standard library, torch and importlib are looked through: a candidate can call
        into them to launder a request."""
        frame = get_frame(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename == candidate_file:
                return True
            if filename.startswith(kgym_dir):
                return False
            if triton_vouches and filename.startswith(triton_dir):
                return False
            # The top-level code of an installed module being imported (the import event
            # already decided whether the candidate may import it).
            if frame.f_code.co_name == "<module>" and filename.startswith(installed):
                return False
            frame = frame.f_back
        return False

    def stop(event: str, detail: str) -> None:
        try:
            write(report_fd, f"{event}: {detail}"[:500].encode(errors="replace") + b"\n")
        finally:
            exit_now(AUDIT_EXIT_CODE)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if busy[0]:
            return
        busy[0] = True
        try:
            if event == "open":
                path = args[0]
                if is_a(path, (str, bytes)):
                    real = os.path.realpath(os.fsdecode(path))
                    if real.startswith(tuple(protected)):
                        stop(event, f"opened {real}")
                    # A write outside its directory fails anyway (the job's view is read-only
                    # there and the write fence refuses it); trying is an attempt on the host.
                    flags = args[2] if len(args) > 2 and is_a(args[2], int) else 0
                    if (
                        flags & writes
                        and not (real + os.sep).startswith(own_dir)
                        and not real.startswith("/dev/")
                        and candidate_origin()
                    ):
                        stop(event, f"write outside its directory: {real}")
                return
            if event in ("object.__getattr__", "object.__setattr__", "object.__delattr__"):
                if raised_by_benign_library():
                    return  # a class namedtuple or dataclass makes, set up by them
                target, name = args[0], args[1]
                sets_type = event != "object.__getattr__" and is_a(target, type)
                if (name in BLOCKED_ATTRIBUTES or sets_type) and candidate_origin():
                    stop(event, f"{name} of {type(target).__name__}")
                return
            if event == "import":
                name = str(args[0])
                filename = args[1] if len(args) > 1 else None
                # A module from outside the installed code: one the candidate wrote itself.
                foreign = is_a(filename, str) and not filename.startswith(installed)
                if name.split(".")[0] in BLOCKED_IMPORTS or foreign:
                    if candidate_origin(triton_vouches=not foreign or in_launch()):
                        stop(event, f"{name} ({filename})")
                return
            if event == "exec":
                # The code of an installed module being imported (a lazy import inside torch).
                code_file = getattr(args[0], "co_filename", "")
                if code_file.startswith(installed):
                    return
            if event in NATIVE_EVENTS:
                if candidate_origin(triton_vouches=in_launch()):
                    stop(event, repr(args)[:200])
                return
            if event in BENIGN_EVENTS and raised_by_benign_library():
                return
            if event in BLOCKED_EVENTS and candidate_origin():
                stop(event, repr(args)[:200])
        finally:
            busy[0] = False

    sys.addaudithook(hook)
