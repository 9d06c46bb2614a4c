"""A deterministic stand-in for a model: follows one design's investigation (the one walk, wismo.core.walk,
replayed over the conversation it is sent) and answers by explicit rules.

It needs no network. Its tokens are tiktoken estimates of each full request and of its own output items.
"""

from __future__ import annotations

import json
from typing import Any

from wismo.accounting import tokens
from wismo.accounting.tokens import framing
from wismo.core.investigation import Investigation
from wismo.core.reading import NoStructuredContent
from wismo.core.walk import Call, Wanted, result, walk
from wismo.runs.agent.assessment import assess
from wismo.runs.agent.base import BackendError, Reply, Usage, assistant_message
from wismo.runs.agent.evidence import Evidence

# The scripted model's reply where the study keeps no answer contract: what it would say is not modelled, so its
# output is this one sentence (tiktoken-estimated like everything it writes).
STUDY_ANSWER = "The evidence gathered by the tool calls above answers the question."


class ScriptedBackend:
    """A stateless stand-in for a model: given a design's investigation and the case (following()), it asks for
    each turn's calls as the walk says, then answers: the five-field assessment where the study keeps wismo's
    answer contract, else the one sentence STUDY_ANSWER. Its call ids have a real model's length, derived from the
    question and the call's place in the conversation (tokens.call_id)."""

    name = "scripted"
    token_label = tokens.LABEL

    def __init__(
        self, model: str = "scripted-v1", encoding_name: str = tokens.DEFAULT_ENCODING, profile: str = "python"
    ) -> None:
        self.model = model
        self.encoding_name = encoding_name
        self.profile = framing.profile(profile)
        self.investigation: Investigation | None = None
        self.values: dict[str, object] = {}
        self.contract = True
        tokens.encoding(encoding_name)  # load before the first timed request, not during it

    def following(self, how: Investigation, values: dict[str, Any], contract: bool = True) -> ScriptedBackend:
        """The same backend for one conversation: it follows `how` for the case whose fields are `values` (what a
        model reads from the question), and answers in the answer contract when `contract`."""
        other = ScriptedBackend(self.model, self.encoding_name, self.profile.name)
        other.investigation, other.values, other.contract = how, values, contract
        return other

    @property
    def token_counting(self) -> dict[str, str]:
        """How this backend's tokens are estimated: the client profile, the counting method and the encoding."""
        return {"profile": self.profile.name, "method": tokens.COOKBOOK_GPT4O.name, "encoding": self.encoding_name}

    def _framed(self, items: list[dict[str, object]]) -> list[dict[str, object]]:
        """The history as the client profile would send it: each tool output framed (python: as it is)."""
        return framing.framed_items(items, self.profile)

    async def respond(self, instructions: str, functions: list[dict[str, Any]], items: list[dict[str, Any]]) -> Reply:
        """Decide the next step from the request alone, as a stateless model would."""
        output = self._decide({f["name"] for f in functions}, items)
        usage = Usage(
            input_tokens=tokens.count_request(instructions, functions, self._framed(items), self.encoding_name).total,
            output_tokens=sum(tokens.count_item(o, self.encoding_name) for o in output),
        )
        return Reply(output, usage)

    def _decide(self, offered: set[str], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The next output items: the walk's next turn (the calls to tools the request offers), or the answer."""
        if self.investigation is None:
            raise BackendError(
                "scripted backend: it follows one design's investigation; give it one with following(how, values)"
            )
        turns, wanted = replayed(self.investigation, self.values, items, offered)
        if wanted:
            made = sum(1 for i in items if i.get("type") == "function_call")
            opening = next((i["content"] for i in items if i.get("role") == "user"), "")
            return [tokens.function_call(t, a, tokens.call_id(opening, made + i)) for i, (t, a) in enumerate(wanted)]
        return [assistant_message(answer(self.investigation, turns, self.contract))]


def replayed(
    how: Investigation, values: dict[str, object], items: list[dict[str, Any]], offered: set[str] | None = None
) -> tuple[list[list[Call]], Wanted]:
    """The walk replayed over a conversation's items: the tool turns already made (their results as the model read
    them), and the next turn's calls (empty when the walk is over, or asks only for tools not offered)."""
    calls = [i for i in items if i.get("type") == "function_call"]
    outputs = {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}
    steps, used = walk(how, values), 0
    turns: list[list[Call]] = []
    wanted = next(steps)
    while True:
        wanted = [(t, a) for t, a in wanted if offered is None or t in offered]
        made = calls[used : used + len(wanted)]
        if not wanted or len(made) < len(wanted) or any(c["call_id"] not in outputs for c in made):
            return turns, (wanted if len(made) < len(wanted) else [])
        used += len(made)
        turns.append([_as_read(how, c["name"], json.loads(c["arguments"]), outputs[c["call_id"]]) for c in made])
        try:
            wanted = steps.send(turns[-1])
        except (StopIteration, NoStructuredContent):
            return turns, []


def _as_read(how: Investigation, tool: str, arguments: dict[str, object], text: str) -> Call:
    """A result as a model reads it, from its text alone: its structuredContent taken to be the text's JSON (what
    the protocol advises a server to send as text beside it); at a step that reads JSON, a text that is no JSON is
    taken for the tool's error sentence (the error flag does not reach a model)."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    reads_json = any(r.read == "json" and r.pattern is None for _, name, r in how.steps() if name == tool)
    structured = parsed if isinstance(parsed, dict) else None
    return result(tool, arguments, text, is_error=reads_json and parsed is None, structured=structured)


def answer(how: Investigation, turns: list[list[Call]], contract: bool = True) -> str:
    """The scripted model's answer to what the walk gathered: the five fields and a summary, derived from the
    evidence by explicit rules (the answer contract), or the one sentence STUDY_ANSWER without a contract."""
    if not contract:
        return STUDY_ANSWER
    from wismo.studies.evidence import evidence as gathered

    found = Evidence()
    if turns:
        value, failed = gathered(how, turns)  # failed linked calls are in `value` as missing-record stand-ins
        found.add(value)
        if failed is not None:  # the entry call itself failed: the identifiers it asked for could not be read
            entry = turns[0][0]["arguments"]
            found.unreadable += [v for k, v in entry.items() if isinstance(v, str) and k.endswith("Id")]
    return json.dumps(assess(found), separators=(",", ":"), ensure_ascii=False)
