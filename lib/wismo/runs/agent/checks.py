"""What the loop refuses to act on: malformed tool calls, and a final answer that is not the output contract.

The loop and `wismo verify` use the same rules, so a recorded outcome can be recomputed from its transcript.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from wismo.domain.answer import KEYS as CONTRACT  # the keys the instructions ask the answer's JSON object for
from wismo.runs.agent.outcomes import (
    ANSWERED,
    BAD_ARGUMENTS,
    BAD_CALL_ID,
    REFUSED_CALLS,
    UNEXPECTED_ANSWER,
    UNKNOWN_TOOL,
)

if TYPE_CHECKING:
    from wismo.runs.records import RecordedTrace


def _shown(text: str, limit: int = 60) -> str:
    """A model's text quoted short, so a reason stays one readable sentence."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def refused_call(
    calls: Sequence[Mapping[str, str]], earlier_ids: Iterable[str], names: Iterable[str] | None
) -> tuple[str, str] | None:
    """The outcome and reason for the first call of a reply the loop must not run, or None when all may run.

    `names` are the offered tools (None: not known, so unknown names are not judged).
    """
    used = set(earlier_ids)
    offered = None if names is None else set(names)
    for call in calls:
        call_id, name = call.get("call_id"), call.get("name")
        if not call_id:
            return BAD_CALL_ID, f"the call to {name} came without a call id, so its result could not be matched to it"
        if call_id in used:
            return BAD_CALL_ID, f"the call id {call_id!r} (of {name}) was already used in this conversation"
        used.add(call_id)
        if offered is not None and name not in offered:
            return (
                UNKNOWN_TOOL,
                f"the model asked for {name!r}, which is not one of the offered tools ({', '.join(sorted(offered))})",
            )
        arguments = call.get("arguments") or "{}"  # some servers send "" for a call without arguments
        try:
            decoded = json.loads(arguments)
        except ValueError:
            return BAD_ARGUMENTS, f"the arguments of {name} ({call_id}) are not JSON: {_shown(arguments)}"
        if not isinstance(decoded, dict):
            return BAD_ARGUMENTS, f"the arguments of {name} ({call_id}) are JSON but not an object: {_shown(arguments)}"
    return None


def parse_answer(text: str | None) -> dict[str, object] | None:
    """The answer's JSON object (prose or a code fence around it allowed), or None when the text holds none."""
    if not text:
        return None
    start, end = text.find("{"), text.rfind("}")
    try:
        value = json.loads(text[start : end + 1]) if start >= 0 else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def answer_problem(text: str | None) -> str | None:
    """Why a final text is not the expected JSON answer, or None when it holds a JSON object with every contract key."""
    if not text or not text.strip():
        return "the model's final reply holds no text"
    answer = parse_answer(text)
    if answer is None:
        return f"the model's final reply holds no JSON object: {_shown(text)}"
    missing = [k for k in CONTRACT if k not in answer]
    if missing:
        return f"the answer's JSON object lacks {', '.join(missing)}"
    return None


def outcome_problems(trace: RecordedTrace, tool_names: Iterable[str] | None = None, contract: bool = True) -> list[str]:
    """Where a trace's recorded outcome disagrees with its transcript, by the rules the loop applied when recording
    (`contract`: whether the answer had to be the JSON object the instructions ask for)."""
    requests, outcome = trace["requests"], trace["outcome"]
    last = requests[-1] if requests else None
    final = [o["content"] for o in (last["output"] if last else []) if o.get("type") == "message"]
    problems = []
    if outcome in (ANSWERED, UNEXPECTED_ANSWER):
        if trace["answerText"] != "\n".join(final):
            problems.append("answerText differs from the final message of the transcript")
        problem = answer_problem(trace["answerText"]) if contract else None
        if (problem is None) != (outcome == ANSWERED):
            problems.append(
                f"the outcome is {outcome!r} but the final text "
                + (f"fails the contract: {problem}" if problem else "is a complete answer")
            )
        if trace["answer"] != (parse_answer(trace["answerText"]) if contract else None):
            problems.append("answer is not the JSON object of answerText")
    if outcome in REFUSED_CALLS and last is not None:
        calls = [o for o in last["output"] if o.get("type") == "function_call"]
        earlier = [i["call_id"] for r in requests[:-1] for i in r["output"] if i.get("type") == "function_call"]
        names = None if tool_names is None else list(tool_names)
        found = refused_call(calls, earlier, names)
        if not (outcome == UNKNOWN_TOOL and names is None) and (found is None or found[0] != outcome):
            problems.append(
                f"the outcome is {outcome!r} but the last reply's calls give "
                f"{found[0] if found else 'none to refuse'!r}"
            )
        if any(c["request"] == last["index"] for c in trace["toolCalls"]):
            problems.append(f"the outcome is {outcome!r} but calls of the last request were run")
    return problems
