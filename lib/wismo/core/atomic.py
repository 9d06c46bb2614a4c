"""Folders and files built out of sight and put in place whole: a hidden folder beside the target is filled, then takes
the target's place in one rename (exchanged with an old version in one rename where the system can), and is removed
when anything fails, so a reader finds the old folder or the new one, never half of one; a file likewise (write_file).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

MARK = ".building-"  # a folder being built is .NAME.building-PID beside its target (or .building-PID inside it)
ASIDE = ".previous-"  # an old version waits here where it cannot be exchanged in one rename
AT_FDCWD = -100  # linux/fcntl.h
RENAME_EXCHANGE = 2  # linux/fs.h
CANNOT_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}  # the system or filesystem cannot


def beside(target: Path) -> Path:
    """A fresh, empty hidden folder beside `target` (on its filesystem, so one rename moves it): .NAME.building-PID,
    never read as one of the folders it will sit among."""
    folder = target.parent / f".{target.name}{MARK}{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


STAGED = ".partial"  # a file being written is .NAME.XXXXXXXX.partial beside its target


def write_file(target: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `target`: staged beside it with `mode`, then renamed into place, so no reader ever sees half of
    it; the staged file is removed when anything fails."""
    descriptor, staged = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=STAGED)
    try:
        os.fchmod(descriptor, mode)  # mkstemp makes it 0600
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(staged, target)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise


def _renameat2() -> Callable[..., int] | None:
    """Linux's renameat2 through ctypes, or None where the C library has none."""
    import ctypes

    try:
        call: Callable[..., int] = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    return call


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one rename (renameat2 with RENAME_EXCHANGE): a reader finds one or the other at
    each path, never none. False, with nothing moved, where the system or the filesystem cannot."""
    import ctypes

    call = _renameat2()
    if call is None:
        return False
    if call(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in CANNOT_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def put_in_place(folder: Path, target: Path, replace: bool = False) -> None:
    """Move the filled `folder` to `target` in one rename; an existing target is a FileExistsError unless `replace`,
    when the two are exchanged (or the old one first moved aside) and the old one removed."""
    if not os.path.lexists(target):
        os.rename(folder, target)
        return
    if not replace:
        raise FileExistsError(f"{target} exists and is never overwritten")
    if not exchange(folder, target):
        aside = target.parent / f"{ASIDE}{target.name}-{os.getpid()}"
        os.rename(target, aside)
        os.rename(folder, target)
        folder = aside
    shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def building(target: Path, replace: bool = False) -> Iterator[Path]:
    """A hidden folder to fill in the block, put in `target`'s place when the block ends well (see put_in_place) and
    removed whatever happens."""
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = beside(target)
    try:
        yield folder
        put_in_place(folder, target, replace)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
