"""A deterministic stand-in for a model: follows the article's investigation and answers by explicit rules.

It needs no network. Its tokens are tiktoken estimates of each full request and of its own output items.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wismo import tokens
from wismo.agent.assessment import assess
from wismo.agent.base import Reply, Usage, assistant_message
from wismo.agent.evidence import from_items
from wismo.core.reading import NoStructuredContent
from wismo.servers import designs
from wismo.tokens import framing

# The scripted model's reply in a study without an answer contract: what it would say is not modelled, so its
# output is this one sentence (tiktoken-estimated like everything it writes).
STUDY_ANSWER = "The evidence gathered by the tool calls above answers the question."


class ScriptedBackend:
    """Follows the investigation the registry declares for the design it is given: granular, get_order then every
    linked lookup in one turn, then the answer; focused, one call then the answer; scoped, every page."""

    name = "scripted"
    token_label = tokens.LABEL

    def __init__(
        self, model: str = "scripted-v1", encoding_name: str = tokens.DEFAULT_ENCODING, profile: str = "python"
    ) -> None:
        self.model = model
        self.encoding_name = encoding_name
        self.profile = framing.profile(profile)
        # A study's design, when the backend follows one (following()): its investigation and the study's cases.
        self.study: Any = None
        self.investigation: Any = None
        tokens.encoding(encoding_name)  # load before the first timed request, not during it

    def following(self, study: Any, design: str) -> ScriptedBackend:
        """The same backend following one design of a study: its declared investigation, for the case whose question
        the conversation opens with, then the study's one-sentence answer (designs of a study may offer the same
        tools, so the design is told, not guessed)."""
        other = ScriptedBackend(self.model, self.encoding_name, self.profile.name)
        other.study, other.investigation = study, study.designs[design].investigation
        return other

    @property
    def token_counting(self) -> dict[str, str]:
        """How this backend's tokens are estimated: the client profile, the counting method and the encoding."""
        return {"profile": self.profile.name, "method": tokens.COOKBOOK_GPT4O.name, "encoding": self.encoding_name}

    def _framed(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The history as the client profile would send it: each tool output framed (python: as it is)."""
        if self.profile is framing.PYTHON:
            return items
        return [
            tokens.function_call_output(i["call_id"], self.profile.output(framing.text_result(i["output"])))
            if i.get("type") == "function_call_output"
            else i
            for i in items
        ]

    async def respond(self, instructions: str, functions: list[dict[str, Any]], items: list[dict[str, Any]]) -> Reply:
        """Decide the next step from the request alone, as a stateless model would."""
        output = self._decide({f["name"] for f in functions}, items)
        usage = Usage(
            input_tokens=tokens.count_request(instructions, functions, self._framed(items), self.encoding_name).total,
            output_tokens=sum(tokens.count_item(o, self.encoding_name) for o in output),
        )
        return Reply(output, usage)

    def _decide_study(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The next output items for a study's design: the entry call with the case's arguments, then every linked
        call at once or the next page while one is named, then the study's answer."""
        calls = [i for i in items if i.get("type") == "function_call"]
        asked = next((i.get("content") for i in items if i.get("role") == "user"), None)
        case = next((c for c in self.study.cases if self.study.question_for(c) == asked), None)
        how = self.investigation
        if case is not None:
            if not calls:
                return [tokens.function_call(how.entry, how.entry_arguments(case.fields), _call_id(calls, 0))]
            latest = _read_as_entry(how, _text_of(items, calls[-1]["call_id"]))
            following = how.next_page(latest, case.fields) if calls[-1]["name"] == how.entry else None
            if following is not None:
                return [tokens.function_call(how.entry, following, _call_id(calls, 0))]
            if how.links and len(calls) == 1:
                wanted = how.linked_calls(latest, case.fields)
                if wanted:
                    return [tokens.function_call(t, a, _call_id(calls, i)) for i, (t, a) in enumerate(wanted)]
        return [assistant_message(STUDY_ANSWER)]

    def _decide(self, names: set[str], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The next output items, by the investigation of the design whose tools were offered (wismo.servers.designs):
        the entry call, then every linked call at once or the next page while one is announced, then the answer."""
        if self.investigation is not None:
            return self._decide_study(items)
        calls = [i for i in items if i.get("type") == "function_call"]
        order_id = _order_id(items)
        design = designs.for_tools(names)
        how = design.investigation if design is not None else None
        if how is not None and order_id:
            if not calls:
                return [tokens.function_call(how.entry, {"orderId": order_id}, _call_id(calls, 0))]
            latest = _output_of(items, calls[-1]["call_id"])
            following = isinstance(latest, dict) and isinstance(latest.get("page"), dict) and latest["page"].get("next")
            if calls[-1]["name"] == how.entry and following:
                # A page that says what it left out: ask for the next one, as its note instructs.
                return [
                    tokens.function_call(
                        how.entry, {"orderId": order_id, "cursor": latest["page"]["next"]}, _call_id(calls, 0)
                    )
                ]
            if len(calls) == 1 and calls[0]["name"] == how.entry:
                wanted = [(t, a) for t, a in how.linked_calls(latest, {"orderId": order_id}) if t in names]
                if wanted:
                    return [tokens.function_call(t, a, _call_id(calls, i)) for i, (t, a) in enumerate(wanted)]
        answer = assess(from_items(items))
        return [assistant_message(json.dumps(answer, separators=(",", ":"), ensure_ascii=False))]


def _order_id(items: list[dict[str, Any]]) -> str | None:
    """The order ID the customer asked about, read from the first user message."""
    for item in items:
        if item.get("type", "message") == "message" and item.get("role") == "user":
            found = re.search(r"ORD-[0-9]+", item.get("content", ""))
            return found.group(0) if found else None
    return None


def _output_of(items: list[dict[str, Any]], call_id: str) -> Any:
    """The decoded output of one call, or None if it was not JSON (an error sentence)."""
    for item in items:
        if item.get("type") == "function_call_output" and item.get("call_id") == call_id:
            try:
                return json.loads(item["output"])
            except ValueError:
                return None
    return None


def _text_of(items: list[dict[str, Any]], call_id: str) -> str | None:
    """The text output of one call, as the model received it."""
    return next(
        (i["output"] for i in items if i.get("type") == "function_call_output" and i.get("call_id") == call_id), None
    )


def _read_as_entry(how: Any, text: str | None) -> Any:
    """The entry's value as the model can read it from the text alone: as the step says, its structuredContent
    taken to be the text's JSON (what the protocol advises a server to send as text beside it), else nothing."""
    if text is None:
        return None
    try:
        return how.reading.value(text, _output_json(text))
    except NoStructuredContent:
        return None


def _output_json(text: str) -> Any:
    """The text as JSON, or None."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def _call_id(calls: list[dict[str, Any]], offset: int) -> str:
    """Deterministic call ids (call_1, call_2, ...), numbered across the conversation."""
    return f"call_{len(calls) + offset + 1}"
