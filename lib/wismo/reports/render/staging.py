"""A build's staging folder: the reports are built beside the folder they replace and moved into it only once every
notebook succeeded, entry by entry, each in one rename; a failed build's staging folder stays, with its index.

Only the entries the build writes are replaced (its pages, executed notebooks, JSON results and index): whatever
else the target holds, other commands' files (make fuzz's fuzz.json, the benchmarks', outputs/studies/, screenshots)
and .gitkeep, is never moved, so a command writing there meanwhile loses nothing, and the target may be a mount
point. The notebooks read the target's files as before: each top-level file is copied into the staging folder when
it is made, and one the build leaves unchanged is not moved back.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from wismo.core.atomic import ASIDE, MARK, exchange
from wismo.core.errors import first_leaf

INDEX = "index.html"


@dataclass
class Staged:
    """A failed build's staging folder, left for the reader: `folder`, its `index`, the `target` it would have
    replaced (left as it was) and `sentence`, why the build stopped."""

    folder: Path
    index: Path
    target: Path
    sentence: str


def _same_filesystem(a: Path, b: Path) -> bool:
    """Whether `a` and `b` are on one filesystem, so a rename can move one into the other."""
    return a.stat().st_dev == b.stat().st_dev


def location(target: Path) -> Path:
    """Where a build of `target` stages: beside it, as .NAME.building-PID in its parent, so every move is a rename
    on one filesystem; inside it, as .building-PID, when the parent is another filesystem (the target is a mount
    point) or cannot be written."""
    parent = target.parent
    if _same_filesystem(parent, target) and os.access(parent, os.W_OK):
        return parent / f".{target.name}{MARK}{os.getpid()}"
    return target / f"{MARK}{os.getpid()}"


def _ended(folder: Path) -> bool:
    """Whether the build that made this staging folder has ended: its process (named after MARK) is gone, or it is
    this process, which is only now starting a build."""
    try:
        pid = int(folder.name.rsplit(MARK, 1)[1])
    except ValueError:
        return False  # not a name this module gives: left alone
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # another user's process holds that number
    return False


def stale(target: Path) -> list[Path]:
    """The staging folders of earlier builds of `target` whose process has ended: a failed build's, kept for its
    reader until this build, or a killed one's."""
    found = [*target.parent.glob(f".{glob.escape(target.name)}{MARK}*"), *target.glob(f"{MARK}*")]
    return sorted(p for p in found if p.is_dir() and _ended(p))


def _digest(path: Path) -> str | None:
    """The sha256 of a file's bytes; None for anything else."""
    if not path.is_file():
        return None
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` for the block, so two builds replacing it at once do not interleave."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@dataclass
class Staging:
    """The folder a build writes into (`folder`) instead of `target`, and the target's files copied into it at the
    start (`seeds`: name to sha256)."""

    target: Path
    folder: Path
    seeds: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def beside(cls, target: Path) -> Staging:
        """The staging folder of a build of `target`, not made yet (make), so it can be discarded from the start."""
        target = target.resolve()
        return cls(target, location(target))

    @classmethod
    def open(cls, target: Path) -> Staging:
        """The staging folder of a build of `target`, made."""
        return cls.beside(target).make()

    def make(self) -> Staging:
        """Make the folder, fresh (earlier builds' ended ones removed first), holding a copy of each of the
        target's top-level files, so the notebooks find what other commands wrote there (fuzz.json)."""
        for old in stale(self.target):
            shutil.rmtree(old, ignore_errors=True)
        self.folder.mkdir()
        for entry in sorted(self.target.iterdir()):
            # Copied, not linked: a notebook that rewrites such a file in place must not change the target's.
            if entry.is_file() and not entry.name.startswith(MARK):
                shutil.copy2(entry, self.folder / entry.name)
                self.seeds[entry.name] = _digest(self.folder / entry.name)
        return self

    def produced(self) -> list[str]:
        """The entries the build wrote (every entry of the staging folder but the target's files it left as they
        were), in the order they replace the target's: files, then folders, the index last, so that an index never
        links to a page that is not in place yet."""
        names = [e.name for e in self.folder.iterdir() if e.name not in self.seeds or self.seeds[e.name] != _digest(e)]
        return sorted(names, key=lambda n: (n == INDEX, (self.folder / n).is_dir(), n))

    def replace(self) -> list[str]:
        """Move what the build wrote into the target and return those names. Each entry is exchanged with its old
        version in one rename (where the system cannot, the old one is first moved aside into the staging folder);
        the old versions are removed with the staging folder only once every new one is in place. An error half-way
        moves back what was moved."""
        names = self.produced()
        moved: list[tuple[str, str]] = []
        with _locked(self.target):
            try:
                for name in names:
                    moved.append((name, self._move_in(name)))
            except OSError:
                for name, how in reversed(moved):
                    self._move_out(name, how)
                raise
        shutil.rmtree(self.folder, ignore_errors=True)
        return names

    def _move_in(self, name: str) -> str:
        """One entry into the target; says how, for _move_out."""
        new, old = self.folder / name, self.target / name
        if not os.path.lexists(old):
            os.rename(new, old)
            return "renamed"
        if exchange(new, old):
            return "exchanged"
        os.rename(old, self.folder / f"{ASIDE}{name}")  # the target lacks this entry until the next rename
        os.rename(new, old)
        return "aside"

    def _move_out(self, name: str, how: str) -> None:
        """Undo _move_in for one entry."""
        new, old = self.folder / name, self.target / name
        if how == "exchanged":
            exchange(new, old)
            return
        os.rename(old, new)
        if how == "aside":
            os.rename(self.folder / f"{ASIDE}{name}", old)

    def rebased(self, path: Path) -> Path:
        """Where a path under the staging folder is once the build replaced the target."""
        return self.target / Path(path).relative_to(self.folder)

    def discard(self) -> None:
        """Remove the staging folder and all in it."""
        shutil.rmtree(self.folder, ignore_errors=True)


def sentence(exc: BaseException, notebook: str | None = None) -> str:
    """Why a build stopped, in one sentence: the notebook, then the error's name and the first line of its message
    (for a failed cell, the cell's error, as papermill reports it)."""
    leaf = first_leaf(exc)
    name = getattr(leaf, "ename", None) or type(leaf).__name__
    message = getattr(leaf, "evalue", None) if hasattr(leaf, "ename") else str(leaf)
    first = next((line.strip() for line in str(message or "").splitlines() if line.strip()), "")
    cell = getattr(leaf, "exec_count", None)
    where = f"notebook {notebook} failed" if notebook else "the build failed"
    text = f"{where}{f' at In [{cell}]' if cell is not None else ''}: {name}{f': {first}' if first else ''}"
    return text if text.endswith((".", "!", "?")) else text + "."
