"""What every subcommand's parser shares: its one help line, and the example its --help ends with."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wismo.core.errors import InputError

EXAMPLE_PREFIX = "example: "


@contextmanager
def output_may_be_cut() -> Iterator[None]:
    """The command's output written where its reader may stop reading (`| head`): the rest then goes nowhere (standard
    output pointed at /dev/null, so that flushing it at exit fails no more), not a traceback."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def subparser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    summary: str,
    example: str,
    description: str = "",
) -> argparse.ArgumentParser:
    """A subcommand's parser: `summary` in `wismo --help`, `description` (or the summary) above its options, and
    `example: EXAMPLE` as the last line of its --help."""
    return subparsers.add_parser(
        name,
        help=summary,
        description=description or summary[:1].upper() + summary[1:] + ".",
        epilog=EXAMPLE_PREFIX + example,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def positive_seconds(option: str, value: float) -> None:
    """Raise ValueError in one sentence unless `value` (given as `option`) is a positive number of seconds."""
    if value <= 0:
        raise InputError(f"{option} must be a positive number of seconds, not {value:g}")


def at_least(option: str, value: int | float, minimum: int | float) -> None:
    """Raise ValueError in one sentence unless `value` (given as `option`) is `minimum` or more."""
    if value < minimum:
        raise InputError(f"{option} must be {minimum:g} or more, not {value:g}")


def whole_number(option: str, text: str, minimum: int) -> int:
    """`text` (given as `option`) as a whole number of `minimum` or more; else ValueError in one sentence."""
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{option} must be a whole number of {minimum} or more, not {text!r}") from None
    at_least(option, value, minimum)
    return value


def writable_folder(option: str, folder: str | Path, given: str | Path | None = None) -> Path:
    """`folder` once a file could be written into it, or it could be created; else ValueError in one sentence
    naming `option` and what it was `given` (default the folder). Nothing is created: checked before the work
    starts, so minutes of it are not lost to a bad path, and a refused command leaves no folder behind."""
    import tempfile

    path = Path(folder)
    given = folder if given is None else given
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{option} {given}: {existing} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise InputError(f"{option} {given}: cannot write in {existing} ({exc.strerror or exc})") from None
    return path


def writable_file(option: str, file: str | Path) -> Path:
    """`file` once it could be written (its folder exists or could be created); else ValueError in one sentence naming
    `option` and the file."""
    path = Path(file)
    if path.is_dir():
        raise InputError(f"{option} {file} is a folder; give a file name")
    writable_folder(option, path.parent, file)
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"{option} {file}: cannot write there (permission denied)")
    return path


def stopped_build(command: str, exc: BaseException) -> int | None:
    """What a command says when its report build did not finish, and its exit code; None when `exc` is not a
    build's (raise it then). An interrupt is one line and 128 + the signal; a failure is said as it was (a failed
    cell with papermill's text, anything else with its traceback), then in one sentence, and the last line names the
    index of what the build wrote, in its staging folder; exit 1."""
    import sys
    import traceback

    from wismo.core.processes import Interrupted

    if isinstance(exc, Interrupted):
        print(
            f"wismo {command}: {exc}: every kernel and server it started was stopped and its staging folder removed; "
            f"{exc.target} is as it was.",
            file=sys.stderr,
        )
        return exc.exit_code
    staged = getattr(exc, "staged", None)
    if staged is None:
        return None
    if hasattr(exc, "ename"):  # a failed cell: papermill's text already holds the cell's traceback
        print(exc, file=sys.stderr)
    else:
        traceback.print_exception(exc, file=sys.stderr)
    print(f"wismo {command}: {staged.sentence} The folder {staged.target} is as it was.", file=sys.stderr)
    print(f"wismo {command}: what this build wrote, and why it stopped: {staged.index}", file=sys.stderr)
    return 1
