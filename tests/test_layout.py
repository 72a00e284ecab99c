"""The shape of the code, checked: what the layout promises stays true as the code grows.

* ``score`` is the base library and imports nothing from ``curate``;
* no import cycle between modules, counting imports made inside functions (which hide
  a cycle from Python but not from a reader);
* no module imports another module's private (``_``-prefixed) name: what two modules
  share is a public name of a module made for it;
* ``score/`` keeps a dozen modules at its top level and no module runs past 450 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPO

SRC = REPO / "src"
MAX_LINES = 450
MAX_TOP_LEVEL = 12


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import in ``module``,
    inside functions too; a name that is itself a module counts as that module."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in MODULES:
                    found.append((full, None, node.lineno))
                else:
                    found.append((target, alias.name, node.lineno))
    return found


def _graph() -> dict[str, set[str]]:
    return {m: {t for t, _, _ in _imports(m) if t in MODULES and t != m} for m in MODULES}


def test_score_imports_nothing_from_curate() -> None:
    wrong = [
        f"{m}:{line} imports {t}"
        for m in MODULES
        if m.startswith("score")
        for t, _, line in _imports(m)
        if t == "curate" or t.startswith("curate.")
    ]
    assert wrong == [], "\n".join(wrong)


def test_no_module_imports_itself_back_through_others() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == [], cycles


def test_no_module_takes_another_modules_private_name() -> None:
    wrong = [
        f"{m}:{line} imports {name} from {t}"
        for m in MODULES
        for t, name, line in _imports(m)
        if name is not None and name.startswith("_") and (t in MODULES)
    ]
    assert wrong == [], "\n".join(wrong)


def test_score_keeps_a_dozen_modules_at_its_top_level() -> None:
    top = sorted(p.name for p in (SRC / "score").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, top


def test_no_module_is_longer_than_one_sitting() -> None:
    long = {
        m: n
        for m, p in MODULES.items()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_curate_keeps_only_its_entry_points_at_its_top() -> None:
    """A new reader finds a stage by its folder: at the top of ``curate/`` sit only the
    package's entry points (the public API, the pipeline; the CLI is a folder)."""
    top = sorted(p.name for p in (SRC / "curate").glob("*.py"))
    assert top == ["__init__.py", "api.py", "pipeline.py"], top
