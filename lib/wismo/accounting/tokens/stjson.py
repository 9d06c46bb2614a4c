"""System.Text.Json's writer reproduced: its two built-in string escapers and its compact and indented layouts.

Sources (dotnet/runtime): System.Text.Json/.../Writer/JsonWriterHelper.Escaping.cs (the writer's own escaping
when no encoder is set: AllowList, EscapeNextBytes), System.Text.Encodings.Web/.../DefaultJavaScriptEncoder.cs
(JavaScriptEncoder.Default and UnsafeRelaxedJsonEscaping: which characters each forbids and the escaper's
short forms), AllowedBmpCodePointsBitmap.cs (ForbidHtmlCharacters, ForbidUndefinedCharacters) and
OptimizedInboxTextEncoder.cs (ill-formed UTF-16 becomes U+FFFD; scalars above U+FFFF are never allowed).
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from wismo.core.jsonfmt import REPLACEMENT

DEFAULT = "JavaScriptEncoder.Default"  # also what the writer does when JsonSerializerOptions.Encoder is null
RELAXED = "JavaScriptEncoder.UnsafeRelaxedJsonEscaping"
ENCODERS = (DEFAULT, RELAXED)

# The escaper's two-character forms (EscaperImplementation's pre-escaped map; the writer's EscapeNextBytes agrees).
_SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", "\\": "\\\\"}
# Default: ASCII 0x20-0x7E is allowed except the HTML-sensitive characters (ForbidHtmlCharacters: < > & ' " +)
# and the two DefaultJavaScriptEncoder adds (backslash, and the grave accent, which ECMAScript treats specially).
_DEFAULT_FORBIDDEN_ASCII = frozenset("<>&'\"+\\`")
# Categories no built-in encoder lets through (ForbidUndefinedCharacters); Zs is forbidden except U+0020 SPACE.
_ALWAYS_ESCAPED_CATEGORIES = frozenset({"Cc", "Cs", "Co", "Cn", "Zl", "Zp"})


def _hex(code_unit: int) -> str:
    """One \\uXXXX escape, upper-case hex as HexConverter writes it."""
    return f"\\u{code_unit:04X}"


def _escape_scalar(ch: str, relaxed: bool) -> str:
    """The escaped form of one scalar the encoder does not allow: short form, else \\uXXXX (a pair above U+FFFF)."""
    if ch in _SHORT:
        return _SHORT[ch]
    if relaxed and ch == '"':
        return '\\"'  # only the relaxed escaper pre-escapes the quote; the default one writes \u0022
    code = ord(ch)
    if code > 0xFFFF:
        code -= 0x10000
        return _hex(0xD800 + (code >> 10)) + _hex(0xDC00 + (code & 0x3FF))
    return _hex(code)


def _allowed(ch: str, relaxed: bool) -> bool:
    """Whether the encoder writes this scalar as it is."""
    code = ord(ch)
    if code < 0x80:
        if code < 0x20 or code == 0x7F:
            return False
        return ch not in ('"', "\\") if relaxed else ch not in _DEFAULT_FORBIDDEN_ASCII
    if not relaxed or code > 0xFFFF:
        # Default allows UnicodeRanges.BasicLatin only; the bitmap of every encoder covers the BMP only.
        return False
    # Python's Unicode tables (14.0 on 3.11) stand in for .NET's: a character assigned in a later version counts
    # as unassigned (Cn) here and is escaped, where a newer .NET writes it as it is.
    category = unicodedata.category(ch)
    return category not in _ALWAYS_ESCAPED_CATEGORIES and category != "Zs"


def escape(text: str, encoder: str = DEFAULT) -> str:
    """The inside of the JSON string System.Text.Json writes for `text` with the given encoder."""
    if encoder not in ENCODERS:
        raise ValueError(f"unknown encoder {encoder!r}; expected one of {', '.join(ENCODERS)}")
    relaxed = encoder == RELAXED
    out = []
    for ch in text:
        if 0xD800 <= ord(ch) <= 0xDFFF:
            # A lone surrogate (Python keeps what a JSON "\ud800" decodes to) is ill-formed UTF-16: the encoder
            # substitutes U+FFFD and always escapes the substitute.
            out.append(_hex(ord(REPLACEMENT)))
        elif _allowed(ch, relaxed):
            out.append(ch)
        else:
            out.append(_escape_scalar(ch, relaxed))
    return "".join(out)


def escapes_found(texts: list[str], encoder: str = DEFAULT) -> list[dict[str, object]]:
    """Every character of `texts` the encoder writes as an escape: the character, its escape, how often it occurs
    and where it first does (a few characters either side), in order of first occurrence."""
    found: dict[str, dict[str, Any]] = {}
    for text in texts:
        for i, ch in enumerate(text):
            if ch in found:
                found[ch]["occurrences"] += 1
            elif (escaped := escape(ch, encoder)) != ch:
                found[ch] = {
                    "character": ch,
                    "escaped": escaped,
                    "occurrences": 1,
                    "firstSeenIn": text[max(0, i - 12) : i + 8],
                }
    return list(found.values())


def _scalar(value: object, encoder: str) -> str:
    """A JSON literal: string, number, true, false or null."""
    if isinstance(value, str):
        return f'"{escape(value, encoder)}"'
    if value is None or isinstance(value, (bool, int, float)):
        # Numbers of a JsonElement are written as their source text; Python's shortest repr matches it for
        # integers and for the usual decimal forms, not for exponents written another way (1E5 vs 100000.0).
        return json.dumps(value)
    raise TypeError(f"cannot write a value of type {type(value).__name__} as JSON")


def dumps(value: object, encoder: str = DEFAULT, indented: bool = False, newline: str = "\n") -> str:
    """JSON as Utf8JsonWriter writes it: keys in the given order; indented means two spaces and '": "' after keys.

    `newline` is JsonSerializerOptions.NewLine, which defaults to Environment.NewLine ("\\r\\n" on Windows).
    """

    def write(node: object, depth: int) -> str:
        if isinstance(node, dict):
            items = [
                f'"{escape(str(k), encoder)}":{" " if indented else ""}{write(v, depth + 1)}' for k, v in node.items()
            ]
            return _container("{", "}", items, depth)
        if isinstance(node, (list, tuple)):
            return _container("[", "]", [write(v, depth + 1) for v in node], depth)
        return _scalar(node, encoder)

    def _container(open_: str, close: str, items: list[str], depth: int) -> str:
        if not items:
            return open_ + close  # the writer closes an empty container on the same line
        if not indented:
            return open_ + ",".join(items) + close
        inner = newline + "  " * (depth + 1)
        return open_ + inner + ("," + inner).join(items) + newline + "  " * depth + close

    return write(value, 0)
