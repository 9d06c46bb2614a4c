"""Builds that cannot half-finish: a build writes into a staging folder beside its target and replaces the previous
build only when every notebook succeeded; a failed build leaves its staging folder with an index saying why, named
by the command's last line; SIGINT, SIGTERM or SIGKILL leave the previous build as it was and no process running."""

import hashlib
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from commands import one_sentence
from tiny import tiny_notebook
from wismo.cli.main import main
from wismo.core import atomic, processes
from wismo.core.paths import REPO_ROOT
from wismo.reports import study_run as study_plan
from wismo.reports.render import build as report
from wismo.reports.render import staging
from wismo.reports.render.build import NotebookFailed

STOP_WITHIN_S = 5  # the bound for Ctrl-C
START_LIMIT_S = 240  # only stops a hung start: two kernels on a loaded 2-core machine take seconds

# Real kernels and servers for the tests that stop a build: they check that what it started is gone, which a fork of
# the suite's zygote (not a process below the build) would hide. The others read files, and run on forked kernels.
REAL = pytest.mark.usefixtures("real_servers")


def tree(folder):
    """Every file and folder under `folder`: its kind, size and sha256."""
    found = {}
    for path in sorted(folder.rglob("*")):
        data = path.read_bytes() if path.is_file() else None
        digest = hashlib.sha256(data).hexdigest() if data is not None else None
        found[str(path.relative_to(folder))] = ("file" if data is not None else "folder", len(data or b""), digest)
    return found


def previous_build(out):
    """A previous build's entries and other commands' files in `out`, as a checkout's outputs/ holds them."""
    files = {
        "index.html": "the previous index",
        "html/01-one.html": "the previous page",
        "html/00-gone.html": "a page of a notebook since removed",
        "notebooks/01-one.ipynb": "{not json: the previous executed notebook}",
        "01-one.json": '{"n": 1}',
        "fuzz.json": '{"from": "make fuzz"}',
        "studies/helpdesk/index.html": "a study's reports",
        "screenshots/01-one.png": "a screenshot",
        ".gitkeep": "",
    }
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    return tree(out)


def stagings(out):
    """The staging folders beside `out`."""
    return sorted(out.parent.glob(f".{out.name}{atomic.MARK}*"))


# ---------------------------------------------------------------------------------------------------------------
# The replace, without notebooks.


def _staged_build(out):
    """A staging folder for `out` holding what a build writes: pages, an executed notebook, a changed result, an
    index; the seeded fuzz.json left as it was."""
    staged = staging.Staging.open(out)
    assert staged.folder.parent == out.parent and staged.seeds.keys() >= {"fuzz.json", "01-one.json", ".gitkeep"}
    for name, text in {
        "html/01-one.html": "new page",
        "notebooks/01-one.ipynb": "{}",
        "01-one.json": '{"n": 2}',
    }.items():
        (staged.folder / name).parent.mkdir(parents=True, exist_ok=True)
        (staged.folder / name).write_text(text)
    (staged.folder / "index.html").write_text("new index")
    return staged


def test_replace_moves_in_only_what_the_build_wrote_and_keeps_the_rest(tmp_path):
    out = tmp_path / "out"
    before = previous_build(out)
    untouched = {name: (out / name).stat().st_ino for name in ("fuzz.json", "studies", "screenshots", ".gitkeep")}
    staged = _staged_build(out)
    # Files, then folders, the index last: an index never links to a page not in place yet.
    assert staged.produced() == ["01-one.json", "html", "notebooks", "index.html"]
    assert staged.replace() == ["01-one.json", "html", "notebooks", "index.html"]
    after = tree(out)
    assert (out / "index.html").read_text() == "new index" and (out / "01-one.json").read_text() == '{"n": 2}'
    assert (out / "html" / "01-one.html").read_text() == "new page" and not (out / "html" / "00-gone.html").exists()
    kept = {k: v for k, v in before.items() if k.split("/")[0] in ("fuzz.json", "studies", "screenshots", ".gitkeep")}
    assert {k: after[k] for k in kept} == kept
    # Never moved at all: a command writing there meanwhile loses nothing.
    assert {name: (out / name).stat().st_ino for name in untouched} == untouched
    assert not staged.folder.exists() and stagings(out) == []


def test_replace_without_an_exchange_gives_the_same_folder(tmp_path, monkeypatch):
    (a, b) = (tmp_path / "a" / "out", tmp_path / "b" / "out")
    for out in (a, b):
        previous_build(out)
    _staged_build(a).replace()
    monkeypatch.setattr(staging, "exchange", lambda new, old: False)  # a system without renameat2
    _staged_build(b).replace()
    assert tree(a) == tree(b) and stagings(b) == []


def test_a_replace_that_fails_half_way_puts_back_what_it_moved(tmp_path, monkeypatch):
    out = tmp_path / "out"
    before = previous_build(out)
    staged = _staged_build(out)
    moves = []
    move_in = staging.Staging._move_in

    def fails_third(self, name):
        if len(moves) == 2:
            raise OSError(28, "No space left on device")
        moves.append(name)
        return move_in(self, name)

    monkeypatch.setattr(staging.Staging, "_move_in", fails_third)
    with pytest.raises(OSError, match="No space"):
        staged.replace()
    assert moves == ["01-one.json", "html"] and tree(out) == before


def test_the_staging_folder_is_beside_the_target_unless_that_is_another_filesystem(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    assert staging.location(out) == tmp_path / f".out{atomic.MARK}{os.getpid()}"
    monkeypatch.setattr(staging, "_same_filesystem", lambda a, b: False)  # out is a mount point
    assert staging.location(out) == out / f"{atomic.MARK}{os.getpid()}"


def test_a_new_build_removes_the_staging_folders_of_builds_that_ended(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    ended = subprocess.Popen(["true"])
    ended.wait()
    dead = tmp_path / f".out{atomic.MARK}{ended.pid}"
    running = tmp_path / f".out{atomic.MARK}{os.getppid()}"  # another build, still going
    for folder in (dead, running):
        (folder / "html").mkdir(parents=True)
    staged = staging.Staging.open(out)
    assert not dead.exists() and running.exists() and staged.folder.exists()
    staged.discard()


def test_why_a_build_stopped_is_one_sentence():
    failed = NotebookFailed("02-broken.ipynb", 2, 3, "raise", "ValueError", "the check failed\nsecond line", [])
    assert staging.sentence(failed, "02-broken.ipynb") == (
        "notebook 02-broken.ipynb failed at In [3]: ValueError: the check failed."
    )
    other = RuntimeError("Kernel died.\nwhile executing")
    assert staging.sentence(other, "04-scale.ipynb") == "notebook 04-scale.ipynb failed: RuntimeError: Kernel died."
    assert staging.sentence(KeyError("figure")) == "the build failed: KeyError: 'figure'."
    assert all(one_sentence(staging.sentence(e, "x.ipynb")) for e in (failed, other))


# ---------------------------------------------------------------------------------------------------------------
# Processes below this one, stopped together; a child that ends with the thread that started it.


def _sleeper(*, session=False, preexec_fn=None):
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=session, preexec_fn=preexec_fn
    )


def test_every_process_below_this_one_is_stopped_also_in_a_session_of_its_own():
    shell = subprocess.Popen(["sh", "-c", "sleep 120 & sleep 120 & wait"])
    alone = _sleeper(session=True)
    deadline = time.monotonic() + 30
    while len(processes.descendants(shell.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the shell starts its two sleeps
    below = processes.descendants()
    assert {shell.pid, alone.pid} | processes.descendants(shell.pid) <= below
    stopped = processes.stop_descendants()
    assert below <= stopped and not any(processes.alive(p) for p in stopped)
    shell.wait()
    alone.wait()


def test_a_child_started_to_end_with_its_parent_ends_when_the_parent_is_killed(tmp_path):
    pid_file = tmp_path / "grandchild"
    code = (
        "import subprocess, sys, time\nfrom wismo.core import processes\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True, "
        "preexec_fn=processes.ends_with_parent())\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\ntime.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = psutil.Process(int(pid_file.read_text()))
    parent.kill()
    parent.wait()
    try:
        grandchild.wait(timeout=30)  # SIGTERM from the kernel as its parent ended; no one else stops it
    except psutil.TimeoutExpired:
        grandchild.kill()
        pytest.fail("the child outlived its parent")


# ---------------------------------------------------------------------------------------------------------------
# Builds of small notebooks: a failure, a success, SIGKILL and SIGTERM half-way.


def _notebooks(folder, **then):
    """Tiny notebooks named NN-name in `folder`, each running its `then` code after writing its result."""
    folder.mkdir(exist_ok=True)
    return [tiny_notebook(folder / f"{name}.ipynb", then=code) for name, code in then.items()]


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_failed_build_leaves_the_previous_one_and_its_last_line_names_what_it_wrote(
    tmp_path, monkeypatch, capsys, jobs
):
    src, out = tmp_path / "src", tmp_path / "out"
    _notebooks(src, **{"01-one": "", "02-broken": "raise ValueError('the check failed\\nand a second line')"})
    before = previous_build(out)
    monkeypatch.setattr(study_plan, "plan", lambda study, parameters=None: (sorted(src.glob("*.ipynb")), {}, []))
    code = main(["report", "--out", str(out), "--jobs", jobs])
    err = capsys.readouterr().err
    assert code == 1 and tree(out) == before
    said = "notebook 02-broken.ipynb failed at In [4]: ValueError: the check failed."
    last = err.strip().splitlines()[-1]
    (folder,) = stagings(out)
    assert last == f"wismo report: what this build wrote, and why it stopped: {folder / 'index.html'}"
    assert f"wismo report: {said} The folder {out} is as it was." in err
    index = (folder / "index.html").read_text()
    assert said in index and one_sentence(said) and "the build stopped" in index
    assert 'id="01-one"' in index and 'href="html/01-one-reader.html"' in index  # the report that was written
    # The failed one, as far as it ran: its executed notebook and both versions, which show where it stopped.
    for page in ("notebooks/02-broken.ipynb", "html/02-broken-reader.html", "html/02-broken.html"):
        assert f'href="{page}"' in index and (folder / page).is_file()
    assert "the check failed" in (folder / "html" / "02-broken.html").read_text()
    # The next build that succeeds replaces the previous one and removes the failed build's folder.
    _notebooks(src, **{"02-broken": ""})
    assert main(["report", "--out", str(out), "--jobs", jobs]) == 0
    assert stagings(out) == [] and "Tiny 02-broken" in (out / "index.html").read_text()


@pytest.mark.slow
def test_a_build_keeps_what_it_does_not_write_and_its_notebooks_read_it(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    paths = _notebooks(
        src,
        **{
            "01-one": "",
            # What notebook 01 does with make fuzz's figures: read them from the output folder.
            "02-reads": "seen = pathlib.Path(output_dir, 'fuzz.json').read_text()\n"
            "pathlib.Path(output_dir, 'seen.json').write_text(seen)",
        },
    )
    before = previous_build(out)
    rendered = report.build(paths, out, jobs=2)
    after = tree(out)
    others = [k for k in before if k.split("/")[0] in ("fuzz.json", "studies", "screenshots", ".gitkeep")]
    assert {k: after[k] for k in others} == {k: before[k] for k in others}
    assert (out / "seen.json").read_text() == '{"from": "make fuzz"}'
    assert "Tiny 02-reads" in (out / "index.html").read_text() and not (out / "html" / "00-gone.html").exists()
    assert all(r.html.parent == out / "html" and r.html.is_file() and r.executed.is_file() for r in rendered)
    assert stagings(out) == []


def _started(tmp_path, out, notebooks, *args):
    """`python -m wismo report --out OUT ARGS` on these notebooks, in a session of its own, as a terminal starts it."""
    script = (
        "import sys\nfrom pathlib import Path\nimport wismo.reports.study_run as s\n"
        f"s.plan = lambda study, parameters=None: (sorted(Path({str(notebooks)!r}).glob('*.ipynb')), {{}}, [])\n"
        "from wismo.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    with open(logs / "stdout", "wb") as stdout, open(logs / "stderr", "wb") as stderr:
        command = [sys.executable, "-c", script] if notebooks else [sys.executable, "-m", "wismo"]
        return subprocess.Popen(
            [*command, "report", "--out", str(out), *args],
            cwd=REPO_ROOT,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )


def _when(check, process):
    """Wait until `check()` holds (the build got that far); fail if the build ends first or never gets there."""
    deadline = time.monotonic() + START_LIMIT_S
    while not check():
        assert process.poll() is None, f"the build ended with {process.returncode} before the test could stop it"
        assert time.monotonic() < deadline, "the build never got that far"
        time.sleep(0.1)


def _below(process):
    """Every process below `process` now, and what each runs."""
    found = {}
    for p in psutil.Process(process.pid).children(recursive=True):
        try:
            found[p] = " ".join(p.cmdline())
        except psutil.Error:
            continue
    return found


def _running(procs):
    """Those of `procs` still running (a zombie has ended: only its parent has not read its exit yet)."""
    left = []
    for p in procs:
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                left.append(p)
        except psutil.NoSuchProcess:
            continue
    return left


def _killed(procs):
    """Kill what a failed test leaves running."""
    for p in _running(procs):
        p.kill()


def holding(name):
    """A notebook's code that starts an HTTP and a stdio server, says so in OUT/serving-NAME, and waits."""
    return f"""import asyncio
from contextlib import AsyncExitStack
from wismo.mcp.client.connection import connect
stack = AsyncExitStack()
await stack.enter_async_context(connect("granular", "http"))
await stack.enter_async_context(connect("focused", "stdio"))
pathlib.Path(output_dir, "serving-{name}").write_text("yes")
await asyncio.sleep(600)"""


def serving(out, *names):
    """Whether every named notebook of the build of `out` holds its servers."""
    return any(all((f / f"serving-{n}").exists() for n in names) for f in stagings(out))


@pytest.mark.slow
@REAL
def test_a_build_killed_half_way_leaves_the_previous_one_and_nothing_running(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    _notebooks(src, **{"01-holds": holding("01"), "02-one": ""})
    before = previous_build(out)
    build = _started(tmp_path, out, src, "--jobs", "2")
    _when(lambda: serving(out, "01"), build)
    below = _below(build)
    assert any("serve granular --http" in c for c in below.values()), below
    build.kill()
    build.wait()
    try:
        assert tree(out) == before
        # Nobody is left to stop them: the workers die with the build, the kernels when their worker is gone, the
        # HTTP server with its kernel, the stdio server at the end of its input.
        gone, alive = psutil.wait_procs(below, timeout=60)
        assert _running(alive) == [], {p: below[p] for p in alive}
        assert len(stagings(out)) == 1  # left by the killed build; the next build removes it
    finally:
        _killed(below)


@pytest.mark.slow
@REAL
def test_sigterm_stops_a_build_holding_servers_and_leaves_the_previous_one(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    _notebooks(src, **{"01-holds": holding("01"), "02-holds": holding("02")})
    before = previous_build(out)
    build = _started(tmp_path, out, src, "--jobs", "2")
    _when(lambda: serving(out, "01", "02"), build)
    below = _below(build)
    assert sum("serve granular --http" in c for c in below.values()) == 2, below
    try:
        os.kill(build.pid, signal.SIGTERM)
        assert build.wait(timeout=STOP_WITHIN_S) == 128 + signal.SIGTERM
        assert _running(below) == [], {p: below[p] for p in _running(below)}
        assert tree(out) == before and stagings(out) == []
    finally:
        _killed(below)
        build.kill()


@pytest.mark.slow
@REAL
def test_ctrl_c_stops_wismo_report_within_5_s_and_leaves_the_previous_build(tmp_path):
    out = tmp_path / "out"
    before = previous_build(out)
    build = _started(tmp_path, out, None)
    # Once a notebook has started an MCP server, every kind of process a build runs is there.
    _when(lambda: any("wismo serve" in c for c in _below(build).values()), build)
    below = _below(build)
    try:
        os.killpg(build.pid, signal.SIGINT)  # as a terminal sends Ctrl-C: to the whole foreground group
        assert build.wait(timeout=STOP_WITHIN_S) == 130
        assert _running(below) == [], {p: below[p] for p in _running(below)}
        assert tree(out) == before and stagings(out) == []
        last = (tmp_path / "logs" / "stderr").read_text().strip().splitlines()[-1]
        assert last.startswith("wismo report: stopped by SIGINT:") and last.endswith(f"{out} is as it was.")
    finally:
        _killed(below)
        build.kill()
