"""The studies shipped on servers nobody here wrote, which answer in text: the MCP reference filesystem server over
data/studies/filesystem/ (three designs, match = "text"), and the MCP reference git server on the repository the git
study builds (against a focused tool of our own). Each server is the pinned release `make peers` installs, run as its
own process over stdio; `wismo study run` executes the notebooks on each, as a user runs it.

The runs start together in one module-scoped fixture (the filesystem study, the same with one file left out of a
bulk read, the same with a link that follows nothing, and the git study), and the in-process comparisons run while
they go on."""

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import peers
from commands import Done, finished, listing, wismo, wismo_argv
from wismo.core.paths import OUTPUTS, REPO_ROOT
from wismo.studies import declaration

STUDIES = REPO_ROOT / "data" / "studies"
FILESYSTEM = STUDIES / "filesystem.toml"
GIT = STUDIES / "git-history.toml"
PLANTED = "the handbook, one file left out of the bulk read"
# The git study's repository is built the same way everywhere: these are its commits, newest first.
COMMITS = [
    "1025a258c5194dcef9a7a2295e3423c9d80e289d",
    "022b98e6842368c8d76c75b254e92bfff999437d",
    "40572f09676d06eaf12aef16c971216bb8505231",
    "3a1623f1da034873302396c98eaf302ad8926414",
    "030f24b02043a5790c7d189e2a0ff3fe7d563bba",
]


def relocated(study: Path, folder: Path, *edits: tuple[str, str]) -> Path:
    """A copy of a study file in `folder`, its relative paths made absolute (the servers and the tree stay where
    they are), with each (old, new) edit made once."""
    text = study.read_text(encoding="utf-8").replace("{folder}", str(study.parent))
    text = text.replace('"filesystem"]', f'"{STUDIES / "filesystem"}"]')
    for old, new in edits:
        assert text.count(old) == 1, f"{study.name} no longer has {old!r} once"
        text = text.replace(old, new)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / study.name
    path.write_text(text, encoding="utf-8")
    return path


PLANTED_CASE = f"""
[[cases]]
label = "{PLANTED}"
dir = "handbook"
files = ["handbook/expenses.md", "handbook/onboarding.md"]
"""
HANDBOOK_READS = [{"path": f"handbook/{name}.md"} for name in ("expenses", "holidays", "onboarding")]  # file order
LAST_CASE = 'files = ["recipes/bread.txt"]\n'
WALK_ENTRY = "pattern = '^\\[FILE\\] (.+)$', into = \"names\""


@dataclass
class Runs:
    done: dict[str, Done]
    out: dict[str, Path]
    outputs_before: dict
    outputs_after: dict

    def folder(self, name: str) -> Path:
        """Where the run wrote: its --out folder, or, for a run whose evidence differs, its staging folder (the last
        line names its index; the --out folder is left as it was)."""
        return self.out[name] if self.done[name].returncode == 0 else self.done[name].staged.parent

    def comparison(self, name: str) -> dict:
        return json.loads((self.folder(name) / "deterministic-comparison.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    """`wismo study run` on each shipped study and on two broken copies of the filesystem study, all at once."""
    peers.installed("peer-npm", "peer-git")
    root = tmp_path_factory.mktemp("peer-studies")
    files = {
        "filesystem": FILESYSTEM,
        "git": GIT,
        "planted": relocated(
            FILESYSTEM,
            root / "planted",
            ('files = ["recipes/bread.txt"]\n', 'files = ["recipes/bread.txt"]\n' + PLANTED_CASE),
        ),  # fmt: skip
        # The listing read as one text, and a from that finds nothing in text: the walk follows no file.
        "unfollowed": relocated(
            FILESYSTEM,
            root / "unfollowed",
            (WALK_ENTRY, 'read = "text", into = "names"'),
            ('from = "@"', 'from = "files"'),
        ),
    }
    before = listing(OUTPUTS)
    out = {name: root / f"{name}-out" for name in files}
    started = {}
    for name, path in files.items():
        one_at_a_time = ["--jobs", "1"] if name in ("planted", "unfollowed") else []  # 01 fails first, 02 never runs
        started[name] = wismo(root / f"{name}-logs", "study", "run", str(path), "--out", str(out[name]), *one_at_a_time)
    return Runs(finished(started), out, before, listing(OUTPUTS))


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_the_filesystem_study_holds_the_walks_texts_in_every_design(runs):
    done = runs.done["filesystem"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "3 reports" not in done.stdout and "2 reports for A team's folders" in done.stdout
    assert "found nothing to follow" not in done.stderr
    result = runs.comparison("filesystem")
    summary = result["summary"]
    assert (summary["designs"], summary["reference"], summary["allEqual"]) == (["walk", "bulk", "tree"], "walk", True)
    assert result["study"]["match"] == "text" and result["unfollowedLinks"] == []
    calls = {c["label"]: {d: c[d]["calls"] for d in summary["designs"]} for c in result["cases"]}
    # The walk and the tree walk read each file the listing names (archive/ is a folder, not followed); bulk: one.
    assert calls == {
        "the handbook": {"walk": 4, "bulk": 1, "tree": 4},
        "an incident": {"walk": 3, "bulk": 1, "tree": 3},
        "one file": {"walk": 2, "bulk": 1, "tree": 2},
    }
    walk = result["cases"][0]["walk"]["toolCalls"]
    assert [c["arguments"] for c in walk[1:]] == HANDBOOK_READS
    for page in ("01-equivalence", "02-context-cost"):
        assert (runs.out["filesystem"] / "html" / f"{page}.html").is_file(), page
    reader = (runs.out["filesystem"] / "html" / "01-equivalence-reader.html").read_text(encoding="utf-8")
    assert "Checked: each of the 2 declared links found something to follow in at least one case." in reader


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_a_bulk_read_that_leaves_a_file_out_exits_1_naming_the_case(runs):
    done = runs.done["planted"]
    assert done.returncode == 1, (done.stdout, done.stderr[-3000:])
    assert "Traceback" not in done.stderr
    (line,) = done.problems
    assert line.startswith(f'case {PLANTED!r} (dir="handbook", files=['), line
    assert line.endswith(': at names[1], walk has "holidays.md", which occurs in no text of bulk\'s'), line
    differing = [c for c in runs.comparison("planted")["cases"] if not c["equal"]]
    assert [c["label"] for c in differing] == [PLANTED]
    assert {d["path"] for d in differing[0]["differences"]} == {"names[1]"}  # the first text not found, only it


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_a_link_that_follows_nothing_is_said_by_the_command_and_the_report(runs):
    done = runs.done["unfollowed"]
    assert done.returncode == 1  # the walk gathered no file, so its evidence differs too
    said = [line for line in done.stderr.splitlines() if "found nothing to follow in any case" in line]
    assert len(said) == 1, done.stderr
    assert said[0].startswith('  - design "walk": links[1] (from = "files", tool read_text_file)'), said
    assert "the entry's value was text of" in said[0] and "pattern" in said[0]
    assert "wismo study: " in done.stderr and "1 link found nothing to follow:" in done.stderr
    report = (runs.folder("unfollowed") / "html" / "01-equivalence.html").read_text(encoding="utf-8")
    assert "1 of the 2 declared links found nothing to follow in any case" in report


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_the_git_study_finds_every_text_of_the_focused_history_in_the_git_servers_answers(runs):
    done = runs.done["git"]
    assert done.returncode == 0, done.stderr[-3000:]
    result = runs.comparison("git")
    summary = result["summary"]
    assert (summary["designs"], summary["reference"], summary["allEqual"]) == (["history", "walk"], "history", True)
    by_case = {c["label"]: c for c in result["cases"]}
    assert {k: (c["history"]["calls"], c["walk"]["calls"]) for k, c in by_case.items()} == {
        "the latest commit": (1, 2),
        "the last three": (1, 4),
        "the whole history": (1, 6),  # git_log, then git_show for each of the five commits
    }
    shows = [c for c in by_case["the whole history"]["walk"]["toolCalls"] if c["tool"] == "git_show"]
    # A link with two arguments: the repository from the case, the revision the pattern found in the log.
    assert [c["arguments"] for c in shows] == [{"repo_path": "git-history/repo", "revision": c} for c in COMMITS]


@pytest.mark.slow  # executes notebooks: `make quick` leaves these out
def test_the_peer_study_runs_leave_the_repository_outputs_alone(runs):
    assert runs.outputs_after == runs.outputs_before


@pytest.mark.anyio
async def test_a_history_tool_that_invents_a_line_is_caught_by_the_text_match():
    from wismo.reports.analyses import comparison

    peers.installed("peer-git")
    study = declaration.load(GIT)
    result = await comparison.run(study=study, env={"history": {"HISTORY_FAULT": "invent-line"}})
    first = [c["differences"][0] for c in result["cases"]]
    assert all(d["history"] == "A line nobody wrote." and d["walk"] == "<in no text>" for d in first), first
    assert {d["path"] for d in first} == {"commits[0].files[0].added[3]"}


def test_the_git_study_builds_the_same_repository_anywhere(tmp_path):
    import subprocess
    import sys

    built = tmp_path / "elsewhere" / "repo"
    subprocess.run([sys.executable, str(STUDIES / "git-history" / "repo.py"), str(built)], check=True, timeout=60)
    log = subprocess.run(["git", "log", "--format=%H"], cwd=built, capture_output=True, text=True, check=True)
    assert log.stdout.split() == COMMITS
    again = subprocess.run(["git", "status", "--porcelain"], cwd=built, capture_output=True, text=True, check=True)
    assert again.stdout == ""  # nothing left uncommitted
    assert not [p for p in built.parent.iterdir() if re.match(r"\.repo-", p.name)]  # no half-built folder left


def test_the_readme_says_how_each_key_is_written():
    readme = (REPO_ROOT / "docs" / "studies.md").read_text(encoding="utf-8")
    for key in ('read = "text"', 'read = "structured"', "pattern = ", '"{item}"', 'match = "text"', "relations[].from"):
        assert key in readme, key
    assert "starts its commands as the user who runs it" in readme
    text_servers = readme.split("## Servers that answer in text", 1)[1]
    shown = text_servers.split("```toml\n", 1)[1].split("```", 1)[0]
    assert shown in FILESYSTEM.read_text(encoding="utf-8"), "the README's walk design is not the shipped study's"


def test_the_scripted_model_walks_a_text_study_as_the_comparison_does(tmp_path):
    import subprocess

    from wismo import runs

    peers.installed("peer-npm")
    command = wismo_argv("evaluate", "--study", str(FILESYSTEM), "both", "1")
    done = subprocess.run(
        [*command, "--runs-dir", str(tmp_path)], capture_output=True, text=True, cwd=REPO_ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = {r.manifest["design"]: r for r in map(runs.load, sorted(tmp_path.iterdir()))}  # each verifies
    calls = {d: {t["orderId"]: [c["name"] for c in t["toolCalls"]] for t in r.traces} for d, r in loaded.items()}
    # The pattern read from the listing's text, the filter from the tree's JSON: the same files as the comparison.
    assert calls["walk"]["handbook"] == ["list_directory"] + ["read_text_file"] * 3
    assert calls["tree"]["handbook"] == ["directory_tree"] + ["read_text_file"] * 3
    assert calls["bulk"]["handbook"] == ["read_multiple_files"]
    assert [json.loads(c["arguments"]) for c in loaded["walk"].traces[0]["toolCalls"][1:]] == HANDBOOK_READS
