"""The base of every exception wismo defines, the one exception for a claim that does not hold, and the helpers
that find the real failure inside (nested) exception groups."""

from __future__ import annotations


class WismoError(Exception):
    """Every exception wismo defines derives from it; each carries the facts of its failure as attributes."""

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt without calling __init__ (whose parameters need not be the args), attributes and all, so an
        # error crosses a process boundary whatever its constructor takes.
        return _rebuilt, (type(self), self.args), self.__dict__


def _rebuilt(cls: type[WismoError], args: tuple[object, ...]) -> WismoError:
    """An unpickled WismoError: `cls` with `args`, its attributes restored by pickle afterwards."""
    return cls.__new__(cls, *args)


class InputError(WismoError, ValueError):
    """Input that cannot be used (a name, a value, a file, a server that is not what was given): its message is the
    sentence a command prints, with exit 2 (cli/main.py, the one place that maps it)."""


class ClaimFailed(WismoError, AssertionError):
    """A claim a report or analysis makes does not hold in this run: `claim` says what should hold, `detail` the
    numbers or cases that break it; the message is `message` when given, else '{claim} does not hold: {detail}'."""

    def __init__(self, claim: str, detail: str, message: str | None = None) -> None:
        super().__init__(f"{claim} does not hold: {detail}" if message is None else message)
        self.claim = claim
        self.detail = detail


def leaves(exc: BaseException) -> list[BaseException]:
    """Every exception inside (possibly nested) exception groups, in order, or `[exc]` when it is no group."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside (possibly nested) exception groups, or `exc` itself when it is no group."""
    return leaves(exc)[0]


def single(exc: BaseException) -> BaseException:
    """The one exception inside (possibly nested) single-member exception groups, else `exc` itself: a group of
    several stays a group, as no one member of it is the failure."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def described(exc: BaseException) -> str:
    """The first exception inside (possibly nested) groups as 'Type: message', or 'Type' when it has no message."""
    leaf = first_leaf(exc)
    text = str(leaf)
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__
