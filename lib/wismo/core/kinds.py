"""The kinds of numbers a report shows, each declared once with its one-line meaning; labels are built from these."""

from __future__ import annotations

MEASURED = "measured"
TIKTOKEN = "tiktoken-estimated"
PROVIDER = "provider-reported"
SERVER = "server-reported"
MODELLED = "modelled"
SCRIPTED = "scripted (no model)"
DERIVED = "derived from published"
PUBLISHED = "published"

MEANINGS = {
    MEASURED: "timed or counted in this run",
    TIKTOKEN: "counted locally on real text",
    PROVIDER: "as a model provider's API reported it",
    SERVER: "as another OpenAI-compatible server reported it",
    MODELLED: "from the cumulative-context model or a stated latency model",
    SCRIPTED: "produced by the scripted stand-in, not by a model",
    DERIVED: "a sum or difference of published figures",
    PUBLISHED: "as a source printed it",
}
