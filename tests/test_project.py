"""Project wiring a fresh clone depends on: pins agree, CI runs the README's command."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_has_the_same_pins_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = set(project["dependencies"]) | set(project["optional-dependencies"]["dev"])
    yml = set(re.findall(r"^\s+- ([A-Za-z0-9_.-]+==[^\s]+)$", (ROOT / "environment.yml").read_text(), re.M))
    assert pinned == yml
    lock = set((ROOT / "requirements.lock").read_text().split())
    assert pinned <= lock, pinned - lock


def test_ci_runs_make_test_and_readme_gives_the_two_commands():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    readme = (ROOT / "README.md").read_text()
    assert "make report" in readme and "make test" in readme


def test_a_wismo_process_imports_jsonschema_without_the_iri_grammar_it_never_uses():
    import json
    import subprocess
    import sys

    # rfc3987_syntax builds an Earley parser as it is imported (about 2 s of CPU); jsonschema uses it only for the
    # "iri" formats, and wismo validates its runs with no format checker at all.
    probe = "import sys, wismo, jsonschema, nbformat.validator; print(sys.modules['rfc3987_syntax'] is None)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr[-2000:]
    store = (ROOT / "lib" / "wismo" / "runs" / "store.py").read_text()
    assert "format_checker" not in store and "FormatChecker" not in store
    schemas = sorted((ROOT / "lib" / "wismo" / "runs" / "schemas").glob("*.schema.json"))
    assert schemas and not any('"iri' in json.dumps(json.loads(path.read_text())) for path in schemas)


def test_the_readme_is_short_and_every_link_of_it_and_of_docs_resolves():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) >= 9
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).is_file(), f"{page.name} links to {target}, which is no file"
