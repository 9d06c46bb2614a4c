"""The records of the run format (schemas/manifest.schema.json and schemas/trace.schema.json) as types: a trace's
model requests and tool calls, and a run's manifest with its blocks. They are plain dicts at run time; the agent
loop and the importer build them, the store verifies and loads them, the summaries and reports read them."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

# One Responses API input item as a trace records it (schemas: $defs/item): a message (type, role, content), a
# function_call (type, name, arguments, call_id) or a function_call_output (type, call_id, output); every value a
# string.
Item = dict[str, str]


class RequestUsage(TypedDict):
    """The tokens of one model request as a trace records them (`usage`)."""

    inputTokens: int
    outputTokens: int
    cachedInputTokens: int


class RequestRecord(TypedDict):
    """One model request of a trace (`requests[]`): the items it newly sent, the model's output items, its usage
    and its time. Items are the Responses API's input items as wismo.accounting.tokens makes them."""

    index: int
    newItems: list[Item]
    output: list[Item]
    usage: RequestUsage
    elapsedMs: float
    modelledElapsedMs: NotRequired[float]  # only when a latency model timed the request


class ToolCallRecord(TypedDict):
    """One tool call of a trace (`toolCalls[]`): the request that asked for it, its call id, name and arguments,
    its result's size, error flag and time."""

    request: int
    callId: str
    name: str
    arguments: str
    resultBytes: int
    isError: bool
    elapsedMs: float
    cached: NotRequired[bool]  # True when a repeated call was answered from the cache
    captured: NotRequired[bool]  # False for an imported call whose arguments and result were not captured


class RunTotals(TypedDict):
    """A run's counters (the manifest's `totals`): its conversations and the sum of their traces' counters."""

    cases: int
    turns: int
    toolCalls: int
    inputTokens: int
    outputTokens: int
    cachedInputTokens: int


class StudyAbout(TypedDict):
    """What a study run's manifest says of its study (`study`): title, file, case key, question, designs, and the
    answers its cases expect."""

    title: str
    file: str
    key: str
    question: str
    designs: list[str]
    expectations: dict[str, dict[str, object]]


class TokenCounting(TypedDict):
    """How a run's estimated tokens were counted (`figures.tokenCounting`): client profile, method, encoding."""

    profile: str
    method: str
    encoding: str


class Figures(TypedDict):
    """What a run's figures are (`figures`): the kind of its tokens and of its times."""

    tokens: str
    elapsedMs: str
    modelledElapsedMs: str | None
    tokenCounting: NotRequired[TokenCounting]  # only for tokens estimated under a client profile


class RunBudgets(TypedDict):
    """The limits a recorded run's conversations ran under (`budgets`)."""

    maxTurns: int
    maxToolCalls: int


class RunSource(TypedDict):
    """Where a run imported from traces came from (`source`): the format, the file and the providers named."""

    format: str
    file: str
    providers: list[str]


class RunFile(TypedDict):
    """One trace file of a run (`files[]`): its path in the folder, checksum, case and repetition."""

    path: str
    sha256: str
    orderId: str
    repetition: int


class Manifest(TypedDict):
    """A run's manifest.json: what was run, how, what its figures are, and a checksum of every trace file. Runs
    recorded before manifests carried a study lack `study`; only imported runs have a `source`."""

    study: NotRequired[StudyAbout]
    schema: str
    runId: str
    design: str
    backend: str
    model: str
    server: NotRequired[object]  # a backend's server block, passed through (None for a backend without a server)
    protocolRevision: str
    repetitions: int
    orders: list[str]
    createdAt: str
    instructionsSha256: str | None
    toolListSha256: str | None
    tools: list[dict[str, object]]
    budgets: RunBudgets | None
    latencyModel: dict[str, float] | None
    figures: Figures
    source: NotRequired[RunSource]
    designOrder: list[dict[str, object]]
    files: list[RunFile]
    totals: RunTotals


class Totals(TypedDict):
    """A trace's counters (its `totals`), in the order the trace writes them."""

    turns: int
    toolCalls: int
    inputTokens: int
    outputTokens: int
    cachedInputTokens: int
    modelElapsedMs: float
    toolElapsedMs: float
    resultBytes: int
    modelledElapsedMs: NotRequired[float]  # only when a latency model timed the requests
    wallMs: NotRequired[float]  # measured, so left out where the counters are recomputed from the transcript


class RecordedTrace(TypedDict):
    """One conversation as a run folder holds it (schemas/trace.schema.json): the agent loop's trace
    (agent.loop.Trace) with its schema, design and repetition; traces recorded before the loop wrote `reason` and
    `unsentItems` lack them."""

    schema: str
    design: str
    orderId: str
    repetition: int
    question: str
    requests: list[RequestRecord]
    toolCalls: list[ToolCallRecord]
    outcome: str
    reason: NotRequired[str | None]
    unsentItems: NotRequired[list[Item]]
    answerText: str | None
    answer: dict[str, Any] | None  # the model's own JSON object: the contract names its keys, not their types
    totals: Totals
