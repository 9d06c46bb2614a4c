"""OTLP JSON trace files read one span at a time: the OpenTelemetry Collector's file exporter output (one
ExportTraceServiceRequest per line) or one such document, each span read from the decoded JSON as the OTLP/JSON
mapping defines it. Ids may be hex (the OTLP/JSON specification, what the Collector writes) or base64 (what
protobuf's own JSON writer produces); span kinds and status codes may be integers or names; 64-bit integers may be
numbers or strings; fields may be named in lowerCamelCase or as the proto names them; unknown fields are ignored."""

from __future__ import annotations

import base64
import binascii
import glob
import gzip
import io
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import msgspec
import orjson
import zstandard

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

from wismo.core.errors import InputError
from wismo.core.jsonfmt import well_formed_value

# An id's length in bytes, by field: a trace id is 16 bytes, a span id 8 (OTLP/JSON: 32 and 16 hex digits).
ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
STATUS_ERROR = 2  # opentelemetry.proto.trace.v1.Status.STATUS_CODE_ERROR
# The enums' names as OTLP/JSON may give them (opentelemetry.proto.trace.v1: Span.SpanKind and Status.StatusCode).
SPAN_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


# Bytes a trace file is read in at once: the Collector's lines are often longer than the default 8 KiB buffer, and a
# line longer than its reader's buffer is read piece by piece (readline took three times as long on 14 KB lines).
LINE_BUFFER = 1 << 20


class TraceUnreadable(InputError):
    """A trace file wismo cannot read: `path`, the 1-based `line` (0 when the file as a whole) and the `problem`."""

    def __init__(self, path: str | Path, line: int, problem: str) -> None:
        where = f"{path}, line {line}" if line else str(path)
        super().__init__(f"{where}: {problem}.")
        self.path = str(path)
        self.line = line
        self.problem = problem


# The cycle collector does not track a span (msgspec's gc=False): it holds text, numbers and its attributes' values
# as JSON gave them, never a reference back, so no cycle can pass through it. Tracked, the spans held while their
# conversations are open made the collector's passes about a sixth of the whole analysis.
class Span(msgspec.Struct, gc=False):
    """One span as the analysis needs it: ids in hex, times in ns since the epoch, attributes as plain values, the
    service its resource names, and the file and line it came from."""

    trace_id: str
    span_id: str
    parent_id: str  # "" for a root span
    name: str
    kind: int  # opentelemetry.proto.trace.v1.Span.SpanKind
    start_ns: int
    end_ns: int
    attributes: dict[str, object]
    failed: bool  # its status is an error
    service: str
    path: str
    line: int


class _Malformed(InputError):
    """A value that is not what OTLP/JSON puts at its place; its message says which and what."""


def _field(table: dict[str, object], camel: str, proto: str) -> object:
    """A field by its lowerCamelCase JSON name or its proto name (protobuf's reader takes either)."""
    value = table.get(camel)
    return table.get(proto) if value is None else value


def _id(value: object, size: int, field: str) -> str:
    """An id of `size` bytes as hex, from hex of `size` bytes or base64 of them; absent or empty is ""."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise _Malformed(f"{field} must be a string of hex digits or base64, not {type(value).__name__}")
    if len(value) == 2 * size:
        try:
            hexed = bytes.fromhex(value)
        except ValueError:
            hexed = b""
        if len(hexed) == size:  # fromhex skips whitespace: hex with some in it is fewer bytes than the id's
            return hexed.hex()
    try:
        decoded = _base64(value)
    except (binascii.Error, ValueError):
        decoded = b""
    if len(decoded) != size:
        raise _Malformed(f"{field} {value[:40]!r} is neither {2 * size} hex digits nor base64 of {size} bytes")
    return decoded.hex()


# What reading captured content (messages, definitions, arguments, results) as JSON raises where it is not JSON, or is
# nested too deeply to read: either way the content is taken as not JSON, never a traceback.
NOT_JSON = (ValueError, RecursionError)  # json's error, a number of more digits than Python reads, or too deep
TOO_LONG = f"a number of more than {sys.get_int_max_str_digits():,} digits, more than Python reads"


def _base64(text: str) -> bytes:
    """Base64 as protobuf's JSON reader takes it: standard or URL-safe, with or without its padding."""
    text = text.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # JSON's escape of half a UTF-16 pair


def loads(text: str) -> object:
    """JSON text as json reads it (every number exact), with a lone surrogate (an escape of half a UTF-16 pair, which
    is no character) read as U+FFFD, as the Collector's own reader reads it: what is read can be written as UTF-8.
    Raises what NOT_JSON names where the text is not JSON."""
    value = json.loads(text)
    # What is left of a pair once json has joined the whole ones is half of one, which well_formed replaces.
    return well_formed_value(value) if SURROGATE_ESCAPE.search(text) else value


def decoded(text: str) -> object:
    """JSON text parsed by orjson, or by json where orjson refuses it (NaN, a lone surrogate, text that is not JSON:
    loads' value or json's error). The two agree on every value but an integer beyond 64 bits, a float to orjson: OTLP
    has none (_integer and _enum refuse it either way), and the captured messages are read for their texts and ids."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return loads(text)


INT64 = range(-(2**63), 2**64)  # a 64-bit integer, signed or unsigned (OTLP's int64, uint64 and fixed64)
UINT64 = range(2**64)  # a span's times (fixed64)
INT32 = range(-(2**31), 2**31)  # an enum's number
COUNT = range(2**63)  # a count as an int64 holds it: never negative
DECIMAL = re.compile(r"-?[0-9]{1,20}")  # a 64-bit integer's text in OTLP/JSON: ASCII digits, "-" before a negative
# Decimal text of fewer digits (what the Collector writes for 64-bit integers) is one as it stands: where every span
# has some (its times, its token counts), read by this fast form of `decimal` (ASCII digits, no sign), inline.
SHORT_DECIMAL = 20


def decimal(text: str) -> int | None:
    """An integer's decimal text as OTLP/JSON writes a 64-bit one (DECIMAL), as an int; None for other text."""
    return int(text) if DECIMAL.fullmatch(text) else None


def _integer(value: object, field: str, within: range = INT64) -> int:
    """A 64-bit integer as OTLP/JSON gives it, `within` a range: a number or its decimal text (ASCII digits, no sign
    but a minus, no spaces); absent is 0."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise _Malformed(f"{field} must be an integer, not a boolean")
    number: int | None = None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer() and -(2**63) < value < 2**64:
        number = int(value)  # not -2**63 or below, nor 2**64 or above: orjson's reading of an integer beyond 64 bits
    elif isinstance(value, str):
        number = decimal(value)
    if number is None or number not in within:
        kind = "an unsigned 64-bit integer" if within is UINT64 else "a 64-bit integer"
        raise _Malformed(f"{field} must be {kind}, not {str(value)[:40]!r}")
    return number


def _enum(value: object, names: dict[str, int], field: str) -> int:
    """An enum as OTLP/JSON gives it: its integer or its name; absent is 0."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value in INT32:
        return value
    if isinstance(value, str) and value in names:
        return names[value]
    raise _Malformed(f"{field} {str(value)[:40]!r} is none of {', '.join(names)}")


FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|NaN|-?Infinity")  # JSON's number, or these


def _float(value: object, field: str) -> float:
    """A double as OTLP/JSON gives it: a number, or "NaN", "Infinity", "-Infinity" or a decimal string (ASCII)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and FLOAT.fullmatch(value):
        return float(value)
    raise _Malformed(f"{field} must be a number, not {str(value)[:40]!r}")


def _list(value: object, field: str) -> list[object]:
    """A repeated field: a list, or absent (empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Malformed(f"{field} must be a list, not {type(value).__name__}")
    return value


def _table(value: object, field: str) -> dict[str, object]:
    """A message field: an object, or absent (empty)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Malformed(f"{field} must be an object, not {type(value).__name__}")
    return value


def plain(value: object) -> object:
    """An OTLP/JSON AnyValue as a Python value (str, int, float, bool, bytes as hex, list, dict; None when unset)."""
    any_value = _table(value, "an attribute's value")
    for key, item in any_value.items():
        if key in ("stringValue", "string_value"):
            if not isinstance(item, str):
                raise _Malformed(f"stringValue must be a string, not {type(item).__name__}")
            return item
        if key in ("intValue", "int_value"):
            return _integer(item, "intValue")
        if key in ("boolValue", "bool_value"):
            if not isinstance(item, bool):
                raise _Malformed(f"boolValue must be true or false, not {str(item)[:40]!r}")
            return item
        if key in ("doubleValue", "double_value"):
            return _float(item, "doubleValue")
        if key in ("arrayValue", "array_value"):
            return [plain(v) for v in _list(_table(item, "arrayValue").get("values"), "arrayValue.values")]
        if key in ("kvlistValue", "kvlist_value"):
            return _attributes(_table(item, "kvlistValue").get("values"))
        if key in ("bytesValue", "bytes_value"):
            if not isinstance(item, str):
                raise _Malformed(f"bytesValue must be base64 text, not {type(item).__name__}")
            try:
                return _base64(item).hex()
            except (binascii.Error, ValueError):
                raise _Malformed(f"bytesValue {item[:40]!r} is not base64") from None
    return None  # no value set (or only fields this reader does not know)


def _attributes(values: object) -> dict[str, object]:
    """A list of KeyValue as a dict (a key given twice: the last)."""
    out: dict[str, object] = {}
    listed: list[Any] = _list(values, "attributes")  # Any: each is tried as a dict first, then checked
    for kv in listed:
        # The common case, a key and a value table, read without the general walk's checks (the same value; a string,
        # the most common, without plain's): the lookups raise where they are not there, costing nothing where they are.
        try:
            key, value = kv["key"], kv["value"]
            text = value.get("stringValue")
        except (KeyError, TypeError, AttributeError):
            pass
        else:
            if type(key) is str:
                if type(text) is str and len(value) == 1:
                    out[key] = text
                    continue
                number = value.get("intValue")
                if (
                    type(number) is str
                    and len(value) == 1
                    and len(number) < SHORT_DECIMAL
                    and number.isascii()
                    and number.isdecimal()
                ):
                    out[key] = int(number)
                    continue
                out[key] = plain(value)
                continue
        pair = _table(kv, "an attribute")
        key = pair.get("key", "")
        if not isinstance(key, str):
            raise _Malformed(f"an attribute's key must be a string, not {type(key).__name__}")
        out[key] = plain(pair.get("value"))
    return out


def _known(s: dict[str, object], field: str, proto: str, ids: dict[str, str]) -> str:
    """A span's id in `field` (or its proto name) as _id reads it, from `ids` where this document gave it before:
    its spans repeat their trace's id, and a parent's id is an earlier span's."""
    value = s.get(field)
    if value is None:
        value = s.get(proto)
    size = ID_BYTES[field]
    if type(value) is str:
        known = ids.get(value)
        if known is None or len(known) != 2 * size:  # a trace id given where a span id belongs is still refused
            known = ids[value] = _id(value, size, field)
        return known
    return _id(value, size, field)


def _span(raw: object, service: str, where: str, line: int, ids: dict[str, str]) -> Span:
    """One span of a document; _Malformed says what in it is not OTLP/JSON. `ids` holds the ids already read in the
    document, as given and in hex (_known)."""
    s = raw if type(raw) is dict else _table(raw, "a span")
    start, end = s.get("startTimeUnixNano"), s.get("endTimeUnixNano")
    if not (isinstance(start, str) and len(start) < SHORT_DECIMAL and start.isascii() and start.isdecimal()):
        start = _integer(_field(s, "startTimeUnixNano", "start_time_unix_nano"), "startTimeUnixNano", UINT64)
    if not (isinstance(end, str) and len(end) < SHORT_DECIMAL and end.isascii() and end.isdecimal()):
        end = _integer(_field(s, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano", UINT64)
    start, end = int(start), int(end)
    name = s.get("name", "")
    if not isinstance(name, str):
        raise _Malformed(f"a span's name must be a string, not {type(name).__name__}")
    links = s.get("links")
    if links is not None:
        for link in _list(links, "links"):
            linked = _table(link, "a link")
            _id(_field(linked, "traceId", "trace_id"), ID_BYTES["traceId"], "a link's traceId")
            _id(_field(linked, "spanId", "span_id"), ID_BYTES["spanId"], "a link's spanId")
    # Checked in the order the general reader checked them, so a span wrong twice is said wrong in the same words.
    trace_id = _known(s, "traceId", "trace_id", ids)
    span_id = _known(s, "spanId", "span_id", ids)
    parent_id = _known(s, "parentSpanId", "parent_span_id", ids)
    kind = s.get("kind")
    kind = kind if type(kind) is int and kind in INT32 else _enum(kind, SPAN_KINDS, "kind")
    attributes = _attributes(s.get("attributes"))
    status = s.get("status")
    code = status.get("code") if type(status) is dict else _table(status, "status").get("code")
    failed = (code if type(code) is int and code in INT32 else _enum(code, STATUS_CODES, "status.code")) == STATUS_ERROR
    return Span(
        trace_id, span_id, parent_id, name, kind, start, max(end, start), attributes, failed, service, where, line
    )


def _spans(document: object, path: str, line: int) -> Iterator[Span]:
    """The spans of one decoded ExportTraceServiceRequest, each with its resource's service name; TraceUnreadable
    says why a document is none."""
    if not isinstance(document, dict) or ("resourceSpans" not in document and "resource_spans" not in document):
        raise TraceUnreadable(path, line, "not OTLP JSON (no resourceSpans: expected an ExportTraceServiceRequest)")
    where = path
    try:
        # Every span of the document first: a malformed one anywhere makes the whole line unreadable, as protobuf's
        # reader did, and nothing of it is given.
        found: list[Span] = []
        ids: dict[str, str] = {}
        for resource_spans in _list(_field(document, "resourceSpans", "resource_spans"), "resourceSpans"):
            rs = _table(resource_spans, "a resourceSpans entry")
            resource = _attributes(_table(rs.get("resource"), "resource").get("attributes"))
            service = str(resource.get("service.name") or "")
            for scope_spans in _list(_field(rs, "scopeSpans", "scope_spans"), "scopeSpans"):
                for raw in _list(_table(scope_spans, "a scopeSpans entry").get("spans"), "spans"):
                    found.append(_span(raw, service, where, line, ids))
    except _Malformed as exc:
        raise TraceUnreadable(path, line, f"not OTLP JSON ({exc})") from None
    except RecursionError:
        raise TraceUnreadable(path, line, "not OTLP JSON (nested too deeply)") from None
    return iter(found)


def named(path: str | Path) -> str:
    """A trace file's path as its spans name it (Span.path): a file:// URL as the local path it names."""
    where = local(str(path))
    return where if remote(where) else str(Path(where))


def remote(where: str) -> bool:
    """Whether a trace file's path names another filesystem (s3://..., and the like), read through fsspec."""
    return "://" in where and not where.startswith("file://")


def local(where: str) -> str:
    """A file:// URL of this machine (no host, or localhost) as the path it names; anything else as given."""
    if not where.startswith("file://"):
        return where
    from urllib.parse import unquote, urlsplit

    url = urlsplit(where)
    return unquote(url.path) if url.netloc in ("", "localhost") else where


def expand(patterns: Iterable[str | Path]) -> list[str]:
    """The trace files that paths and globs name, each glob's matches sorted: local ones by the glob module, remote
    ones by fsspec, a file:// URL as its local path, a file named twice once; TraceUnreadable names a glob that
    matches nothing."""
    found: list[str] = []
    for pattern in (local(str(p)) for p in patterns):
        if not glob.has_magic(pattern):
            found.append(pattern)
            continue
        if remote(pattern):
            try:
                import fsspec

                matched = [f.full_name if hasattr(f, "full_name") else f.path for f in fsspec.open_files(pattern)]
            except (OSError, ValueError, ImportError) as exc:  # no such filesystem's package, no access
                raise TraceUnreadable(pattern, 0, f"cannot be listed ({exc})") from None
        else:
            matched = sorted(glob.glob(pattern))
        if not matched:
            raise TraceUnreadable(pattern, 0, "matches no file")
        found += matched
    # A file named twice (a glob and a path, two globs) is read once, where first named.
    first: dict[str, str] = {}
    for f in found:
        first.setdefault(f if remote(f) else os.path.realpath(f), f)
    return list(first.values())


def same_bytes(files: list[str]) -> dict[str, str]:
    """Each local regular file that holds the same bytes as one named before it (a copy under another name, a hard
    link), with that one, in the order they are named: read once, where first named. A hard link is known by its
    inode; other files are compared only with files of their size, by a hash of their bytes. A pipe or a FIFO is
    never read here (its bytes would be gone before the analysis)."""
    import stat

    by_size: dict[int, list[str]] = {}
    inodes: dict[tuple[int, int], str] = {}
    found: dict[str, str] = {}
    for f in files:
        if remote(f):
            continue
        try:
            st = os.stat(f)
        except OSError:
            continue  # reading it says what is wrong
        if not stat.S_ISREG(st.st_mode):
            continue
        earlier = inodes.setdefault((st.st_dev, st.st_ino), f)
        if earlier != f:
            found[f] = earlier
        else:
            by_size.setdefault(st.st_size, []).append(f)
    for named in by_size.values():
        if len(named) < 2:  # a size one file alone has: nothing to compare it with, nothing read
            continue
        first: dict[str, str] = {}  # digest -> the first file with it
        for f in named:
            digest = _digest(f)
            if digest is not None and (earlier := first.setdefault(digest, f)) != f:
                found[f] = earlier
    return {f: found[f] for f in files if f in found}


def _digest(path: str) -> str | None:
    """A hash of a file's bytes, None where it cannot be read."""
    import hashlib

    h = hashlib.blake2b(digest_size=32)
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


class _ZstdFrames(io.RawIOBase):
    """A zstd file's bytes decompressed as they are read, frame after frame (the Collector's file exporter may write
    one per batch); a file that ends inside a frame is a ZstdError, not a shorter text. The compressed bytes are fed
    a slice at a time, each once what the last gave has been read: a slice's output is bounded (a zstd block gives at
    most 128 KiB for a few bytes: 32 MiB for a slice), so a file that decompresses to gigabytes is never held whole."""

    SLICE = 1 << 10  # compressed bytes fed at once

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.decompressor = zstandard.ZstdDecompressor()
        self.frame = self.decompressor.decompressobj()
        self.started = False  # some of the current frame's bytes have been fed
        self.compressed, self.fed = b"", 0  # bytes read from the file, and how many of them were fed
        self.pending, self.given = b"", 0  # decompressed bytes, and how many of them were given

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        while self.given == len(self.pending):
            if self.fed == len(self.compressed):
                self.compressed, self.fed = self.raw.read(1 << 16), 0
                if not self.compressed:
                    if self.started:
                        raise zstandard.ZstdError("the file ends inside a zstd frame (cut short)")
                    return 0
            piece = self.compressed[self.fed : self.fed + self.SLICE]
            self.fed += len(piece)
            self.started = True
            self.pending, self.given = self.frame.decompress(piece), 0
            if self.frame.eof:  # the frame is whole: what follows it in the slice is the next frame's, fed again
                self.fed -= len(self.frame.unused_data)
                self.frame = self.decompressor.decompressobj()
                self.started = False
        view = memoryview(buffer).cast("B")
        size = min(len(view), len(self.pending) - self.given)
        view[:size] = memoryview(self.pending)[self.given : self.given + size]
        self.given += size
        return size

    def close(self) -> None:
        self.raw.close()
        super().close()


def _open(where: str) -> IO[str]:
    """A trace file's text as it streams (a file read whole as one document)."""
    return io.TextIOWrapper(_stream(where), encoding="utf-8")


def _stream(where: str) -> IO[bytes]:
    """A trace file's bytes as they stream: gzip (.gz) and zstd (.zst) decompressed as they are read, a remote path
    through fsspec (its filesystem's package installed by the user), anything else a local file."""
    if remote(where):
        import fsspec

        opened: IO[bytes] = fsspec.open(where, "rb", compression="infer").open()
        return opened
    if where.endswith(".gz"):
        return cast("IO[bytes]", gzip.open(where, "rb"))
    if where.endswith(".zst"):
        return cast("IO[bytes]", io.BufferedReader(_ZstdFrames(open(where, "rb")), LINE_BUFFER))
    return open(where, "rb", buffering=LINE_BUFFER)


def compressed(where: str) -> bool:
    """Whether a trace file is read through a decompressor (which cannot start inside it)."""
    if where.endswith((".gz", ".zst")):
        return True
    if remote(where):
        from fsspec.utils import infer_compression

        return infer_compression(where) is not None
    return False


def lines_start(where: str) -> bool:
    """Whether an uncompressed trace file is the Collector's lines (its first line one OTLP JSON document), which a
    byte range can be read from, not one indented document."""
    try:
        with _open_bytes(where) as handle:
            first = handle.readline()
        return isinstance(decoded(first.decode("utf-8")), dict)
    except (OSError, ValueError, ImportError, RecursionError):
        return False


def _open_bytes(where: str) -> IO[bytes]:
    """An uncompressed trace file's bytes, local or remote, to seek in."""
    if remote(where):
        import fsspec

        opened: IO[bytes] = fsspec.open(where, "rb").open()
        return opened
    return open(where, "rb", buffering=LINE_BUFFER)


def _range(handle: IO[bytes], start: int, end: int) -> Iterator[bytes]:
    """The lines that start at or after byte `start` and before byte `end`: a line that starts before `start` is the
    previous range's, and one that starts at `end` the next's."""
    if start:
        handle.seek(start - 1)
        handle.readline()  # the end of the line that started before `start` (only its newline when at `start`)
    position = handle.tell()
    while position < end:
        raw = handle.readline()
        if not raw:
            return
        position += len(raw)
        yield raw


def _not_json(where: str, line: int, unit: str, text: str, exc: json.JSONDecodeError) -> TraceUnreadable:
    """What json's error on a line's or a file's text says to the reader: cut short where the text ends before its
    JSON does (an open string, or the error at its end), else not JSON, where."""
    # json's words, and the column they point at ("Unterminated string starting at" names it after "at").
    said = f"{exc.msg}{'' if exc.msg.endswith(' at') else ','} column {exc.colno}"
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return TraceUnreadable(where, line, f"truncated: the {unit} ends before its JSON does ({said})")
    return TraceUnreadable(where, line, f"not JSON ({said})")


def _why(exc: Exception) -> str:
    """Why a file cannot be opened, in the system's words: fsspec raises FileNotFoundError with the path alone."""
    said = getattr(exc, "strerror", None)
    if said:
        return str(said)
    return "No such file or directory" if isinstance(exc, FileNotFoundError) else str(exc)


class _Mark:
    """What a line is when it holds no document: blank, or the start of a file that is one indented document."""


BLANK, WHOLE = _Mark(), _Mark()


def _documents(where: str, start: int, end: int | None, first_line: int) -> Iterator[tuple[int, object]]:
    """Each line of a file (or of the lines that start in bytes [start, end) of it) with its number and its JSON:
    BLANK for a blank line, WHOLE (and nothing after it) where the file is one indented document. Lines are split at
    "\n" alone and each decoded apart, whether the file is read whole or in ranges, so a line has one number either
    way. TraceUnreadable names a line that is not JSON."""
    try:
        opened = _stream(where) if end is None else _open_bytes(where)
    except (OSError, ValueError, ImportError) as exc:
        raise TraceUnreadable(where, 0, f"cannot be read ({_why(exc)})") from None
    with opened:
        number = first_line - 1
        first = end is None  # only a whole file may be one indented document
        try:
            for number, raw in enumerate(opened if end is None else _range(opened, start, end), start=first_line):
                if not raw or raw.isspace():  # not raw.strip(): that copies every line
                    yield number, BLANK
                    continue
                try:
                    document = orjson.loads(raw)
                except orjson.JSONDecodeError:  # json's reading decides: its value, or its error in its words
                    text = raw.decode("utf-8")
                    try:
                        document = loads(text)
                    except RecursionError:
                        raise TraceUnreadable(where, number, "not OTLP JSON (nested too deeply)") from None
                    except json.JSONDecodeError as exc:
                        if first and text.lstrip().startswith("{"):
                            yield number, WHOLE
                            return
                        raise _not_json(where, number, "line", text, exc) from None
                    except ValueError:
                        raise TraceUnreadable(where, number, f"not OTLP JSON ({TOO_LONG})") from None
                first = False
                yield number, document
        except UnicodeDecodeError:
            raise TraceUnreadable(where, number, "not UTF-8 text") from None
        except (OSError, EOFError, zstandard.ZstdError) as exc:  # a compressed file damaged or cut short
            raise TraceUnreadable(where, number + 1, f"cannot be decompressed ({exc})") from None


def traced(path: str, attribute: str, start: int = 0, end: int | None = None) -> tuple[list[tuple[str, object]], int]:
    """Each span's trace id with its value of one attribute (None where it has none), and the lines read, without
    making spans: what cutting the files into parts needs. Its lines are read()'s; a span that read() would refuse
    is passed over (read() says what is wrong with it)."""
    where, found, lines = named(path), [], 0
    for number, document in _documents(where, start, end, 1):
        lines = number
        if document is BLANK:
            continue
        if document is WHOLE:
            return [(s.trace_id, s.attributes.get(attribute)) for s in _whole(where)], 0
        try:
            request = _table(document, "a line")
            for resource_spans in _list(_field(request, "resourceSpans", "resource_spans"), "resourceSpans"):
                rs = _table(resource_spans, "a resourceSpans entry")
                for scope_spans in _list(_field(rs, "scopeSpans", "scope_spans"), "scopeSpans"):
                    for raw in _list(_table(scope_spans, "a scopeSpans entry").get("spans"), "spans"):
                        span = _table(raw, "a span")
                        value = None
                        for kv in _list(span.get("attributes"), "attributes"):
                            pair = _table(kv, "an attribute")
                            if pair.get("key") == attribute:
                                value = plain(pair.get("value"))
                        found.append((_id(_field(span, "traceId", "trace_id"), 16, "traceId"), value))
        except (_Malformed, RecursionError):
            continue
    return found, lines


def read(path: str | Path, start: int = 0, end: int | None = None, first_line: int = 1) -> Iterator[Span]:
    """Every span of an OTLP JSON file in file order, read line by line as it streams (a file that is one indented
    document is read whole); with `end`, only of the lines that start in bytes [start, end) of an uncompressed file,
    numbered from `first_line`. TraceUnreadable names the file, the line and the problem."""
    where = named(path)
    for number, document in _documents(where, start, end, first_line):
        if document is WHOLE:
            yield from _whole(where)
            return
        if document is not BLANK:
            yield from _spans(document, where, number)


def _whole(where: str) -> Iterator[Span]:
    """The spans of a file that is one (indented) OTLP JSON document."""
    try:
        with _open(where) as handle:
            text = handle.read()
        document = decoded(text)
    except (OSError, EOFError, zstandard.ZstdError) as exc:  # a compressed file damaged or cut short
        raise TraceUnreadable(where, 0, f"cannot be decompressed ({exc})") from None
    except UnicodeDecodeError:
        raise TraceUnreadable(where, 0, "not UTF-8 text") from None
    except RecursionError:
        raise TraceUnreadable(where, 1, "not OTLP JSON (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise _not_json(where, exc.lineno, "file", text, exc) from None
    except ValueError:
        raise TraceUnreadable(where, 0, f"not OTLP JSON ({TOO_LONG})") from None
    yield from _spans(document, where, 1)
