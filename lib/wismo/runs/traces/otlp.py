"""OTLP JSON trace files read one span at a time: the OpenTelemetry Collector's file exporter output (one
ExportTraceServiceRequest per line) or one such document, through opentelemetry-proto's classes and protobuf's
JSON reader. Ids may be hex (the OTLP/JSON specification, what the Collector writes) or base64 (what protobuf's own
JSON writer produces); span kinds and status codes may be integers or names (protobuf's reader takes both)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wismo.core.errors import InputError

if TYPE_CHECKING:  # opentelemetry-proto is imported when a file is read, not with this module
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

# An id's length in bytes, by field: a trace id is 16 bytes, a span id 8 (OTLP/JSON: 32 and 16 hex digits).
ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
STATUS_ERROR = 2  # opentelemetry.proto.trace.v1.Status.STATUS_CODE_ERROR


class TraceUnreadable(InputError):
    """A trace file wismo cannot read: `path`, the 1-based `line` (0 when the file as a whole) and the `problem`."""

    def __init__(self, path: str | Path, line: int, problem: str) -> None:
        where = f"{path}, line {line}" if line else str(path)
        super().__init__(f"{where}: {problem}.")
        self.path = str(path)
        self.line = line
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Span:
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


def _hex_to_base64(value: object, size: int, field: str) -> object:
    """An id as protobuf's JSON reader takes it (base64): hex of `size` bytes converted, base64 of `size` bytes
    kept; anything else is a problem named by `field`."""
    if not isinstance(value, str) or value == "":
        return value
    if len(value) == 2 * size:
        try:
            return base64.b64encode(bytes.fromhex(value)).decode("ascii")
        except ValueError:
            pass
    try:
        if len(base64.b64decode(value, validate=True)) == size:
            return value
    except (binascii.Error, ValueError):
        pass
    raise ValueError(f"{field} {value[:40]!r} is neither {2 * size} hex digits nor base64 of {size} bytes")


def _ids_as_base64(document: dict[str, Any]) -> None:
    """Rewrites, in place, every span's (and span link's) ids so protobuf's reader reads them as they were meant."""
    for resource in document.get("resourceSpans") or ():
        for scope in (resource or {}).get("scopeSpans") or ():
            for span in (scope or {}).get("spans") or ():
                if not isinstance(span, dict):
                    continue
                for field, size in ID_BYTES.items():
                    if field in span:
                        span[field] = _hex_to_base64(span[field], size, field)
                for link in span.get("links") or ():
                    for field in ("traceId", "spanId"):
                        if isinstance(link, dict) and field in link:
                            link[field] = _hex_to_base64(link[field], ID_BYTES[field], f"a link's {field}")


def plain(value: AnyValue) -> object:
    """An OTLP AnyValue as a Python value (str, int, float, bool, bytes as hex, list, dict; None when unset)."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [plain(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: plain(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, which)


def _request(document: object, path: Path, line: int) -> ExportTraceServiceRequest:
    """The ExportTraceServiceRequest a decoded JSON document holds, or TraceUnreadable saying why it is none."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    if not isinstance(document, dict) or "resourceSpans" not in document:
        raise TraceUnreadable(path, line, "not OTLP JSON (no resourceSpans: expected an ExportTraceServiceRequest)")
    request = ExportTraceServiceRequest()
    try:
        _ids_as_base64(document)
        # OTLP/JSON receivers must ignore fields they do not know (a newer Collector's, say); it fills `request`.
        json_format.ParseDict(document, request, ignore_unknown_fields=True)
    except (ValueError, json_format.ParseError, AttributeError, TypeError, OverflowError, RecursionError) as exc:
        raise TraceUnreadable(path, line, f"not OTLP JSON ({type(exc).__name__}: {str(exc)[:200]})") from None
    return request


def _spans(request: ExportTraceServiceRequest, path: Path, line: int) -> Iterator[Span]:
    """The spans of one ExportTraceServiceRequest, each with its resource's service name."""
    for resource_spans in request.resource_spans:
        resource = {kv.key: plain(kv.value) for kv in resource_spans.resource.attributes}
        service = str(resource.get("service.name") or "")
        for scope_spans in resource_spans.scope_spans:
            for s in scope_spans.spans:
                yield Span(
                    trace_id=s.trace_id.hex(),
                    span_id=s.span_id.hex(),
                    parent_id=s.parent_span_id.hex(),
                    name=s.name,
                    kind=s.kind,
                    start_ns=s.start_time_unix_nano,
                    end_ns=max(s.end_time_unix_nano, s.start_time_unix_nano),  # an end not traced: no duration
                    attributes={kv.key: plain(kv.value) for kv in s.attributes},
                    failed=s.status.code == STATUS_ERROR,
                    service=service,
                    path=str(path),
                    line=line,
                )


def read(path: str | Path) -> Iterator[Span]:
    """Every span of an OTLP JSON file in file order, read line by line (a file that is one indented document is
    read whole); TraceUnreadable names the file, the line and the problem."""
    path = Path(path)
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError as exc:
        raise TraceUnreadable(path, 0, f"cannot be read ({exc.strerror or exc})") from None
    with handle:
        number = 0
        first = True
        try:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    document = json.loads(text)
                except RecursionError:
                    raise TraceUnreadable(path, number, "not OTLP JSON (nested too deeply)") from None
                except json.JSONDecodeError as exc:
                    if first and text.lstrip().startswith("{"):
                        break  # one indented document: read whole below
                    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
                        raise TraceUnreadable(
                            path, number, f"truncated: the line ends before its JSON does ({exc.msg})"
                        ) from None
                    raise TraceUnreadable(path, number, f"not JSON ({exc.msg}, column {exc.colno})") from None
                first = False
                yield from _spans(_request(document, path, number), path, number)
            else:
                return
        except UnicodeDecodeError:
            raise TraceUnreadable(path, number + 1, "not UTF-8 text") from None
    yield from _whole(path)


def _whole(path: Path) -> Iterator[Span]:
    """The spans of a file that is one (indented) OTLP JSON document."""
    try:
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
    except UnicodeDecodeError:
        raise TraceUnreadable(path, 0, "not UTF-8 text") from None
    except RecursionError:
        raise TraceUnreadable(path, 1, "not OTLP JSON (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise TraceUnreadable(
                path, exc.lineno, f"truncated: the file ends before its JSON does ({exc.msg})"
            ) from None
        raise TraceUnreadable(path, exc.lineno, f"not JSON ({exc.msg}, column {exc.colno})") from None
    yield from _spans(_request(document, path, 1), path, 1)
