"""The price library's lookups kept on disk between runs, one file per library version: importing the library takes
a short command most of its start (about 0.15 s of pydantic models and an HTTP client it never uses here), and a
version's price data never changes. Best effort: what cannot be read is ignored, what cannot be written is left. The
folder is WISMO_CACHE_DIR (empty: no cache), else $XDG_CACHE_HOME/wismo, else ~/.cache/wismo.

The file is JSON Lines, a lookup a line, each appended in one write: processes that look up prices at once (a report's
notebooks) each add their own lines, a line cut short spoils only itself, and the last line of a key is its answer.
Once the file is FULL_BYTES long, the process that would append to it writes it anew, as it then is, with only the
newest KEPT answers (what another process appends meanwhile may be lost: it is looked up again)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import stat
import time
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import TypedDict, cast, get_args, get_type_hints

from wismo.core import atomic

CACHE_ENV = "WISMO_CACHE_DIR"
SCHEMA = "wismo.prices/1"
PACKAGE, LIBRARY = "genai_prices", "genai-prices"  # the price library's import name and distribution name
MOST_BYTES = 1 << 20  # a cache file longer than this is not read (and is written anew)
FULL_BYTES = 1 << 19  # from this length the file is written anew with its newest answers (about 1,300 lookups)
KEPT = 500  # the answers a file written anew keeps
LONGEST_LINE = 4_096  # a line longer than this is not one wismo wrote
STALE_S = 600  # a file staged for a rewrite this long ago was left by a process that stopped
VERSION = re.compile(r"[0-9A-Za-z.+_-]{1,64}")
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
PROVIDER = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")  # the library's provider ids
UNKNOWN = ("absent", "no per-token price")  # why the library prices no such model (prices.UnknownModel)


class PriceRecord(TypedDict):
    """A model's price as JSON, per million tokens (prices.Price.as_dict), as the cache keeps it."""

    model: str
    provider: str
    inputPerMTok: float
    cachedInputPerMTok: float
    cacheWritePerMTok: float
    outputPerMTok: float
    source: str
    pricedOn: str
    tiered: bool
    tierStartsAt: int | None


# Each field of a kept price with the exact types its value may have (a bool is no int here, an int no float).
FIELDS = {name: get_args(hint) or (hint,) for name, hint in get_type_hints(PriceRecord).items()}

Entry = dict[str, object]  # a price (PriceRecord), or {"unknown": why the library prices no such model}
Key = tuple[str, str | None, str | None]  # model, provider, date: what a lookup is asked


def label(version: str, day: str) -> str:
    """How every price the library gives is labelled: the library, its version and its price data's date."""
    return f"{LIBRARY} {version}, price data of {day}"


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
    return None if where is None or version is None else where / f"prices-{LIBRARY}-{version}.jsonl"


def _valid(entry: object, asked: Key) -> bool:
    """Whether an answer is one the library could give the lookup `asked` under the installed version: an unknown
    model's reason, or a price with every field of its type and range, labelled with the version and priced on the
    date asked (else on the data's date the label names), by the provider asked where one was."""
    model, provider, on = asked
    if not isinstance(entry, dict):
        return False
    if set(entry) == {"unknown"}:
        return entry["unknown"] in UNKNOWN
    if set(entry) != set(FIELDS) or any(type(entry[name]) not in types for name, types in FIELDS.items()):
        return False
    labelled, prefix = str(entry["source"]), label(str(installed_version()), "")
    day = labelled.removeprefix(prefix)
    if not (labelled.startswith(prefix) and DAY.fullmatch(day)):
        return False
    if entry["model"] != model or entry["pricedOn"] != (on or day):
        return False
    if not PROVIDER.fullmatch(str(entry["provider"])) or (provider is not None and entry["provider"] != provider):
        return False
    tier = entry["tierStartsAt"]
    if isinstance(tier, int) and not 0 < tier < 2**63:
        return False
    prices = [v for v in entry.values() if type(v) is float]
    return all(math.isfinite(v) and math.copysign(1.0, v) > 0 for v in prices)


def _line(raw: bytes) -> tuple[Key, Entry] | None:
    """A line's lookup and answer, None where the line is not one put() wrote for the installed version."""
    if len(raw) > LONGEST_LINE:
        return None
    try:
        held = json.loads(raw)
    except (ValueError, RecursionError):  # not text, not JSON, too deep
        return None
    if not isinstance(held, dict) or held.get("schema") != SCHEMA or held.get("version") != installed_version():
        return None
    asked, entry = held.get("key"), held.get("answer")
    if not (isinstance(asked, list) and len(asked) == 3 and isinstance(asked[0], str)):
        return None
    if not all(part is None or isinstance(part, str) for part in asked[1:]):
        return None
    key = (asked[0], asked[1], asked[2])
    return (key, cast("Entry", entry)) if _valid(entry, key) else None


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


def _read(path: Path) -> dict[Key, Entry]:
    """The answers the file holds, in the order last written (empty where it cannot be read or is too long)."""
    descriptor = _open_regular(path, os.O_RDONLY)
    if descriptor is None:
        return {}
    with open(descriptor, "rb") as handle:
        text = handle.read(MOST_BYTES + 1)
    answers: dict[Key, Entry] = {}
    if len(text) > MOST_BYTES:
        return answers
    for raw in text.split(b"\n"):
        found = _line(raw) if raw.strip() else None
        if found is not None:
            answers.pop(found[0], None)  # the newest last
            answers[found[0]] = found[1]
    return answers


@cache
def _held() -> dict[Key, Entry]:
    """What this process knows of the cache: the answers by lookup as it first read them, and those it put since."""
    path = _file()
    return {} if path is None else _read(path)


def get(model: str, provider: str | None, on: str | None) -> Entry | None:
    """A lookup kept from an earlier run of this library version, None where there is none."""
    return _held().get((model, provider, on))


def _record(asked: Key, entry: Entry) -> bytes:
    record = {"schema": SCHEMA, "version": installed_version(), "key": list(asked), "answer": entry}
    return json.dumps(record, sort_keys=True).encode() + b"\n"


def put(model: str, provider: str | None, on: str | None, entry: Entry) -> None:
    """Keep a lookup for later runs: a line appended in one write, or the file written anew once it is full."""
    path, held, asked = _file(), _held(), (model, provider, on)
    if path is None or held.get(asked) == entry:
        return
    held[asked] = entry
    line = _record(asked, entry)
    if len(line) > LONGEST_LINE:
        return
    with suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = _open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        if descriptor is None:
            return
        try:
            full = os.fstat(descriptor).st_size >= FULL_BYTES
            if not full:
                os.write(descriptor, b"\n" + line)  # its own line even after one cut short
        finally:
            os.close(descriptor)
        if full:
            _write_anew(path, asked, entry)


def _write_anew(path: Path, asked: Key, entry: Entry) -> None:
    """The file replaced whole by its newest KEPT answers as it now is, this lookup's last; staged files another
    process left long ago removed."""
    answers = _read(path)
    answers.pop(asked, None)
    answers[asked] = entry
    newest = list(answers.items())[-KEPT:]
    with suppress(OSError):
        atomic.write_file(path, b"".join(_record(k, v) for k, v in newest), 0o600)
        for left in path.parent.glob(f".{path.name}.*"):
            with suppress(OSError):
                if left.lstat().st_mtime < time.time() - STALE_S:
                    left.unlink()


def reread() -> None:
    """Forget what this process has read of the cache and where it is: the next lookup reads it again."""
    _held.cache_clear()
    installed_version.cache_clear()
