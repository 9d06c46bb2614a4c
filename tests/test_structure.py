"""The shape of lib/wismo: no import circle (lazy imports included), no module over 400 lines, every module in the
README's layout, and low floors that know nothing of high ones."""

import ast
import re
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib" / "wismo"
README = Path(__file__).resolve().parents[1] / "README.md"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = path.relative_to(LIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(LIB.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """Every wismo module `name` imports, at top level or inside a function, resolved to a module of the package."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for target in targets:
            while target and target not in MODULES:
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if target and target != name and not name.startswith(target + "."):
                found.add(target)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles() -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    # A package importing its own submodules (wismo.reports -> wismo.reports.x) is not a circle of modules.
    assert _cycles() == []


def test_no_module_over_400_lines():
    long = {name: n for name, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


@pytest.mark.parametrize("low, high", [
    ("wismo.paths", "wismo"), ("wismo.clock", "wismo"), ("wismo.designs", "wismo"),
    ("wismo.domain", "wismo.harness"), ("wismo.servers", "wismo.harness"), ("wismo.servers", "wismo.agent"),
    ("wismo.servers", "wismo.reports"), ("wismo.runs", "wismo.agent.loop"), ("wismo.runs", "wismo.harness"),
])
def test_low_floors_know_nothing_of_high_ones(low, high):
    for name, imported in GRAPH.items():
        if name == low or name.startswith(low + "."):
            bad = {m for m in imported if m == high or m.startswith(high + ".")} - {low}
            if high == "wismo":  # a leaf imports nothing of the package at all
                bad = {m for m in imported if m != name}
            assert not bad, f"{name} imports {sorted(bad)}"


def test_readme_layout_lists_every_module():
    layout = README.read_text(encoding="utf-8").split("## Layout", 1)[1]
    missing = []
    for name, path in MODULES.items():
        rel = path.relative_to(LIB.parent.parent).as_posix()  # lib/wismo/...
        if path.name in ("__init__.py", "__main__.py"):
            continue
        if not re.search(rf"(?<![\w/]){re.escape(path.stem)}\.py\b", layout) and rel not in layout:
            missing.append(rel)
    assert not missing, f"README's layout does not mention {missing}"
