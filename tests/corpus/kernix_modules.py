"""Which kernix module each brainevent `.cu` file is built into, read statically.

brainevent builds its kernels at run time with kernix's
`load_cuda_file(path, name=...)`: each call compiles one `.cu` file into a
module `name` (default: the file's stem), whose FFI targets are
`name.<function>`. This reads every `.py` file of the unpacked wheel with
`ast` (nothing is imported or run) except kernix itself (`_op/`) and the tests
(`*_test.py`, which call fakes), finds those calls, and evaluates their two
arguments with the little brainevent writes there:

- paths: `Path(__file__)`, `.parent`, `.resolve()`, `.joinpath(...)`, `/`,
  `.with_name(...)`, `.with_suffix(...)`, string constants;
- names: string constants and `+`, plus a call to `module_suffix_for_config`
  at the end, which appends the hybrid scheduler's configuration at run time
  (`csr_binary_csrmv_hybrid` + `_b.._s.._t.._n..`): the static part is kept
  as the name and the call is recorded as a run-time suffix;
- a local or module-level variable: its last assignment before the call in
  the enclosing function, else in the module;
- `A if cond else B`: both branches; the same condition in the path and the
  name takes the same branch in both.

Anything else is reported as unresolved, never guessed. A file can be loaded
under several names (the autotuner builds the hybrid kernels as a separate
`..._tune` module) and a name can be given to several files; `choose` picks one
name per file: a name kernix gives to that file only, then the one with most
call sites, then the first alphabetically.

usage: python tests/corpus/kernix_modules.py [--cache DIR]   # print the mapping
"""

import argparse
import ast
import collections
import dataclasses
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import brainevent_corpus as bc  # noqa: E402

LOADER = "load_cuda_file"
# kernix's other loaders: a call to one of these outside kernix is reported,
# since this module does not evaluate them.
OTHER_LOADERS = ("load_cuda_dir", "load_cuda_inline", "load_cpp_file", "load_cpp_inline")
# Calls whose value is appended to a module name at run time.
RUNTIME_SUFFIXES = ("module_suffix_for_config",)


@dataclasses.dataclass(frozen=True)
class Load:
    """One `load_cuda_file` call, for one assumption about its conditions."""
    file: str          # the `.cu` file, relative to the package
    name: str          # the module name without its run-time suffix
    suffix: str | None  # the run-time suffix call as written, if any
    site: str          # `path.py:line` of the call


@dataclasses.dataclass
class Modules:
    """The extraction's result for a set of `.cu` files."""
    names: dict[str, Load]             # file -> the name chosen for it
    loads: dict[str, list[Load]]       # file -> every call that loads it
    unnamed: list[str]                 # files no call loads
    shared: dict[str, list[str]]       # name -> the files kernix gives it (more than one)
    outside: list[Load]                # calls loading a file not in the set
    problems: list[str]                # calls that could not be evaluated


class Unresolved(Exception):
    """An expression this module does not evaluate."""


class NeedsBranch(Exception):
    """A conditional expression was met whose branch has not been chosen yet."""

    def __init__(self, test: str):
        super().__init__(test)
        self.test = test


@dataclasses.dataclass(frozen=True)
class Suffixed:
    """A module name with a part appended at run time."""
    base: str
    suffix: str


def extract(package: pathlib.Path) -> tuple[list[Load], list[str]]:
    """Every `load_cuda_file` call of the package, evaluated; and what could not be."""
    loads, problems = [], []
    for py in sorted(package.rglob("*.py")):
        rel = py.relative_to(package)
        if rel.parts[0] == "_op" or py.name.endswith("_test.py") or py.name.startswith("test_"):
            continue
        tree = ast.parse(py.read_text(encoding="utf-8"), filename=str(py))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for call in ast.walk(tree):
            called = _called_name(call)
            if called in OTHER_LOADERS:
                problems.append(f"{rel}:{call.lineno}: {called}(...) is not evaluated here")
            if called != LOADER:
                continue
            site = f"{rel.as_posix()}:{call.lineno}"
            try:
                loads.extend(_evaluate_call(call, _Scope(tree, parents, call, rel), site))
            except Unresolved as e:
                problems.append(f"{site}: cannot evaluate `{ast.unparse(call)}`: {e}")
    return loads, problems


def module_names(corpus: pathlib.Path) -> Modules:
    """The kernix module of each annotated `.cu` file of the corpus."""
    files = [p.relative_to(corpus).as_posix() for p in bc.sources(corpus)]
    loads, problems = extract(bc.package_dir(corpus))
    by_file = collections.defaultdict(list)
    for load in loads:
        by_file[load.file].append(load)
    owners = collections.defaultdict(set)
    for load in loads:
        owners[load.name].add(load.file)
    return Modules(
        names={f: choose(by_file[f], owners) for f in files if by_file[f]},
        loads={f: by_file[f] for f in files if by_file[f]},
        unnamed=[f for f in files if not by_file[f]],
        shared={n: sorted(fs) for n, fs in sorted(owners.items()) if len(fs) > 1},
        outside=[load for load in loads if load.file not in files],
        problems=problems,
    )


def choose(loads: list[Load], owners: dict[str, set[str]]) -> Load:
    """One name for a file: one no other file gets, then the most used, then
    the first alphabetically."""
    count = collections.Counter(load.name for load in loads)
    best = min(count, key=lambda n: (len(owners[n]) > 1, -count[n], n))
    return next(load for load in loads if load.name == best)


def per_file_module(rel: str) -> str:
    """The module name begen's `modules: {per-file: true}` gives a file:
    extension dropped, leading underscores of each component dropped, the
    components joined by `_` (`_jit_uniform/csr.cu` -> `jit_uniform_csr`)."""
    parts = pathlib.PurePosixPath(rel).with_suffix("").parts
    return "_".join(part.lstrip("_") for part in parts)


def _called_name(node) -> str | None:
    """`f` for a call `f(...)` or `x.f(...)`; None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _evaluate_call(call: ast.Call, scope, site: str) -> list[Load]:
    """The (file, name) pairs one call can load: one per choice of the
    conditional expressions in its arguments."""
    if not call.args:
        raise Unresolved("no path argument")
    name_arg = next((k.value for k in call.keywords if k.arg == "name"), None)
    out, pending = [], [{}]
    while pending:
        branches = pending.pop()
        ev = _Evaluator(scope, branches)
        try:
            path = ev.path(call.args[0])
            name = ev.value(name_arg) if name_arg is not None else path.stem
        except NeedsBranch as b:
            pending += [dict(branches, **{b.test: True}), dict(branches, **{b.test: False})]
            continue
        if isinstance(name, Suffixed):
            name, suffix = name.base, name.suffix
        elif isinstance(name, str):
            suffix = None
        else:
            raise Unresolved(f"the name is not a string: {name!r}")
        out.append(Load(path.as_posix(), name, suffix, site))
    return sorted(set(out), key=lambda load: (load.file, load.name))


class _Scope:
    """Looks up a variable as it stands at one call: the enclosing functions'
    assignments before it, innermost first, then the module's."""

    def __init__(self, tree, parents, call, rel: pathlib.Path):
        self.file = pathlib.PurePosixPath(rel.as_posix())
        self.line = call.lineno
        self.scopes = []
        node = call
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                self.scopes.append(node)

    def lookup(self, name: str):
        for scope in self.scopes:
            found = [a for a in _assignments(scope, name)
                     if scope is not self.scopes[0] or a[0] < self.line]
            if found:
                return max(found, key=lambda a: a[0])[1]
        raise Unresolved(f"no assignment to `{name}` found")


def _assignments(scope, name: str):
    """(line, value) of each `name = value` directly in scope (not in nested
    functions or classes)."""
    out, todo = [], list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.AnnAssign) and node.value is not None \
                and isinstance(node.target, ast.Name) and node.target.id == name:
            out.append((node.lineno, node.value))
        todo.extend(ast.iter_child_nodes(node))
    return out


class _Evaluator:
    """Evaluates the path and name expressions of one call, for one choice of
    its conditional expressions (`branches`: condition's source -> taken)."""

    PATH_METHODS = ("joinpath", "with_name", "with_suffix", "resolve", "absolute")

    def __init__(self, scope: _Scope, branches: dict[str, bool]):
        self.scope = scope
        self.branches = branches

    def path(self, node) -> pathlib.PurePosixPath:
        v = self.value(node)
        if isinstance(v, str):
            v = pathlib.PurePosixPath(v)
        if not isinstance(v, pathlib.PurePosixPath):
            raise Unresolved(f"the path is not a path: {v!r}")
        return pathlib.PurePosixPath(os.path.normpath(v.as_posix()))

    def value(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr) \
                and all(isinstance(part, ast.Constant) for part in node.values):
            return "".join(part.value for part in node.values)
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return self.scope.file
            return self.value(self.scope.lookup(node.id))
        if isinstance(node, ast.IfExp):
            test = ast.unparse(node.test)
            if test not in self.branches:
                raise NeedsBranch(test)
            return self.value(node.body if self.branches[test] else node.orelse)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return self.path(node.value).parent
        if isinstance(node, ast.Call):
            return self._call(node)
        raise Unresolved(f"`{ast.unparse(node)}`")

    def _binop(self, node: ast.BinOp):
        left = self.value(node.left)
        if isinstance(node.op, ast.Add) and _called_name(node.right) in RUNTIME_SUFFIXES \
                and isinstance(left, str):
            return Suffixed(left, ast.unparse(node.right))
        right = self.value(node.right)
        if isinstance(node.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
            return left + right
        if isinstance(node.op, ast.Div) and isinstance(left, pathlib.PurePosixPath) \
                and isinstance(right, str):
            return left / right
        raise Unresolved(f"`{ast.unparse(node)}`")

    def _call(self, node: ast.Call):
        f = node.func
        args = [self.value(a) for a in node.args]
        if isinstance(f, ast.Name) and f.id in ("Path", "PurePath", "PosixPath") and len(args) == 1:
            return pathlib.PurePosixPath(args[0])
        if isinstance(f, ast.Attribute) and f.attr in self.PATH_METHODS and not node.keywords:
            base = self.path(f.value)
            if f.attr in ("resolve", "absolute") and not args:
                return base
            if f.attr == "joinpath" and all(isinstance(a, str) for a in args):
                return base.joinpath(*args)
            if f.attr == "with_name" and len(args) == 1:
                return base.with_name(args[0])
            if f.attr == "with_suffix" and len(args) == 1:
                return base.with_suffix(args[0])
        raise Unresolved(f"`{ast.unparse(node)}`")


def report(mods: Modules, verbose: bool = False) -> list[str]:
    """Lines describing the extraction: counts, every anomaly, and with
    `verbose` the name chosen for each file with its call sites."""
    every = [load for loads in mods.loads.values() for load in loads]
    nfiles = len(mods.names) + len(mods.unnamed)
    lines = [f"kernix modules: {len(mods.names)} of {nfiles} files named by "
             f"{len({load.site for load in every})} {LOADER} calls"]
    suffixes = sorted({load.suffix for load in every if load.suffix})
    if suffixes:
        nsuffixed = len({load.file for load in every if load.suffix})
        lines.append(f"  {nsuffixed} files have a run-time suffix on their name "
                     f"({', '.join(suffixes)}); the static part is used")
    for f in mods.unnamed:
        lines.append(f"  no {LOADER} call loads {f}")
    for f, loads in sorted(mods.loads.items()):
        others = sorted({load.name for load in loads} - {mods.names[f].name})
        if others:
            lines.append(f"  {f} is loaded under {len(others) + 1} names: "
                         f"{mods.names[f].name} (used), {', '.join(others)}")
    for name, files in mods.shared.items():
        lines.append(f"  one name for {len(files)} files: {name} <- {', '.join(files)}")
    for load in mods.outside:
        lines.append(f"  {load.site} loads {load.file}, not an annotated file of the corpus")
    for problem in mods.problems:
        lines.append(f"  UNRESOLVED {problem}")
    if verbose:
        for f, chosen in sorted(mods.names.items()):
            suffix = f" + {chosen.suffix}" if chosen.suffix else ""
            sites = sorted({load.site for load in mods.loads[f] if load.name == chosen.name},
                           key=_site_order)
            lines.append(f"    {f:48} {chosen.name}{suffix}   ({', '.join(sites)})")
    return lines


def _site_order(site: str):
    path, line = site.rsplit(":", 1)
    return path, int(line)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=pathlib.Path, default=bc.DEFAULT_CACHE)
    a = p.parse_args()
    try:
        corpus = bc.fetch(a.cache)
    except bc.Unavailable as e:
        print(f"kernix_modules: corpus unavailable: {e}", file=sys.stderr)
        return 3
    mods = module_names(corpus)
    print("\n".join(report(mods, verbose=True)))
    return 2 if mods.problems else 0


if __name__ == "__main__":
    sys.exit(main())
