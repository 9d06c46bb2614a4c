"""The git study's repository, built the same way on every machine: fixed files, author, committer and dates, so its
commit ids are the same everywhere. `python repo.py PATH` builds it at PATH (if it is not there already);
`python repo.py PATH --then COMMAND...` builds it, then runs COMMAND in its place (how the study starts the git
server: the MCP client talks straight to COMMAND)."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

AUTHOR = ("Ada Lovelace", "ada@example.com")
# (message, date, {path: text, or None to delete it}), oldest first.
COMMITS = [
    (
        "Start the changelog and the draft notes",
        "2026-09-01T09:00:00+00:00",
        {"CHANGELOG.md": "# Changelog\n\n## Unreleased\n", "notes/draft.txt": "Ideas for the release.\nAsk ops.\n"},
    ),
    (
        "Add the release checklist",
        "2026-09-03T14:30:00+00:00",
        {"docs/release.md": "# Releasing\n\n1. Tag the commit.\n2. Run the tests.\n3. Publish.\n"},
    ),
    (
        "Run the tests before tagging",
        "2026-09-04T10:15:00+02:00",
        {"docs/release.md": "# Releasing\n\n1. Run the tests.\n2. Tag the commit.\n3. Publish.\n"},
    ),
    ("Remove the draft notes", "2026-09-05T16:45:00+00:00", {"notes/draft.txt": None}),
    (
        "Release 1.0",
        "2026-09-08T08:00:00+00:00",
        {"CHANGELOG.md": "# Changelog\n\n## 1.0 (2026-09-08)\n\n- The release checklist.\n"},
    ),
]
# Nothing from the user's or the machine's git configuration reaches the build (hooks, templates, signing, line ends).
ISOLATED = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": AUTHOR[0],
    "GIT_AUTHOR_EMAIL": AUTHOR[1],
    "GIT_COMMITTER_NAME": AUTHOR[0],
    "GIT_COMMITTER_EMAIL": AUTHOR[1],
    "TZ": "UTC",
}


def git(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in `folder` with the isolated configuration; its output."""
    done = subprocess.run(
        ["git", "-c", "core.autocrlf=false", "-c", "core.hooksPath=" + os.devnull, "-c", "commit.gpgSign=false", *args],
        cwd=folder,
        env={**os.environ, **ISOLATED, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def build(path: Path) -> Path:
    """The repository at `path`, built in a folder beside it and moved into place whole (so a second builder running
    at the same time, or a build stopped half-way, never leaves a half-built repository there)."""
    if (path / ".git").is_dir():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    try:
        git(work, "init", "--quiet", "--initial-branch=main")
        for message, date, files in COMMITS:
            for name, text in files.items():
                file = work / name
                if text is None:
                    git(work, "rm", "--quiet", name)
                    continue
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_bytes(text.encode("utf-8"))
                git(work, "add", name)
            git(work, "commit", "--quiet", "-m", message, env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
        try:
            work.rename(path)
        except OSError:  # another builder got there first: its repository is the same one
            if not (path / ".git").is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return path


def main(argv: list[str]) -> None:
    """Build the repository; with --then, replace this process with the command that follows."""
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: repo.py PATH [--then COMMAND...]")
    build(Path(argv[0]))
    if argv[1:2] == ["--then"] and argv[2:]:
        os.execvp(argv[2], argv[2:])


if __name__ == "__main__":
    main(sys.argv[1:])
