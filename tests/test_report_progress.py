"""`wismo report`'s progress: each notebook's line, and the bar's step, arrive as that notebook finishes, also when
the output is a pipe rather than a terminal."""

import os
import subprocess
import sys
import threading
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

FAST_S, SLOW_S = 0.2, 6.0


def _notebook(folder, name: str, seconds: float):
    """A tiny notebook of the build's shape: a title, a parameters cell taking output_dir, and a sleep."""
    parameters = new_code_cell('output_dir = "outputs"')
    parameters.metadata["tags"] = ["parameters"]
    nb = new_notebook(
        cells=[
            new_markdown_cell(f"# {name}\n\nSleeps {seconds} s."),
            parameters,
            new_code_cell(f"import time\n\ntime.sleep({seconds})"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _arrivals(command: list[str], env: dict[str, str]) -> tuple[list[tuple[float, str]], int]:
    """Run the command with stdout and stderr on one pipe (as `2>&1 | cat` would) and note when each chunk of its
    output arrived, in seconds since the start."""
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    chunks: list[tuple[float, str]] = []

    def read() -> None:
        fd = proc.stdout.fileno()
        while chunk := os.read(fd, 4096):
            chunks.append((time.monotonic() - start, chunk.decode("utf-8", "replace")))

    reader = threading.Thread(target=read)
    reader.start()
    code = proc.wait(timeout=300)
    reader.join(timeout=10)
    return chunks, code


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
    notebooks = tmp_path / "notebooks-in"
    notebooks.mkdir()
    fast = _notebook(notebooks, "91-fast", FAST_S)
    slow = _notebook(notebooks, "92-slow", SLOW_S)
    out = tmp_path / "out"
    script = (
        "import sys\nfrom pathlib import Path\nfrom wismo.render.build import build\n"
        f"build([Path({str(slow)!r}), Path({str(fast)!r})], {str(out)!r}, jobs=2)\n"
    )
    chunks, code = _arrivals([sys.executable, "-c", script], {**os.environ, "PYTHONUNBUFFERED": ""})
    text = "".join(c for _, c in chunks)
    assert code == 0, text
    fast_line = _arrived(chunks, "91-fast.ipynb: executed in")
    one_done = _arrived(chunks, "1/2")
    slow_line = _arrived(chunks, "92-slow.ipynb: executed in")
    # Both kernels start together; the slow one sleeps SLOW_S longer than the fast one, so its line comes that much
    # later. Half of that margin leaves room for a loaded machine; waiting for both (the old FIRST_EXCEPTION) or a
    # block-buffered stdout gives a gap of about nothing.
    assert slow_line - fast_line > SLOW_S / 2, (fast_line, slow_line, text)
    assert slow_line - one_done > SLOW_S / 2, (one_done, slow_line, text)
    assert fast_line < slow_line and text.index("91-fast.ipynb") < text.index("92-slow.ipynb: executed in")
