"""Commands run as a user runs them (`python -m wismo ...` in the repository, what they write kept in files), waited
for together, and the checks every study test makes of what they said."""

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from wismo.core import processes
from wismo.core.paths import REPO_ROOT

TIMEOUT_S = 300  # one `wismo study run` takes about 30 s on two cores; this only stops a hung one


def one_sentence(problem: str) -> bool:
    """A problem as the contract says: one line, one sentence, ending with a full stop."""
    return problem.endswith(".") and "\n" not in problem and not re.search(r"[.!?]\s+[A-Z]", problem[:-1])


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under `folder` with its size and modification time. The browser test copies its
    screenshots into outputs/screenshots while the suite runs on several workers, so that folder is not counted."""
    out = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.parts[0] != "screenshots":
            stat = path.stat()
            out[str(relative)] = (stat.st_size if path.is_file() else 0, stat.st_mtime_ns)
    return out


def wismo_argv(*args: str) -> list[str]:
    """`python -m wismo ARGS`, with the suite's interpreter for servers: a launcher that forks the command from a
    process that has imported wismo and the SDK already (conftest.forked_servers), else this interpreter."""
    return [processes.interpreter(), "-m", "wismo", *args]


def wismo(logs: Path, *args: str) -> subprocess.Popen:
    """`python -m wismo ARGS` started in the repository, what it writes going to logs/stdout and logs/stderr (files,
    not pipes, which would stall a command that writes more than a pipe holds before the test reads it)."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "stdout", "wb") as out, open(logs / "stderr", "wb") as err:
        process = subprocess.Popen(wismo_argv(*args), cwd=REPO_ROOT, stdout=out, stderr=err)
    process.logs = logs
    return process


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str

    @property
    def problems(self) -> list[str]:
        """The problems the exit listed, one per line."""
        return [line[4:] for line in self.stderr.splitlines() if line.startswith("  - ")]

    @property
    def staged(self) -> Path:
        """The index a failed build left in its staging folder, which the command's last line names."""
        return Path(self.stderr.strip().splitlines()[-1].rsplit(": ", 1)[1])


def finished(started: dict[str, subprocess.Popen]) -> dict[str, Done]:
    """Every started command waited for (they run at once), with what it wrote."""
    done = {}
    for name, process in started.items():
        try:
            process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        texts = [(process.logs / f).read_text(encoding="utf-8", errors="replace") for f in ("stdout", "stderr")]
        if process.returncode < 0:
            pytest.fail(f"{name} did not finish within {TIMEOUT_S} s: {texts[1][-2000:]}")
        done[name] = Done(process.returncode, *texts)
    return done
