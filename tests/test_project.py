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


def test_the_readme_is_short_and_every_link_of_it_and_of_docs_resolves():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) >= 9
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).is_file(), f"{page.name} links to {target}, which is no file"
