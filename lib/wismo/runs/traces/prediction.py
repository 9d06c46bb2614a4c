"""A traced chain replaced by one focused tool, predicted with the accounting report 02 uses (the tokens package's
definitions, call items and results under a client profile): the first request loses the chain's definitions and
gains the focused tool's, the chain's calls become one call whose result is the focused tool's for the same case, and
the conversation ends with the answer request after it. The prediction takes nothing from conversations that used the
replacement; where the traces hold them too, `checks` sets the two side by side."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wismo.accounting import tokens
from wismo.accounting.tokens import conversation, framing
from wismo.core import walk
from wismo.runs.traces.otlp import NOT_JSON, loads

if TYPE_CHECKING:
    from wismo.studies.declaration import Study


def case_key(arguments: Mapping[str, object]) -> str:
    """A case as the traces name it: its first call's arguments, as canonical JSON."""
    return json.dumps(dict(arguments), sort_keys=True)


@dataclass(frozen=True)
class Replacement:
    """One focused tool that replaces a chain of the reference design's tools: the tokens the chain's definitions
    and the focused tool's take as the profile sends them, and the focused tool's result for each case, keyed by the
    reference's first-call arguments (case_key)."""

    chain: frozenset[str]
    tool: str
    removed_definitions: int
    added_definitions: int
    results: dict[str, tuple[dict[str, object], str]]  # case_key -> (the focused call's arguments, its result text)
    profile: str
    encoding: str
    source: str

    def predict(self, first_request: int, first_arguments: Mapping[str, object] | None) -> int | None:
        """The input tokens of the conversation with the chain replaced: its first request with the definitions
        exchanged, then the answer request, which adds the focused call and its result; None for a case the
        replacement has no result for."""
        found = self.results.get(case_key(first_arguments)) if first_arguments else None
        if found is None:
            return None
        arguments, result = found
        base = first_request - self.removed_definitions + self.added_definitions
        return base + (base + _turn(self.tool, json.dumps(arguments), result, self.profile, self.encoding))


@functools.lru_cache(maxsize=4096)
def _turn(tool: str, arguments: str, result: str, profile: str, encoding: str) -> int:
    """What one call and its result add to the next request, counted once per case however many conversations ask it
    (the arguments as JSON, in their order)."""
    turn = [walk.result(tool, json.loads(arguments), result)]
    return sum(tokens.count_item(i, encoding) for i in conversation.turn_items(turn, 1, framing.profile(profile)))


def from_study(study: Study, encoding: str = tokens.DEFAULT_ENCODING, profile: str = "python") -> list[Replacement]:
    """The replacements a study declares: each design whose investigation is one call (no links, no cursor) for the
    reference design's tools, its definitions and results taken from the study's own servers over MCP."""
    from wismo.studies import investigations

    # A loop of its own: in a notebook one is already running.
    with ThreadPoolExecutor(1) as pool:
        import anyio

        recorded = pool.submit(anyio.run, functools.partial(investigations.record, study)).result()
    client = framing.profile(profile)
    ref = study.reference
    reference_tools = recorded["tools"][ref]
    out = []
    for name, design in study.designs.items():
        how = design.investigation
        if name == ref or how.links or how.cursor:
            continue
        by_case = {}
        for case, turns in recorded["turns"][name].items():
            first = recorded["turns"][ref][case][0][0] if recorded["turns"][ref].get(case) else None
            if first is None or not turns or len(turns[0]) != 1:
                continue
            call = turns[0][0]
            by_case[case_key(first["arguments"])] = (dict(call["arguments"]), call["output"])
        out.append(
            Replacement(
                chain=frozenset(t["name"] for t in reference_tools),
                tool=how.entry,
                removed_definitions=tokens.count_tools([client.function(t) for t in reference_tools], encoding),
                added_definitions=tokens.count_tools([client.function(t) for t in recorded["tools"][name]], encoding),
                results=by_case,
                profile=profile,
                encoding=encoding,
                source=f"the study {study.path.name}: the {name} design's server",
            )
        )
    return out


def checks(chains: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each predicted chain beside the conversations that used its replacement for the same cases: mean input
    tokens per conversation over the cases both hold, predicted and observed, and the error in percent."""
    out = []
    for chain in chains:
        for predicted in chain.get("predicted", []):
            one = next((c for c in chains if list(c["tools"]) == [predicted["tool"]]), None)
            if one is None:
                continue
            observed = {case_key(c): v for c, v in zip(one["cases"], one.get("inputTokensByCase", []))}
            pairs = [(p, observed[k]) for k, p in predicted["byCase"].items() if k in observed]
            if not pairs:
                continue
            p = round(sum(a for a, _ in pairs) / len(pairs), 2)
            o = round(sum(b for _, b in pairs) / len(pairs), 2)
            out.append(
                {
                    "chain": " → ".join(chain["tools"]),
                    "replacement": predicted["tool"],
                    "cases": len(pairs),
                    "predictedInput": p,
                    "observedInput": o,
                    "errorPercent": round((p - o) / o * 100, 1) if o else None,
                }
            )
    return out


UNNAMED = "get_context"  # the name an estimate's call item gives a focused tool nobody has named yet
DEFINITIONS = "gen_ai.tool.definitions"  # the tool definitions the agent sent with a model call, where captured
ESTIMATED = (
    "estimated within bounds: the chain's definitions as the agent sent them (gen_ai.tool.definitions) out, a focused "
    "tool's in, as small as the smallest of them or as large as all of them; its result the chain's records as one "
    "JSON list; one call and the answer"
)


def sent_definitions(attributes: Mapping[str, object]) -> list[dict[str, object]]:
    """The function definitions a model call's span says the agent sent (gen_ai.tool.definitions), as the Responses
    API's function tools: {"type": "function", "name", "description", "parameters"}; [] when not captured."""
    raw = attributes.get(DEFINITIONS)
    try:
        decoded = loads(raw) if isinstance(raw, str) else raw
    except NOT_JSON:
        return []
    out = []
    for d in decoded if isinstance(decoded, list) else []:
        inner = d.get("function", d) if isinstance(d, dict) else None  # Chat Completions nests it under "function"
        if isinstance(inner, dict) and isinstance(inner.get("name"), str) and _countable(inner):
            out.append(
                {
                    "type": "function",
                    "name": inner["name"],
                    "description": inner.get("description") or "",
                    "parameters": inner.get("parameters") or {},
                }
            )
    return out


def _countable(function: dict[str, object]) -> bool:
    """Whether a sent definition has the shape its tokens are counted in (tokens.count_tools): a text description
    (or none), an object of parameters whose properties are objects with a text description and a list of values
    where they give them; one of another shape is taken as not captured, not counted as something else."""
    description, parameters = function.get("description") or "", function.get("parameters") or {}
    if not isinstance(description, str) or not isinstance(parameters, dict):
        return False
    properties = parameters.get("properties") or {}
    return isinstance(properties, dict) and all(
        isinstance(p, dict) and isinstance(p.get("description", ""), str) and isinstance(p.get("enum", []), list)
        for p in properties.values()
    )


@functools.lru_cache(maxsize=256)
def _definitions(sent: str, encoding: str) -> tuple[int, int]:
    """The tokens of the chain's definitions together and of the smallest alone, counted once per set an agent sent."""
    functions = json.loads(sent)
    return tokens.count_tools(functions, encoding), min(tokens.count_tools([d], encoding) for d in functions)


def estimate(
    first_request: int,
    attributes: Mapping[str, object],
    calls: Sequence[tuple[str, str | None, str | None]],
    encoding: str = tokens.DEFAULT_ENCODING,
) -> tuple[int, int] | None:
    """The input of a conversation with its chain replaced by a focused tool nobody has named yet, as (least, most):
    from the definitions the agent sent and the results the chain's `calls` (tool, arguments, result) returned; None
    where the spans carry no definitions for every tool of the chain or a call's arguments or result."""
    tools = {tool for tool, _, _ in calls}
    sent = [d for d in sent_definitions(attributes) if d["name"] in tools]
    if {d["name"] for d in sent} != tools or any(a is None or r is None for _, a, r in calls):
        return None
    removed, least = _definitions(json.dumps(sent), encoding)
    records = []
    for _, _, result in calls:
        try:
            records.append(loads(result or ""))
        except NOT_JSON:
            records.append(result)
    try:
        arguments = loads(calls[0][1] or "{}")
    except NOT_JSON:
        arguments = {}
    merged = json.dumps(records, separators=(",", ":"), ensure_ascii=False)
    turn = [walk.result(UNNAMED, arguments if isinstance(arguments, dict) else {}, merged)]
    added = sum(tokens.count_item(i, encoding) for i in conversation.turn_items(turn, 1))
    base = first_request - removed
    return 2 * (base + least) + added, 2 * (base + removed) + added
