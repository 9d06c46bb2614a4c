"""The price library's lookups kept on disk between runs, one file per library version: importing the library takes
a short command most of its start (about 0.15 s of pydantic models and an HTTP client it never uses here), and a
version's price data never changes. Best effort: what cannot be read is ignored, what cannot be written is left. The
folder is WISMO_CACHE_DIR (empty: no cache), else $XDG_CACHE_HOME/wismo, else ~/.cache/wismo.

The file is JSON Lines, a lookup a line, each appended in one write: processes that look up prices at once (a report's
notebooks) each add their own lines and lose none of the others', a line cut short spoils only itself, and the last
line of a key is its answer. Past MOST_LINES lines the file is written anew with the newest answers."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import stat
import tempfile
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import cast

CACHE_ENV = "WISMO_CACHE_DIR"
SCHEMA = "wismo.prices/1"
PACKAGE, DISTRIBUTION = "genai_prices", "genai-prices"
MOST_BYTES = 1 << 20  # a cache file longer than this is not read (and is written anew)
MOST_LINES = 1_000  # beyond them the file is written anew with the newest half of its answers
LONGEST_LINE = 4_096  # a line longer than this is not one wismo wrote
VERSION = re.compile(r"[0-9A-Za-z.+_-]{1,64}")
# A price as Price.as_dict gives it: each key with the types its value may have.
FIELDS: dict[str, tuple[type, ...]] = {
    "model": (str,),
    "provider": (str,),
    "inputPerMTok": (float,),
    "cachedInputPerMTok": (float,),
    "cacheWritePerMTok": (float,),
    "outputPerMTok": (float,),
    "source": (str,),
    "pricedOn": (str,),
    "tiered": (bool,),
    "tierStartsAt": (int, type(None)),
}

Entry = dict[str, object]  # a price (FIELDS), or {"unknown": why the library prices no such model}
Key = tuple[str, str | None, str | None]  # model, provider, date: what a lookup is asked


def folder() -> Path | None:
    """Where the cache is kept, None for no cache."""
    given = os.environ.get(CACHE_ENV)
    if given is not None:
        return Path(given) if given else None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative path is ignored
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home to be found
            return None
    return Path(base) / "wismo"


@cache
def installed_version() -> str | None:
    """The price library's version from its installed metadata's folder name (NAME-VERSION.dist-info, beside the
    package), without importing it; None where it is not found that way (then nothing is cached)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    found = list(Path(spec.origin).parent.parent.glob(f"{PACKAGE}-*.dist-info"))
    if len(found) != 1:
        return None
    version = found[0].name.removeprefix(f"{PACKAGE}-").removesuffix(".dist-info")
    return version if VERSION.fullmatch(version) else None


def _file() -> Path | None:
    where, version = folder(), installed_version()
    return None if where is None or version is None else where / f"prices-{DISTRIBUTION}-{version}.jsonl"


def _valid(entry: object, model: str) -> bool:
    """Whether an answer is one lookup could have given for `model` under the installed version."""
    if not isinstance(entry, dict):
        return False
    if set(entry) == {"unknown"}:
        return isinstance(entry["unknown"], str)
    if set(entry) != set(FIELDS) or entry["model"] != model:
        return False
    if not str(entry["source"]).startswith(f"{DISTRIBUTION} {installed_version()}, price data of "):
        return False  # every price the library gives is labelled with its version
    for name, types in FIELDS.items():
        value = entry[name]
        if type(value) not in types:
            return False
        if type(value) is float and not (math.isfinite(value) and value >= 0):
            return False
    return True


def _line(text: bytes) -> tuple[Key, Entry] | None:
    """A line's lookup and answer, None where the line is not one put() wrote for the installed version."""
    if len(text) > LONGEST_LINE:
        return None
    try:
        held = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(held, dict) or held.get("schema") != SCHEMA or held.get("version") != installed_version():
        return None
    asked, entry = held.get("key"), held.get("answer")
    if not (isinstance(asked, list) and len(asked) == 3 and isinstance(asked[0], str)):
        return None
    if not all(part is None or isinstance(part, str) for part in asked[1:]) or not _valid(entry, asked[0]):
        return None
    return (asked[0], asked[1], asked[2]), cast("Entry", entry)


class _Held:
    """What this process knows of the cache file: the answers by lookup, and how many lines the file had."""

    def __init__(self) -> None:
        self.answers: dict[Key, Entry] = {}
        self.lines = 0
        self.too_long = False


def _open_regular(path: Path, flags: int) -> int | None:
    """A descriptor of the file at `path` if it is a regular file (never a pipe, a device or a link), else None."""
    try:
        descriptor = os.open(path, flags | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    if stat.S_ISREG(os.fstat(descriptor).st_mode):
        return descriptor
    os.close(descriptor)
    return None


@cache
def _held() -> _Held:
    """The cache file as this process first reads it."""
    held, path = _Held(), _file()
    if path is None:
        return held
    descriptor = _open_regular(path, os.O_RDONLY)
    if descriptor is None:
        return held
    with open(descriptor, "rb") as handle:
        text = handle.read(MOST_BYTES + 1)
    held.too_long = len(text) > MOST_BYTES
    if held.too_long:
        return held
    for raw in text.split(b"\n"):
        if raw.strip():
            held.lines += 1
            found = _line(raw)
            if found is not None:
                held.answers[found[0]] = found[1]
    return held


def get(model: str, provider: str | None, on: str | None) -> Entry | None:
    """A lookup kept from an earlier run of this library version, None where there is none."""
    return _held().answers.get((model, provider, on))


def _record(asked: Key, entry: Entry) -> bytes:
    record = {"schema": SCHEMA, "version": installed_version(), "key": list(asked), "answer": entry}
    return json.dumps(record, sort_keys=True).encode() + b"\n"


def put(model: str, provider: str | None, on: str | None, entry: Entry) -> None:
    """Keep a lookup for later runs: a line appended in one write, or the file written anew where it is full."""
    path, held, asked = _file(), _held(), (model, provider, on)
    if path is None or held.answers.get(asked) == entry:
        return
    line = _record(asked, entry)
    if len(line) > LONGEST_LINE:
        return
    held.answers[asked] = entry  # a lookup is put only where none was kept: the newest is last
    if held.too_long or held.lines >= MOST_LINES:
        _write_anew(path, held)
        return
    with suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = _open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        if descriptor is not None:
            try:
                os.write(descriptor, b"\n" + line)  # its own line even after one cut short
                held.lines += 1
            finally:
                os.close(descriptor)


def _write_anew(path: Path, held: _Held) -> None:
    """The file replaced whole by the newest half of the answers this process knows."""
    newest = list(held.answers.items())[-(MOST_LINES // 2) :]
    held.answers, held.lines, held.too_long = dict(newest), len(newest), False
    staged: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, staged = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(b"".join(_record(asked, entry) for asked, entry in newest))
        os.replace(staged, path)
    except OSError:
        if staged is not None:
            with suppress(OSError):
                os.unlink(staged)


def reread() -> None:
    """Forget what this process has read of the cache and where it is: the next lookup reads it again."""
    _held.cache_clear()
    installed_version.cache_clear()
