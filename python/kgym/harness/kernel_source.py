"""What the candidate's ``@triton.jit`` bodies are made of, read from its source by the judge.

Two checks that need no candidate code to run:

- **kernel-not-triton**: a kernel body may use only Triton (``triton``, ``triton.language`` and
  its extras), other kernels, module constants, its own names and the few builtins Triton
  compiles. On a GPU anything else fails to compile; under the CPU interpreter a body is plain
  Python, where torch, numpy or a helper function would compute the answer outside Triton.
- **low precision**: the reduced-precision types (fp16, bf16, fp8) a body names, so that the
  precision policy can refuse them on a float32 task.

A module that rebinds a Triton name, or sets an attribute on a Triton module, makes every body
that uses it suspect: the names are resolved from every binding in the module, not the first.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import sys
import types
from dataclasses import dataclass, field
from typing import Any

# Builtins Triton's front end accepts inside a kernel.
KERNEL_BUILTINS = frozenset(
    {"range", "min", "max", "len", "int", "float", "bool", "print", "isinstance", "abs", "tuple"}
)
LOW_PRECISION_TYPES = frozenset(
    {
        "float16",
        "bfloat16",
        "float8e4nv",
        "float8e5",
        "float8e4b15",
        "float8e4b8",
        "float8e5b16",
        "float8_e4m3fn",
        "float8_e5m2",
        "fp16",
        "bf16",
        "fp8e4nv",
        "fp8e5",
    }
)
# Attributes of a kernel's values that belong to the interpreter, not to Triton's language.
INTERPRETER_ATTRIBUTES = frozenset({"handle", "data"})
# Triton's modules that are not its language: a kernel body that reaches one reaches Python
# (``triton.runtime.interpreter.np``, numpy by another name, and the interpreter's tensors).
NOT_LANGUAGE = frozenset(
    {
        "runtime",
        "testing",
        "tools",
        "compiler",
        "backends",
        "knobs",
        "profiler",
        "_C",
        "interpreter",
    }
)


@dataclass
class KernelSource:
    findings: list[dict[str, object]] = field(default_factory=list)
    low_precision: list[str] = field(default_factory=list)  # "name (line N)"
    # The bodies read: (name, first line, def line), the first line its first decorator's. A
    # kernel launched from another function of the candidate's file (``triton.jit(fn)`` called,
    # not written as a decorator) was not read (judge/policy.py refuses it).
    bodies: list[tuple[str, int, int]] = field(default_factory=list)

    def read_body(self, name: str, line: int) -> bool:
        """Whether a function ``name`` whose code starts at ``line`` is a body read here."""
        return any(n == name and first <= line <= last for n, first, last in self.bodies)


def _finding(line: int, detail: str) -> dict[str, object]:
    return {"rule": "kernel-not-triton", "severity": "reject", "line": line, "detail": detail}


def _decorated_jit(
    node: ast.FunctionDef | ast.AsyncFunctionDef, aliases: frozenset[str] = frozenset()
) -> bool:
    """Whether ``node`` is decorated with Triton's ``jit`` (by its name, or a name it was
    imported as: ``from triton import jit as tjit``)."""
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        text = ast.unparse(target)
        if text.split(".")[-1] == "jit" or text in aliases:
            return True
    return False


def _jit_aliases(tree: ast.Module) -> frozenset[str]:
    """The names Triton's ``jit`` was imported as."""
    return frozenset(
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "triton"
        for alias in node.names
        if alias.name == "jit" and alias.asname
    )


def _module_bindings(tree: ast.Module) -> dict[str, list[str]]:
    """Every kind of binding each module-level name has: 'triton' (an import of Triton),
    'kernel', 'constant', or 'other'."""
    kinds: dict[str, list[str]] = {}
    aliases = _jit_aliases(tree)

    def add(name: str, kind: str) -> None:
        kinds.setdefault(name, []).append(kind)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                bound = alias.name if alias.asname else alias.name.split(".")[0]
                add(name, "triton" if _language(_imported(bound)) else "other")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            for alias in node.names:
                bound = _imported(module, alias.name) if not node.level else _NOT_FOUND
                add(alias.asname or alias.name, "triton" if _language(bound) else "other")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            add(node.name, "kernel" if _decorated_jit(node, aliases) else "other")
        elif isinstance(node, ast.ClassDef):
            add(node.name, "other")
        elif isinstance(node, ast.Global):
            for name in node.names:
                add(name, "other")
    triton_names = frozenset(name for name, of in kinds.items() if set(of) == {"triton"})
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for name_node in ast.walk(target):
                if isinstance(name_node, ast.Name):
                    add(name_node.id, "constant" if _constant(value, triton_names) else "other")
    # Loop and with targets at module level rebind names too (nested scopes do it only through
    # `global`, counted above).
    for node in tree.body:
        bound: list[ast.expr] = []
        if isinstance(node, ast.For):
            bound = [node.target]
        elif isinstance(node, ast.With):
            bound = [item.optional_vars for item in node.items if item.optional_vars is not None]
        for target in bound:
            for name_node in ast.walk(target):
                if isinstance(name_node, ast.Name):
                    add(name_node.id, "other")
    return kinds


_NOT_FOUND = object()


def _imported(module: str, name: str | None = None) -> Any:
    """What ``import module`` (or ``from module import name``) binds, for a Triton module
    (``_NOT_FOUND`` for any other, or where it does not import): read by the judge, which
    runs no candidate code."""
    if module.split(".")[0] != "triton":
        return _NOT_FOUND
    try:
        found: Any = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a module Triton does not have binds nothing of it
        return _NOT_FOUND
    if name is None:
        return found
    held = getattr(found, name, _NOT_FOUND)
    if held is _NOT_FOUND:
        try:
            held = importlib.import_module(f"{module}.{name}")
        except Exception:  # noqa: BLE001
            return _NOT_FOUND
    return held


def _language(value: Any) -> bool:
    """Whether ``value`` is Triton's language a kernel may use: the ``triton`` package,
    a module of ``triton.language``, an object made there (its functions, dtypes, classes),
    or one of the ``triton`` package's own names (``triton.jit``, ``triton.cdiv``) that is no
    module. Not what a Triton module merely holds: ``triton.runtime.interpreter.np`` is
    numpy, ``triton.language.core.builtins`` Python's builtins."""
    if value is _NOT_FOUND:
        return False
    if isinstance(value, types.ModuleType):
        name = value.__name__
        return name == "triton" or name == "triton.language" or name.startswith("triton.language.")
    module = getattr(value, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(value), "__module__", "")
    if module.startswith("triton.runtime."):
        # A jit function of Triton's standard library (``tl.max``), wrapped by the runtime
        # (an InterpretedFunction under the interpreter): the function it wraps says where.
        module = getattr(getattr(value, "fn", None), "__module__", None) or module
    if module == "triton.language" or module.startswith("triton.language."):
        return True
    # A name triton.language itself exports, made elsewhere (``tl.PropagateNan``, an enum of
    # Triton's C++ IR), and its members (``tl.PropagateNan.ALL``).
    language = sys.modules.get("triton.language")
    exported = [getattr(language, n, None) for n in getattr(language, "__all__", ())]
    if any(value is v or type(value) is v for v in exported if v is not None):
        return True
    triton = sys.modules.get("triton")
    return triton is not None and any(value is v for v in vars(triton).values())


def _chain(node: ast.Attribute) -> tuple[str, list[str]] | None:
    """``tl.core.builtins`` as ("tl", ["core", "builtins"]); None for a chain on no name."""
    attrs: list[str] = []
    value: ast.expr = node
    while isinstance(value, ast.Attribute):
        attrs.insert(0, value.attr)
        value = value.value
    return (value.id, attrs) if isinstance(value, ast.Name) else None


def _reaches_beyond_language(root: Any, attrs: list[str]) -> str | None:
    """The first attribute of a chain from a Triton name that leaves Triton's language
    (``_language``), or None (also where an attribute does not exist: that does not
    compile, and runs nothing)."""
    value = root
    for attr in attrs:
        value = getattr(value, attr, _NOT_FOUND)
        if value is _NOT_FOUND:
            return None
        if not _language(value) and isinstance(value, types.ModuleType):
            return attr
        if not _language(value) and not _held_by_language(value):
            return attr
    return None


def _held_by_language(value: Any) -> bool:
    """A value a Triton object holds that Triton's compiler takes as it is: a number, a
    string, a dtype's field (``tl.float32.primitive_bitwidth``)."""
    return type(value) in (int, float, bool, str, type(None))


def _triton_roots(tree: ast.Module, triton_names: set[str]) -> dict[str, Any]:
    """What each name bound to Triton's language is bound to."""
    roots: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                bound = alias.name if alias.asname else alias.name.split(".")[0]
                if name in triton_names:
                    roots[name] = _imported(bound)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for alias in node.names:
                name = alias.asname or alias.name
                if name in triton_names:
                    roots[name] = _imported(node.module or "", alias.name)
    return roots


def _compiled_nodes() -> frozenset[str]:
    """The syntax Triton's compiler takes: the node types its code generator visits (any
    other it refuses as an unsupported AST node), and the parts those read themselves
    (operators, contexts, arguments). Read from the installed Triton."""
    try:
        from triton.compiler.code_generator import CodeGenerator
    except Exception:  # noqa: BLE001 - no compiler to read: no syntax is refused by it
        return frozenset()
    visited = {
        name.removeprefix("visit_") for name in dir(CodeGenerator) if name.startswith("visit_")
    }
    return frozenset(visited)


_COMPILED = _compiled_nodes()
# Parts of the syntax a visited node reads itself rather than visits.
_READ_BY_PARENT = (
    ast.operator,
    ast.cmpop,
    ast.boolop,
    ast.unaryop,
    ast.expr_context,
    ast.comprehension,
    ast.keyword,
    ast.arg,
    ast.arguments,
    ast.withitem,
    ast.alias,
    ast.Starred,
)


def _compiled(node: ast.AST) -> bool:
    """Whether Triton's compiler takes ``node`` in a kernel body: a node type its code
    generator visits (not ``break``, a generator, a dict, a lambda, ``try``), and a ``for``
    over a call (``range``, ``tl.range``, ``tl.static_range``), never over a list or a
    tuple's items."""
    if not _COMPILED or isinstance(node, _READ_BY_PARENT):
        return True
    if isinstance(node, ast.For) and not isinstance(node.iter, ast.Call):
        return False
    return type(node).__name__ in _COMPILED


def _constant(value: ast.expr | None, triton_names: frozenset[str] = frozenset()) -> bool:
    """A literal (number, string, bool, None, a tuple of them), or ``tl.constexpr`` of one or
    of an attribute of a Triton import (``tl.constexpr(tl.float16)``): not of any other name,
    which may be a Python function the kernel body would call as its constant under the
    interpreter."""
    if value is None:
        return False
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant):
        return True
    if isinstance(value, ast.Tuple):
        return all(_constant(v, triton_names) for v in value.elts)
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("constexpr"):
        return all(_constant(a, triton_names) or _of_triton(a, triton_names) for a in value.args)
    return False


def _of_triton(value: ast.expr, triton_names: frozenset[str]) -> bool:
    """``tl.float16``: a chain of attributes of a name Triton was imported as, no call."""
    if not isinstance(value, ast.Attribute):
        return False
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name) and value.id in triton_names


def _constant_values(tree: ast.Module) -> dict[str, list[ast.expr]]:
    values: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                values.setdefault(node.target.id, []).append(node.value)
    return values


def _low_precision_in(node: ast.AST) -> list[str]:
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in LOW_PRECISION_TYPES:
            found.append(f"{sub.attr} (line {sub.lineno})")
        elif isinstance(sub, ast.Constant) and sub.value in LOW_PRECISION_TYPES:
            found.append(f"{sub.value} (line {sub.lineno})")
    return found


def _locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    if fn.args.vararg:
        names.add(fn.args.vararg.arg)
    if fn.args.kwarg:
        names.add(fn.args.kwarg.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
    return names


def _triton_attribute_stores(tree: ast.Module, triton_names: set[str]) -> list[int]:
    """Lines that set an attribute on a Triton module (``tl.where = ...``)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in triton_names:
                lines.append(node.lineno)
    return lines


def read(source: str) -> KernelSource:
    """The checks of every ``@triton.jit`` body in ``source`` (nothing for unreadable code:
    the screen reports it)."""
    out = KernelSource()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    kinds = _module_bindings(tree)
    triton_names = {n for n, k in kinds.items() if set(k) == {"triton"}}
    kernels = {n for n, k in kinds.items() if set(k) == {"kernel"}}
    constants = {n for n, k in kinds.items() if set(k) == {"constant"}}
    constant_values = _constant_values(tree)
    roots = _triton_roots(tree, triton_names)
    for line in _triton_attribute_stores(tree, triton_names):
        out.findings.append(_finding(line, "the module sets an attribute of a Triton module"))
    aliases = _jit_aliases(tree)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _decorated_jit(
            fn, aliases
        ):
            continue
        first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        out.bodies.append((fn.name, first, fn.lineno))
        own = _locals(fn)
        out.low_precision += _low_precision_in(fn)
        allowed = own | triton_names | kernels | constants | KERNEL_BUILTINS
        for stmt in fn.body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    if node.id in constants and node.id not in own:
                        for value in constant_values.get(node.id, []):
                            out.low_precision += _low_precision_in(value)
                    if node.id not in allowed:
                        what = "builtin" if hasattr(builtins, node.id) else "name"
                        out.findings.append(
                            _finding(
                                node.lineno,
                                f"kernel {fn.name} uses the {what} '{node.id}', which is not "
                                "Triton (torch, numpy or Python code inside a kernel body)",
                            )
                        )
                elif not _compiled(node):
                    out.findings.append(
                        _finding(
                            node.lineno,
                            f"kernel {fn.name} holds {type(node).__name__}, which Triton's "
                            "compiler does not take (Python the interpreter alone would run)",
                        )
                    )
                elif isinstance(node, ast.Attribute):
                    chain = _chain(node)
                    beyond = None
                    if chain is not None and chain[0] in roots and chain[0] not in own:
                        beyond = _reaches_beyond_language(roots[chain[0]], chain[1])
                    if beyond is not None:
                        out.findings.append(
                            _finding(
                                node.lineno,
                                f"kernel {fn.name} reaches '{beyond}' of a Triton module, "
                                "which is not triton.language",
                            )
                        )
                    elif node.attr in NOT_LANGUAGE:
                        out.findings.append(
                            _finding(
                                node.lineno,
                                f"kernel {fn.name} reaches triton's '{node.attr}', which is "
                                "not triton.language",
                            )
                        )
                    elif node.attr in INTERPRETER_ATTRIBUTES or node.attr.startswith("__"):
                        out.findings.append(
                            _finding(
                                node.lineno,
                                f"kernel {fn.name} reads '.{node.attr}', the interpreter's "
                                "value behind a Triton tensor",
                            )
                        )
                elif isinstance(node, ast.JoinedStr) or (
                    isinstance(node, ast.BinOp)
                    and isinstance(node.op, ast.Mod)
                    and isinstance(node.left, ast.Constant)
                    and isinstance(node.left.value, str)
                ):
                    out.findings.append(
                        _finding(
                            node.lineno,
                            f"kernel {fn.name} formats a string (a tensor's text is its values)",
                        )
                    )
                elif isinstance(node, (ast.Global, ast.Nonlocal, ast.Lambda)):
                    out.findings.append(
                        _finding(node.lineno, f"kernel {fn.name} holds Python that is not Triton")
                    )
    # One finding per line is enough to read.
    seen: set[object] = set()
    unique = []
    for f in out.findings:
        if f["line"] not in seen:
            seen.add(f["line"])
            unique.append(f)
    out.findings = unique[:10]
    out.low_precision = sorted(set(out.low_precision))[:10]
    return out
