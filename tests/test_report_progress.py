"""`wismo report`'s progress: each notebook's line, and the bar's step, arrive as that notebook finishes, also when
the output is a pipe rather than a terminal."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

WAIT_S = 120  # how long the slow notebook waits to be released before it fails the build


def _notebook(folder, name: str, release: Path | None = None):
    """A tiny notebook of the build's shape: a title, a parameters cell taking output_dir, and, for the slow one, a
    wait until the file `release` exists (the test creates it once the fast notebook's line has arrived)."""
    parameters = new_code_cell('output_dir = "outputs"')
    parameters.metadata["tags"] = ["parameters"]
    wait = (
        f"import time\nfrom pathlib import Path\n\ndeadline = time.monotonic() + {WAIT_S}\n"
        f"while not Path({str(release)!r}).exists():\n"
        f"    assert time.monotonic() < deadline, 'never released: the fast notebook was not reported while this ran'\n"
        f"    time.sleep(0.05)"
        if release
        else "pass"
    )
    nb = new_notebook(cells=[new_markdown_cell(f"# {name}"), parameters, new_code_cell(wait)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _arrivals(
    command: list[str], env: dict[str, str], release: Path, awaited: list[str]
) -> tuple[list[tuple[float, str]], int, float | None]:
    """Run the command with stdout and stderr on one pipe (as `2>&1 | cat` would), note when each chunk of its
    output arrived (seconds since the start), and create `release` as soon as every `awaited` text has arrived;
    returns the chunks, the exit code and when `release` was created (None: never)."""
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    chunks: list[tuple[float, str]] = []
    released: list[float] = []

    def read() -> None:
        fd = proc.stdout.fileno()
        seen = ""
        while chunk := os.read(fd, 4096):
            chunks.append((time.monotonic() - start, chunk.decode("utf-8", "replace")))
            seen += chunks[-1][1]
            if not released and all(text in seen for text in awaited):
                release.touch()
                released.append(time.monotonic() - start)

    reader = threading.Thread(target=read)
    reader.start()
    code = proc.wait(timeout=300)
    reader.join(timeout=10)
    return chunks, code, released[0] if released else None


def _arrived(chunks: list[tuple[float, str]], text: str) -> float:
    """When `text` had arrived in full: the time of the chunk that completed it."""
    seen = ""
    for at, chunk in chunks:
        seen += chunk
        if text in seen:
            return at
    raise AssertionError(f"{text!r} never arrived in:\n{seen}")


@pytest.mark.slow
def test_each_notebook_is_reported_as_it_finishes_through_a_pipe(tmp_path):
    # The slow notebook runs until the fast one's line and the bar's step have come through the pipe: a build that
    # waited for both notebooks, or a block-buffered stdout, never releases it, and the build fails.
    notebooks = tmp_path / "notebooks-in"
    notebooks.mkdir()
    release = tmp_path / "release"
    fast = _notebook(notebooks, "91-fast")
    slow = _notebook(notebooks, "92-slow", release)
    out = tmp_path / "out"
    script = (
        "import sys\nfrom pathlib import Path\nfrom wismo.reports.render.build import build\n"
        f"build([Path({str(slow)!r}), Path({str(fast)!r})], {str(out)!r}, jobs=2)\n"
    )
    awaited = ["91-fast.ipynb: executed in", "1/2"]
    env = {**os.environ, "PYTHONUNBUFFERED": ""}
    chunks, code, released = _arrivals([sys.executable, "-c", script], env, release, awaited)
    text = "".join(c for _, c in chunks)
    assert code == 0 and released is not None, text
    assert all(_arrived(chunks, t) <= released for t in awaited)
    assert _arrived(chunks, "92-slow.ipynb: executed in") >= released, text
    assert text.index("91-fast.ipynb") < text.index("92-slow.ipynb: executed in")


def test_a_bar_is_text_in_a_terminal_a_widget_in_a_notebook_and_none_in_the_build(monkeypatch, capsys):
    from tqdm.notebook import tqdm as widget

    from wismo.core import progress
    from wismo.core.paths import BUILD_ENV

    monkeypatch.delenv(BUILD_ENV, raising=False)
    with progress.bar(2, "cases") as shown:
        shown.update(2)
    assert "cases: 100%" in capsys.readouterr().err  # the terminal: text on stderr
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    assert progress._bar_class() is widget  # a notebook run by hand: a widget, nothing on stderr
    monkeypatch.setenv(BUILD_ENV, "/somewhere")
    with progress.bar(2, "cases") as built:
        built.update(2)
    assert built.disable and capsys.readouterr().err == ""  # the build's kernels: no bar at all
