"""The import graph of eoc's own modules: no circle anywhere, and no import goes up a layer.

Every module under ``eoc/`` and ``native/eoc_native/`` is parsed (never imported), and every
``import`` in it counts, at module level or inside a function (a lazy import still ties the two
modules together; one under ``if TYPE_CHECKING`` too). ``from a.b import c`` is an edge to
``a.b.c`` when that is a module, else to ``a.b``; relative imports are resolved. A parent
package that Python runs on the way (``a/__init__.py`` for ``a.b``) is not an edge: a package
importing its own submodules is no circle.

The layers, lowest first: the core (``eoc``, which never imports the native extra; see also
tests/native/test_plugins.py) and, inside ``eoc_native``, :data:`NATIVE_LAYERS`.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

CORE = "eoc"
NATIVE = "eoc_native"

CORE_LAYERS = ("eoc.files", "eoc.text", "eoc.store", "eoc.stages")
"""The core's floors, lowest first: reading files safely, text helpers, then the stores (where
answers live), then the stages that read and write through them. A store never imports a stage,
nor text a store, nor the file floor anything above it. The
root modules (the public face: query, cost, errors, partition, ...) and the cascade, assembly and
commands above are not ranked."""

NATIVE_LAYERS = ("eoc_native.quant", "eoc_native.backends", "eoc_native.autotune", "eoc_native.llm")
"""Lowest first: a module of one may import its own layer's and lower layers' modules, never a
higher one's. The block formats and kernels (quant) sit below the matmul backends, which never
import the model runner (llm); the autotuner dispatches to the backends and the runner uses it.
Packages not listed (counters, serve, store, ...) are not ranked."""


def _source_dir(package: str) -> Path | None:
    """Where ``package``'s source files are (the checkout's, in an editable install)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def modules(roots: Mapping[str, Path]) -> dict[str, tuple[Path, bool]]:
    """Every module under each root: dotted name -> (file, whether it is a package)."""
    out: dict[str, tuple[Path, bool]] = {}
    for top, base in roots.items():
        for path in sorted(base.rglob("*.py")):
            parts = [top, *path.relative_to(base).with_suffix("").parts]
            package = parts[-1] == "__init__"
            if package:
                parts.pop()
            out[".".join(parts)] = (path, package)
    return out


def imports_of(name: str, path: Path, package: bool, known: Iterable[str]) -> set[str]:
    """The first-party modules ``name`` imports, anywhere in its file."""
    known = set(known)
    here = name if package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    out.add(f"{target}.{alias.name}")
                elif target in known:
                    out.add(target)
    out.discard(name)
    return out


def import_graph(roots: Mapping[str, Path]) -> dict[str, set[str]]:
    """Module -> the first-party modules it imports."""
    found = modules(roots)
    return {name: imports_of(name, path, pkg, found) for name, (path, pkg) in found.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected component of more than one module, as a path
    ``a -> b -> ... -> a`` (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    components.append(_circle(graph, set(component)))
    return components


def _circle(graph: Mapping[str, set[str]], component: set[str]) -> list[str]:
    """A shortest circle through the component's first module (breadth first)."""
    start = min(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"no circle in {sorted(component)}")  # pragma: no cover


def layer(module: str, layers: tuple[str, ...]) -> int | None:
    """The rank of ``module``'s layer, ``None`` when it is in none."""
    for rank, prefix in enumerate(layers):
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None


def upward(graph: Mapping[str, set[str]], layers: tuple[str, ...]) -> list[str]:
    """Every import from a module of one layer into a higher layer."""
    bad = []
    for a, targets in sorted(graph.items()):
        ra = layer(a, layers)
        for b in sorted(targets):
            rb = layer(b, layers)
            if ra is not None and rb is not None and rb > ra:
                bad.append(f"{a} ({layers[ra]}) imports {b} ({layers[rb]})")
    return bad


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    roots = {CORE: _source_dir(CORE)}
    native = _source_dir(NATIVE)
    if native is not None:
        roots[NATIVE] = native
    found = {top: base for top, base in roots.items() if base is not None}
    assert CORE in found
    return import_graph(found)


def _needs_native(graph: Mapping[str, set[str]]) -> None:
    if not any(m == NATIVE or m.startswith(NATIVE + ".") for m in graph):
        pytest.skip("the native extra's sources are not here")


def test_the_graph_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg import a\n")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import c\nimport pkg.sub\n")
    (pkg / "c.py").write_text("from pkg.sub.b import x\n")
    g = import_graph({"pkg": pkg})
    assert g == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.sub.b"},
        "pkg.c": {"pkg.sub.b"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.c", "pkg.sub"},
    }
    assert cycles(g) == [["pkg.c", "pkg.sub.b", "pkg.c"]]
    assert upward(g, ("pkg.sub", "pkg.c")) == ["pkg.sub.b (pkg.sub) imports pkg.c (pkg.c)"]


def test_no_import_circle(graph: dict[str, set[str]]) -> None:
    """A circle, even through a function-level import, is two modules that cannot be
    understood, tested or loaded one without the other: move the shared piece down."""
    assert len(graph) > 50
    found = [" -> ".join(c) for c in cycles(graph)]
    assert found == [], "import circles:\n" + "\n".join(found)


def test_the_core_never_imports_the_native_extra(graph: dict[str, set[str]]) -> None:
    bad = [
        f"{a} imports {b}"
        for a, targets in sorted(graph.items())
        if layer(a, (CORE,)) is not None
        for b in sorted(targets)
        if layer(b, (CORE,)) is None
    ]
    assert bad == []


def test_no_native_module_imports_a_higher_layer(graph: dict[str, set[str]]) -> None:
    _needs_native(graph)
    for prefix in NATIVE_LAYERS:
        assert prefix in graph, f"{prefix} is gone: update NATIVE_LAYERS"
    assert upward(graph, NATIVE_LAYERS) == []


def test_no_core_module_imports_a_higher_floor(graph: dict[str, set[str]]) -> None:
    """The stores are below the stages: a new store is one module that needs no stage."""
    for prefix in CORE_LAYERS:
        assert prefix in graph, f"{prefix} is gone: update CORE_LAYERS"
    assert upward(graph, CORE_LAYERS) == []
