"""The shape of lib/wismo: one package per concern and nothing else at the top level, packages importing one way
(lazy imports included), no import circle between modules, every module in the layout of
docs/architecture.md, nothing read from tests/, and the fixtures found only through WISMO_FIXTURES."""

import ast
import functools
import importlib
import re
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib" / "wismo"
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


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


@functools.cache
def graph() -> dict[str, set[str]]:
    """Each module's wismo imports, read when a test first asks (not as the suite is collected, by both workers)."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles() -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph()[v]:
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

    for v in graph():
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    # A package importing its own submodules (wismo.reports -> wismo.reports.x) is not a circle of modules.
    assert _cycles() == []


# The packages from the floor up: each imports only packages below it (lazy imports included), so no two packages
# import each other, directly or around a loop. docs/architecture.md's layout lists them in this order.
LAYERS = (
    "core",
    "domain",
    "accounting",
    "mcp",
    "studies",
    "runs",
    "checks",
    "reports",
    "bench",
    "cli",
)
TOP_LEVEL = {"__init__.py", "__main__.py"}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (LIB / parts[1]).is_dir()) else ""


def test_nothing_at_the_top_level_but_the_public_api():
    extra = sorted(p.name for p in LIB.glob("*.py") if p.name not in TOP_LEVEL)
    assert not extra, f"modules at the top level of lib/wismo: {extra}; put each in the package of its concern"
    packages = sorted(p.name for p in LIB.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert packages == sorted(LAYERS), f"packages {packages} differ from the declared layers {sorted(LAYERS)}"


def test_every_package_says_its_job_in_one_line():
    for name in LAYERS:
        doc = ast.get_docstring(ast.parse((LIB / name / "__init__.py").read_text(encoding="utf-8")))
        assert doc and doc.splitlines()[0].strip(), f"wismo.{name}'s __init__ has no one-line docstring"


def test_packages_import_one_way():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = []
    for name, imported in graph().items():
        mine = _package(name)
        for target in imported:
            theirs = _package(target)
            if mine and theirs and theirs != mine and rank[theirs] > rank[mine]:
                upward.append(f"{name} imports {target} ({mine} is below {theirs})")
    assert not upward, upward


def test_the_core_imports_nothing_above_it():
    for name, imported in graph().items():
        if _package(name) == "core":
            assert all(_package(t) == "core" or t == "wismo" for t in imported), f"{name} imports {imported}"


def test_the_library_reads_nothing_from_the_tests_folder():
    for path in LIB.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"""["'/]tests[/"']|parents\[\d\] / "tests"|"tests" /""", text), (
            f"{path} reaches into tests/"
        )


def test_every_reader_of_the_fixtures_honours_wismo_fixtures():
    # Only core/paths.py names the fixtures folder; everything else asks fixtures_dir(), which reads WISMO_FIXTURES.
    for path in LIB.rglob("*.py"):
        if path.name == "paths.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"""DATA\s*/\s*["']fixtures|DEFAULT_FIXTURES""", text), (
            f"{path} reads the fixtures past WISMO_FIXTURES"
        )


def test_readme_layout_lists_every_module():
    layout = ARCHITECTURE.read_text(encoding="utf-8").split("## Layout", 1)[1]
    missing = []
    for path in MODULES.values():
        rel = path.relative_to(LIB.parent.parent).as_posix()  # lib/wismo/...
        if path.name in ("__init__.py", "__main__.py"):
            continue
        if not re.search(rf"(?<![\w/]){re.escape(path.stem)}\.py\b", layout) and rel not in layout:
            missing.append(rel)
    assert not missing, f"docs/architecture.md's layout does not mention {missing}"


def test_readme_states_the_package_order():
    assert " < ".join(LAYERS) in ARCHITECTURE.read_text(encoding="utf-8"), "the layout must state LAYERS in order"


def _string_constants(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module's code, docstrings left out (they may show a study file as an example)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_one_path_for_every_study():
    """No branch on whether a study is the article's, and no name of a design wismo serves written in library code
    outside the servers that declare them (everything else reads the study or the registry)."""
    from wismo.mcp.servers import designs

    served = {d.name for d in designs.BUILT_IN}
    found = []
    for path in sorted(LIB.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "is_article" in text:
            found.append(f"{path.relative_to(LIB)}: is_article")
        if path.relative_to(LIB).parts[:2] == ("mcp", "servers"):
            continue
        found += [
            f"{path.relative_to(LIB)}:{line}: {value!r}"
            for line, value in _string_constants(path)
            if value in served and value != "scoped"  # "scoped" is also the case study's own design, not ours
        ]
    assert not found, found


def test_an_input_error_becomes_exit_2_in_one_place():
    # Every command raises InputError for input it cannot use; only the entry point turns it into a sentence and 2.
    entry = importlib.import_module("wismo.cli.main")
    from wismo.core.errors import InputError, WismoError

    returning_2 = sorted(
        p.name for p in (LIB / "cli").glob("*.py") if re.search(r"^\s*return 2\b", p.read_text(), re.M)
    )
    assert returning_2 == ["main.py"]
    assert entry.is_input_error(InputError("x")) and not entry.is_input_error(WismoError("x"))
    assert not entry.is_input_error(ValueError("x"))  # a plain ValueError is a bug, shown as a traceback


def test_any_is_rare_in_the_library():
    # Typed results: `Any` at most 20 times per 1,000 lines of lib/wismo (mypy strict checks every other use).
    sources = [p.read_text(encoding="utf-8") for p in LIB.rglob("*.py")]
    lines = sum(s.count("\n") for s in sources)
    uses = sum(len(re.findall(r"\bAny\b", s)) for s in sources)
    assert uses * 1000 <= 20 * lines, f"Any {uses} times in {lines:,} lines ({uses * 1000 / lines:.1f} per 1,000)"


def test_nothing_reaches_into_the_import_machinery_or_the_interpreters_shutdown():
    # No stand-in modules in sys.modules, no os._exit, no paused or frozen collector: the SDK and every other
    # dependency are imported as they are, and a process ends as Python ends it.
    found = [
        f"{p.relative_to(LIB)}:{n}"
        for p in sorted(LIB.rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(r"sys\.modules\s*(\[[^]]*\]\s*=|\.setdefault|\.update|\.pop)|os\._exit|gc\.(freeze|disable)", line)
    ]
    assert found == []
