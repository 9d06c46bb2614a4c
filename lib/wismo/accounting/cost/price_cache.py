"""The price library's lookups kept on disk between runs, one file per library version: importing the library takes
a short command most of its start (about 0.15 s of pydantic models and an HTTP client it never uses here), and a
version's price data never changes. Best effort: a cache that cannot be read is ignored, one that cannot be written is
left; the folder is WISMO_CACHE_DIR (empty: no cache), else $XDG_CACHE_HOME/wismo, else ~/.cache/wismo."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import tempfile
from contextlib import suppress
from functools import cache
from pathlib import Path

CACHE_ENV = "WISMO_CACHE_DIR"
SCHEMA = "wismo.prices/1"
PACKAGE, DISTRIBUTION = "genai_prices", "genai-prices"
MOST_BYTES = 1 << 20  # a cache file this long is not one wismo wrote
MOST_ENTRIES = 1_000  # lookups kept per version; beyond them nothing more is written
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
    return None if where is None or version is None else where / f"prices-{DISTRIBUTION}-{version}.json"


def key(model: str, provider: str | None, on: str | None) -> str:
    """A lookup's key in the cache."""
    return json.dumps([model, provider, on])


def _valid(entry: object, model: str) -> bool:
    """Whether a cached entry is one lookup_entry could have written for `model`."""
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


@cache
def _entries() -> dict[str, Entry]:
    """The cache file's entries for the installed version as this process first reads them (empty where none)."""
    path = _file()
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            text = handle.read(MOST_BYTES + 1)
        if len(text) > MOST_BYTES:
            return {}
        held = json.loads(text)
    except (OSError, ValueError, RecursionError):
        return {}
    if (
        not isinstance(held, dict)
        or held.get("schema") != SCHEMA
        or held.get("version") != installed_version()
        or not isinstance(held.get("lookups"), dict)
    ):
        return {}
    return {k: v for k, v in held["lookups"].items() if isinstance(k, str) and _looked_up_as(k, v)}


def _looked_up_as(k: str, entry: object) -> bool:
    try:
        model = json.loads(k)[0]
    except (ValueError, IndexError, TypeError, KeyError):
        return False
    return isinstance(model, str) and _valid(entry, model)


def get(model: str, provider: str | None, on: str | None) -> Entry | None:
    """A lookup kept from an earlier run of this library version, None where there is none."""
    return _entries().get(key(model, provider, on))


def put(model: str, provider: str | None, on: str | None, entry: Entry) -> None:
    """Keep a lookup for later runs: the file is replaced whole, so a reader sees it before or after, never half."""
    path, entries = _file(), _entries()
    k = key(model, provider, on)
    if path is None or entries.get(k) == entry or len(entries) >= MOST_ENTRIES or not _valid(entry, model):
        return
    entries[k] = entry
    text = json.dumps({"schema": SCHEMA, "version": installed_version(), "lookups": entries}, sort_keys=True)
    staged: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, staged = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(staged, path)
    except OSError:
        if staged is not None:
            with suppress(OSError):
                os.unlink(staged)


def reread() -> None:
    """Forget what this process has read of the cache and where it is: the next lookup reads it again."""
    _entries.cache_clear()
    installed_version.cache_clear()
