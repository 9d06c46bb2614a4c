"""The JSON forms wismo writes: compact tool results, stable report files, and one canonical text per value."""

from __future__ import annotations

import json
from pathlib import Path

REPLACEMENT = "\ufffd"  # what half a UTF-16 pair (a lone surrogate, no character) becomes in a text that is written


def well_formed(text: str) -> str:
    """`text` with every lone surrogate (what json keeps of a JSON "\\ud800") replaced by U+FFFD, as System.Text.Json
    and the OpenTelemetry Collector's reader replace it: a text that can be written as UTF-8."""
    return "".join(REPLACEMENT if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


def well_formed_value(value: object) -> object:
    """A JSON value with every string in it well_formed, keys included."""
    if isinstance(value, dict):
        return {well_formed(str(k)): well_formed_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [well_formed_value(v) for v in value]
    return well_formed(value) if isinstance(value, str) else value


def compact(obj: object) -> str:
    """Serialize a tool result as compact JSON, keeping the record's own key order."""
    # Key order is the record's (as the article's C# serializer does); no spaces, UTF-8 as is.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def canonical(obj: object) -> str:
    """One text per JSON value whatever its keys' order (sorted keys, compact): what "the same value" compares."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def utf8_len(text: str) -> int:
    """Number of UTF-8 bytes in a text: the byte measure used everywhere in wismo."""
    return len(text.encode("utf-8"))


def stable(obj: object) -> str:
    """Serialize a report file: sorted keys, two-space indent, trailing newline."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def write_stable(path: str | Path, obj: object) -> Path:
    """Write `obj` to `path` in the stable form, creating folders as needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(stable(obj), encoding="utf-8")
    return path
