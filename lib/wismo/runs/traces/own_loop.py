"""Traces of wismo's own agent loop recorded with the OpenTelemetry SDK under the GenAI and MCP conventions: a
conversation's `invoke_agent` span, its inference spans (`chat {model}`, usage as the backend reported it), its
tool spans (`execute_tool {tool}`, arguments and results captured) and, inside each, the MCP SDK's own client span
(`MCP send tools/call {tool}`); written as the Collector's file exporter writes, one ExportTraceServiceRequest per
line with hex ids and integer enums."""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wismo.mcp.client.connection import Connection
from wismo.mcp.client.results import ToolResult
from wismo.runs.agent.base import Backend, Reply

if TYPE_CHECKING:  # the OpenTelemetry SDK and the study are imported when traces are recorded
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import Tracer

    from wismo.studies.declaration import Study

SCOPE = "wismo.agent"


def _canonical(arguments: object) -> str:
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"))


class _Requested:
    """The call ids the model asked for, by tool and arguments, so the tool span names the call it serves."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str], list[str]] = defaultdict(list)

    def add(self, output: list[dict[str, Any]]) -> None:
        for item in output:
            if item.get("type") == "function_call":
                key = (item["name"], _canonical(json.loads(item["arguments"] or "{}")))
                self.ids[key].append(item["call_id"])

    def take(self, tool: str, arguments: dict[str, object]) -> str:
        waiting = self.ids.get((tool, _canonical(arguments)))
        return waiting.pop(0) if waiting else ""


def _messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's input items as the GenAI conventions' input messages (role and parts)."""
    out = []
    for item in items:
        if item.get("type") == "message":
            out.append({"role": item["role"], "parts": [{"type": "text", "content": item["content"]}]})
        elif item.get("type") == "function_call":
            call = {"type": "tool_call", "id": item["call_id"], "name": item["name"]}
            out.append({"role": "assistant", "parts": [{**call, "arguments": json.loads(item["arguments"] or "{}")}]})
        elif item.get("type") == "function_call_output":
            response = {"type": "tool_call_response", "id": item["call_id"], "response": item["output"]}
            out.append({"role": "tool", "parts": [response]})
    return out


class TracedBackend:
    """A backend whose every request is a GenAI inference span of the conversation."""

    def __init__(self, inner: Backend, tracer: Tracer, conversation: str, requested: _Requested) -> None:
        self.inner, self.tracer, self.conversation, self.requested = inner, tracer, conversation, requested
        self.name, self.model, self.token_label = inner.name, inner.model, inner.token_label

    async def respond(
        self, instructions: str, functions: list[dict[str, object]], items: list[dict[str, object]]
    ) -> Reply:
        """The inner backend's reply, inside a `chat {model}` span carrying its usage and requested tool calls."""
        from opentelemetry.trace import SpanKind

        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": f"wismo.{self.inner.name}",
            "gen_ai.request.model": self.model,
            "gen_ai.conversation.id": self.conversation,
            "wismo.usage.kind": self.inner.token_label,  # the scripted model's usage is a tiktoken estimate: said so
        }
        with self.tracer.start_as_current_span(f"chat {self.model}", kind=SpanKind.CLIENT, attributes=attributes) as s:
            reply = await self.inner.respond(instructions, functions, items)
            calls = [o for o in reply.output if o.get("type") == "function_call"]
            self.requested.add(reply.output)
            s.set_attribute("gen_ai.response.model", self.model)
            s.set_attribute("gen_ai.usage.input_tokens", reply.usage.input_tokens)
            s.set_attribute("gen_ai.usage.output_tokens", reply.usage.output_tokens)
            s.set_attribute("gen_ai.response.finish_reasons", ["tool_call" if calls else "stop"])
            parts = [
                {"type": "tool_call", "id": c["call_id"], "name": c["name"], "arguments": json.loads(c["arguments"])}
                for c in calls
            ]
            texts = [{"type": "text", "content": o["content"]} for o in reply.output if o.get("type") == "message"]
            s.set_attribute("gen_ai.input.messages", json.dumps(_messages(items)))
            s.set_attribute("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": parts + texts}]))
            return reply


class TracedConnection:
    """A server connection whose every tools/call is a GenAI `execute_tool` span with its arguments and result."""

    def __init__(self, inner: Connection, tracer: Tracer, conversation: str, requested: _Requested) -> None:
        self.inner, self.tracer, self.conversation, self.requested = inner, tracer, conversation, requested

    async def call(self, tool: str, arguments: dict[str, object], follow_resources: bool = False) -> ToolResult:
        """The inner connection's call (the MCP SDK adds its client span inside this one)."""
        from opentelemetry.trace import SpanKind, Status, StatusCode

        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": self.requested.take(tool, arguments),
            "gen_ai.tool.call.arguments": json.dumps(arguments, separators=(",", ":")),
            "gen_ai.conversation.id": self.conversation,
        }
        with self.tracer.start_as_current_span(
            f"execute_tool {tool}", kind=SpanKind.INTERNAL, attributes=attributes
        ) as s:
            result = await self.inner.call(tool, arguments, follow_resources=follow_resources)
            s.set_attribute("gen_ai.tool.call.result", result.text)
            if result.is_error:
                s.set_attribute("error.type", "tool_error")
                s.set_status(Status(StatusCode.ERROR))
            return result


def otlp_lines(spans: Sequence[ReadableSpan]) -> list[str]:
    """Finished SDK spans as the Collector's file exporter writes them: one ExportTraceServiceRequest JSON per line
    (here one per conversation), ids in hex, enums as integers."""
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    document = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in document.get("resourceSpans", ()):
        for scope in resource.get("scopeSpans", ()):
            for span in scope.get("spans", ()):
                for field in ("traceId", "spanId", "parentSpanId"):
                    if span.get(field):
                        span[field] = base64.b64decode(span[field]).hex()
    return [json.dumps(document, separators=(",", ":"), sort_keys=True)]


def write(path: Path, lines: list[str]) -> None:
    """The lines as a file, one per line."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


async def record(study: Study, designs: Sequence[str], folder: Path) -> list[Path]:
    """One conversation per case of `study` for each design, through the scripted backend and each design's server
    as the study declares it, traced; writes `{design}.json` into `folder` and returns the files."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from wismo.domain import prompts
    from wismo.runs.agent.backends import conversing, make
    from wismo.runs.agent.loop import run_case
    from wismo.studies.investigations import prompt as prompt_for
    from wismo.studies.servers import reach

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "wismo-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # the MCP SDK's client spans go to the same provider
    tracer = provider.get_tracer(SCOPE)
    backend = make("scripted")
    contract = study.instructions == prompts.INSTRUCTIONS
    written = []
    for design in designs:
        lines = []
        async with reach(study.designs[design]) as conn:
            tools = await conn.list_tools()
            for case in study.cases:
                key = study.case_key(case)
                conversation = f"{design}-{key}"
                requested = _Requested()
                inner = conversing(backend, study.designs[design].investigation, case.fields, contract)
                attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": conversation}
                with tracer.start_as_current_span("invoke_agent wismo", attributes=attributes):
                    await run_case(
                        TracedBackend(inner, tracer, conversation, requested),
                        TracedConnection(conn, tracer, conversation, requested),  # type: ignore[arg-type]
                        tools,
                        key,
                        prompt_for(study, case),
                        contract=contract,
                    )
                lines += otlp_lines(exporter.get_finished_spans())
                exporter.clear()
        path = folder / f"{design}.json"
        write(path, lines)
        written.append(path)
    return written
