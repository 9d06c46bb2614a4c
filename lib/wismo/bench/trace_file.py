"""A large OTLP JSON trace file for the traces benchmark: the shipped granular traces' conversations repeated, each
copy with its own trace and span ids, conversation id and times (one second apart), until the file has a size; or, as
one long session, every copy under one conversation id (a question each, as an agent's long-lived thread is)."""

from __future__ import annotations

import json
from pathlib import Path

from wismo.core.paths import REPO_ROOT

SOURCE = REPO_ROOT / "data" / "traces" / "granular.json"


SESSION = "session"  # the conversation id of every copy in a file that is one long session


def generate(path: Path, size_bytes: int, session: bool = False) -> int:
    """Write at least `size_bytes` of trace lines to `path`; the number of lines (conversations and handshakes). With
    `session`, every copy names one conversation (SESSION): one session of a question per copy."""
    lines = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    written = count = 0
    with path.open("w", encoding="utf-8") as out:
        while written < size_bytes:
            for document in lines:
                count += 1
                for resource in document["resourceSpans"]:
                    for scope in resource["scopeSpans"]:
                        for span in scope["spans"]:
                            span["traceId"] = f"{count:032x}"
                            span["spanId"] = f"{count:08x}{span['spanId'][8:]}"
                            if span.get("parentSpanId"):
                                span["parentSpanId"] = f"{count:08x}{span['parentSpanId'][8:]}"
                            for key in ("startTimeUnixNano", "endTimeUnixNano"):
                                span[key] = str(int(span[key]) % 10**9 + count * 10**9)
                            for attribute in span["attributes"]:
                                if attribute["key"] == "gen_ai.conversation.id":
                                    attribute["value"]["stringValue"] = SESSION if session else f"conversation-{count}"
                text = json.dumps(document, separators=(",", ":")) + "\n"
                out.write(text)
                written += len(text.encode("utf-8"))
    return count
