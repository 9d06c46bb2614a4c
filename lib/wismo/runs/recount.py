"""A recorded run's requests counted again under another client profile: the same conversations as that client
would have sent them, definitions and results framed its way (tiktoken-estimated). Only runs whose tokens are
estimates can be recounted like for like; a provider's count is what it is."""

from __future__ import annotations

from wismo.accounting import tokens
from wismo.accounting.tokens import framing
from wismo.core.errors import InputError
from wismo.runs.records import Item
from wismo.runs.store import Run, sha256


class RecountRefused(InputError):
    """A run that cannot be recounted (`run`, `why`): its instructions are not the ones given, or it records no
    tools."""

    def __init__(self, run: str, why: str) -> None:
        self.run, self.why = run, why
        super().__init__(f"run {run} cannot be recounted: {why}.")


def recount(run: Run, instructions: str, profile: str, encoding: str = tokens.DEFAULT_ENCODING) -> list[list[int]]:
    """Per conversation, each request's input tokens under `profile`: the run's own tools and `instructions` (which
    must be the run's, by their hash), and each request's history so far, framed as the profile frames them."""
    m = run.manifest
    if m["instructionsSha256"] != sha256(instructions.encode("utf-8")):
        raise RecountRefused(m["runId"], "the instructions given are not the ones it ran with")
    if not m.get("tools"):
        raise RecountRefused(m["runId"], "its manifest records no tool definitions")
    client = framing.profile(profile)
    functions = [client.function(t) for t in m["tools"]]
    out = []
    for trace in run.traces:
        items: list[Item] = []
        inputs = []
        for request in trace["requests"]:
            items += request["newItems"]
            framed = framing.framed_items(items, client)
            inputs.append(tokens.count_request(instructions, functions, framed, encoding).total)
        out.append(inputs)
    return out
