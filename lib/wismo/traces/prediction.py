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
from typing import Any

from wismo import tokens
from wismo.shared import walk
from wismo.studies.declaration import Study
from wismo.tokens import conversation, framing


def case_key(arguments: Mapping[str, Any]) -> str:
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
    results: dict[str, tuple[dict[str, Any], str]]  # case_key -> (the focused call's arguments, its result text)
    profile: str
    encoding: str
    source: str

    def predict(self, first_request: int, first_arguments: Mapping[str, Any] | None) -> int | None:
        """The input tokens of the conversation with the chain replaced: its first request with the definitions
        exchanged, then the answer request, which adds the focused call and its result; None for a case the
        replacement has no result for."""
        found = self.results.get(case_key(first_arguments)) if first_arguments else None
        if found is None:
            return None
        arguments, result = found
        base = first_request - self.removed_definitions + self.added_definitions
        turn = [walk.result(self.tool, arguments, result)]
        items = conversation.turn_items(turn, 1, framing.profile(self.profile))
        added = sum(tokens.count_item(i, self.encoding) for i in items)
        return base + (base + added)


def from_study(study: Study, encoding: str = tokens.DEFAULT_ENCODING, profile: str = "python") -> list[Replacement]:
    """The replacements a study declares: each design whose investigation is one call (no links, no cursor) for the
    reference design's tools, its definitions and results taken from the study's own servers over MCP."""
    from wismo.studies import recording

    # A loop of its own: in a notebook one is already running.
    with ThreadPoolExecutor(1) as pool:
        import anyio

        recorded = pool.submit(anyio.run, functools.partial(recording.record, study)).result()
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
