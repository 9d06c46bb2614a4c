"""The chains a model rebuilds: each conversation's tool calls from its first call to its answer as steps (one tool,
called one or more times in a row), the recurring chains across conversations with the model turns and the
provider-reported tokens each turn added, and the links: an argument whose value appeared in an earlier result of
the same conversation, with the path where it appeared."""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from wismo.runs.traces import otlp
from wismo.runs.traces.conversations import Conversation, Kept
from wismo.runs.traces.prediction import DEFINITIONS, Replacement, case_key, estimate

Steps = tuple[tuple[str, int], ...]  # (tool, calls in a row)
# What facts() reads of a call's span attributes: of a model call's, the definitions the agent sent
# (prediction.estimate); of a tool call's, none (the call holds its arguments and result). A pass that wants only
# facts keeps no more of them (conversations.conversations' `kept`).
READ = Kept(model=(DEFINITIONS,), tool=())


def steps(conversation: Conversation) -> Steps:
    """The conversation's tool calls in order, repeated calls of one tool in a row as one step with its count."""
    out: list[tuple[str, int]] = []
    for call in conversation.tool_calls:
        if out and out[-1][0] == call.tool:
            out[-1] = (call.tool, out[-1][1] + 1)
        else:
            out.append((call.tool, 1))
    return tuple((tool, count) for tool, count in out)


def turns(conversation: Conversation) -> tuple[tuple[str, ...], ...]:
    """The conversation's tools by the model response that asked for them: calls asked for in one response are one
    step of the chain, whatever their order (each tool once, in the order first called)."""
    out: dict[int, dict[str, None]] = {}
    for call, asked_by in zip(conversation.tool_calls, conversation.requested_by):
        out.setdefault(asked_by, {})[call.tool] = None
    return tuple(tuple(tools) for _, tools in sorted(out.items()))


def shown(turns: tuple[tuple[str, ...], ...], calls: Mapping[str, tuple[int, int]]) -> str:
    """A chain as a reader reads it, a step of several calls in braces, a tool called more than once with its count:
    `get_order → {get_payment, get_reservation x2, get_tracking}`."""

    def tool(name: str) -> str:
        least, most = calls.get(name, (1, 1))
        return name if most == 1 else f"{name} x{most}" if least == most else f"{name} x{least}-{most}"

    return " → ".join(
        tool(step[0]) if len(step) == 1 else "{" + ", ".join(tool(t) for t in step) + "}" for step in turns
    )


def additions(conversation: Conversation) -> list[int]:
    """What each turn added to the next request, as the provider reported it: the difference between consecutive
    model calls' input tokens."""
    inputs = [m.input_tokens for m in conversation.model_calls]
    return [b - a for a, b in zip(inputs, inputs[1:])]


@functools.lru_cache(maxsize=4096)
def _identifier(key: str) -> str:
    """A key as a JMESPath identifier (a study's links are JMESPath): quoted unless it is a bare name."""
    return key if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else json.dumps(key)


def _distinctive(value: object) -> bool:
    """Whether a value is one an argument could only have taken from a result: not a flag, not a tiny number or a
    word of two letters (page 1 against count 1, "ok"), which would be linked by chance."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return abs(value) >= 10
    return isinstance(value, str) and len(value) >= 3


def _leaves(value: object, path: str = "") -> list[tuple[str, object]]:
    """Every distinctive scalar in a JSON value with its JMESPath path (`a.b`, `a[]` for any element of a list), in
    document order."""
    found: list[tuple[str, object]] = []
    _collect(value, path, found)
    return found


def _collect(value: object, path: str, found: list[tuple[str, object]]) -> None:
    # Appending into one list, with a text leaf (the most common) tested in its container's loop: the walk runs over
    # every captured argument and result.
    if isinstance(value, dict):
        for key, inner in value.items():
            name = _identifier(key if isinstance(key, str) else str(key))
            inner_path = f"{path}.{name}" if path else name
            if isinstance(inner, str):
                if len(inner) >= 3:
                    found.append((inner_path, inner))
            else:
                _collect(inner, inner_path, found)
    elif isinstance(value, list):
        inner_path = f"{path}[]"
        for inner in value:
            if isinstance(inner, str):
                if len(inner) >= 3:
                    found.append((inner_path, inner))
            else:
                _collect(inner, inner_path, found)
    elif _distinctive(value):
        found.append((path, value))


def _json(text: str | None, exact: bool = True) -> object:
    """A captured argument or result decoded, or the text itself where it is not JSON (a value found in a text
    result is found at the path "", the text); `exact=False` for values only compared with one another, read by
    orjson (otlp.decoded: an integer beyond 64 bits reads as a float, alike on both sides)."""
    if text is None:
        return None
    try:
        return otlp.loads(text) if exact else otlp.decoded(text)
    except otlp.NOT_JSON:
        return text


class Link(NamedTuple):  # a tuple: made, hashed and compared by the thousand
    """An argument of `tool` (at `argument`) whose value was at `path` in an earlier result of `source`."""

    source: str
    path: str
    tool: str
    argument: str


def _held(text: str) -> str | list[tuple[str, object]]:
    """An earlier result as a later argument is looked for in it: a JSON one as its distinctive values with their
    paths (_leaves), a text one (or one nested too deeply to walk) as its text."""
    decoded = _json(text, exact=False)
    if isinstance(decoded, str):
        return decoded
    try:
        return _leaves(decoded)
    except RecursionError:
        return text


SCANS = 2  # times a result's text is searched for an argument's value before it is decoded instead


def links(conversation: Conversation) -> set[Link]:
    """The links one conversation shows (where arguments and results were captured)."""
    found: set[Link] = set()
    # A result is decoded once a later argument may be in it: a text with no backslash escapes nothing, so each string
    # decoded from it stands in it as written, and a string it does not hold is in none of them. After SCANS such
    # searches it is decoded anyway, so that many arguments against one large result cost one decoding, not a search
    # each. A decoded result's values join one index of every decoded result's, so an argument's value is looked up
    # once, not in each earlier result: a long conversation's calls cost n, not n squared, where results are JSON. A
    # text result has no values to index: it is searched once for each distinct value (_holding).
    waiting: list[list[Any]] = []  # results not decoded yet: [tool, result, escapes nothing, searches so far]
    at: dict[object, list[tuple[str, str]]] = {}  # a decoded result's value -> (its tool, its path), every result's
    texts: list[tuple[str, str]] = []  # (tool, result) for results that are text, not JSON (or too deep to walk)
    searched: dict[str, tuple[int, list[str]]] = {}  # a value -> (texts searched for it, the tools of those holding it)
    earlier = False
    for call in conversation.tool_calls:
        arguments = _json(call.arguments, exact=False) if earlier else None
        if isinstance(arguments, dict):
            try:
                leaves = _leaves(arguments)
            except RecursionError:  # arguments nested too deeply to walk: no value of theirs is looked for
                leaves = []
            for argument, value in leaves:
                if waiting:
                    kept = []
                    for result in waiting:
                        source, text, unescaped, searches = result
                        if unescaped and type(value) is str and searches < SCANS:
                            result[3] = searches + 1
                            if value not in text:
                                kept.append(result)
                                continue
                        _decode_into(source, text, at, texts)
                    waiting = kept
                for source, path in at.get(value, ()):
                    found.add(Link(source, path, call.tool, argument))
                if texts and isinstance(value, str):
                    for source in _holding(value, texts, searched):
                        found.add(Link(source, "", call.tool, argument))
        if call.result is not None and not call.is_error:
            waiting.append([call.tool, call.result, "\\" not in call.result, 0])
            earlier = True
    return found


def _holding(value: str, texts: list[tuple[str, str]], searched: dict[str, tuple[int, list[str]]]) -> list[str]:
    """The tools whose text results hold `value`: each text searched once for each value, however often it is asked."""
    done, holding = searched.get(value, (0, []))
    if done < len(texts):
        holding = holding + [source for source, text in texts[done:] if value in text]
        searched[value] = (len(texts), holding)
    return holding


def _decode_into(source: str, text: str, at: dict[object, list[tuple[str, str]]], texts: list[tuple[str, str]]) -> None:
    """A result of `source` decoded (_held): its values with their paths added to `at`, or its text to `texts`."""
    held = _held(text)
    if isinstance(held, str):
        texts.append((source, held))
        return
    for path, value in held:
        at.setdefault(value, []).append((source, path))


def _median(histogram: Counter[int]) -> float:
    """The median of the values a histogram counts (the mean of the middle two when their number is even)."""
    n = sum(histogram.values())
    ranked = sorted(histogram)

    def at(rank: int) -> int:
        seen = 0
        for value in ranked:
            seen += histogram[value]
            if seen > rank:
                return value
        raise IndexError(rank)

    return (at((n - 1) // 2) + at(n // 2)) / 2


def _spread(histogram: Counter[int]) -> dict[str, float]:
    return {"median": _median(histogram), "min": min(histogram), "max": max(histogram)}


def replaced_turns(conversation: Conversation) -> tuple[int, int]:
    """The model calls (0-based, first and last) that requested the conversation's tool calls: with the chain
    replaced by one call, the first requests it and the ones after it up to the last are no longer made."""
    if not conversation.tool_calls:
        return 0, 0
    return conversation.requested_by[0], max(conversation.requested_by)


def resends_saved(conversation: Conversation) -> int:
    """Input tokens the conversation would not send with its chain replaced by one call returning the same records
    (modelled from the provider-reported inputs: the records' tokens are kept, as every later request still carries
    them; what goes is each extra turn's request, which resends the whole history)."""
    first, last = replaced_turns(conversation)
    return sum(m.input_tokens for m in conversation.model_calls[first + 1 : last + 1])


EXAMPLES = 3  # conversation keys kept per chain, to name where to look
CASES = 12  # distinct first-call arguments kept per chain: the cases of the study that checks it


def first_arguments(conversation: Conversation) -> dict[str, object] | None:
    """The arguments of the conversation's first tool call, where captured as a JSON object."""
    if not conversation.tool_calls:
        return None
    decoded = _json(conversation.tool_calls[0].arguments)
    if not isinstance(decoded, dict):
        return None
    given = {k: v for k, v in decoded.items() if v is not None}  # a strict-mode null is an argument not given
    return given or None


@dataclass(slots=True)
class Facts:
    """What one conversation adds to its chain, found where the conversation was built (in this process, or on a
    worker: runs.traces.partitioned) and counted wherever the chains are: small beside the conversation's spans."""

    key: str
    steps: Steps
    model_calls: int
    turned: tuple[tuple[str, ...], ...]
    added: list[int]  # the tokens each turn added
    total: int  # provider-reported input
    resends: int  # resends_saved
    models: set[str]
    providers: set[str]
    kinds: set[str]  # what its token counts are (conventions.usage_kind)
    arguments: dict[str, object] | None  # first_arguments
    predicted: list[tuple[str, int]]  # (replacing tool, its input) for each replacement of its tools that predicts
    estimate: tuple[int, int] | None  # prediction.estimate, where no replacement is named
    first_model: tuple[str, str] | None  # its first model call's model and provider
    captured: bool  # every call's arguments and result captured
    links: set[Link]


def facts(conversation: Conversation, replacements: Sequence[Replacement] = ()) -> Facts:
    """What one conversation adds to its chain (replacements sorted by tool, as Chains keeps them)."""
    found = steps(conversation)
    tools = {tool for tool, _ in found}
    models = conversation.model_calls
    arguments = first_arguments(conversation)
    predicted: list[tuple[str, int]] = []
    if arguments is not None and len(found) > 1 and models:
        for r in replacements:
            if tools <= r.chain:
                value = r.predict(models[0].input_tokens, arguments)
                if value is not None:
                    predicted.append((r.tool, value))
    bounds = None
    if not replacements and len(found) > 1 and models:
        calls = [(c.tool, c.arguments, c.result) for c in conversation.tool_calls]
        bounds = estimate(models[0].input_tokens, models[0].span.attributes, calls)
    captured = bool(conversation.tool_calls) and all(
        c.arguments is not None and c.result is not None for c in conversation.tool_calls
    )
    return Facts(
        key=conversation.key,
        steps=found,
        model_calls=len(models),
        turned=turns(conversation),
        added=additions(conversation),
        total=sum(m.input_tokens for m in models),
        resends=resends_saved(conversation),
        models={m.model for m in models},
        providers={m.provider for m in models if m.provider},
        kinds={m.usage_kind for m in models},
        arguments=arguments,
        predicted=predicted,
        estimate=bounds,
        first_model=(models[0].model, models[0].provider) if models else None,
        captured=captured,
        links=links(conversation) if captured else set(),
    )


@dataclass
class Chain:
    """One recurring chain: its tools in order, and histograms of what its conversations cost (memory grows with
    the distinct values, not with the conversations)."""

    tools: tuple[str, ...]
    conversations: int = 0
    examples: list[str] = field(default_factory=list)
    fewest: list[int] = field(default_factory=list)  # calls per step, least and most seen
    most: list[int] = field(default_factory=list)
    turns: Counter[int] = field(default_factory=Counter)  # model calls per conversation
    added: list[Counter[int]] = field(default_factory=list)  # tokens each turn added, by turn
    input_tokens: Counter[int] = field(default_factory=Counter)  # provider-reported input per conversation
    saved: Counter[int] = field(default_factory=Counter)  # modelled input tokens saved per conversation
    links: Counter[Link] = field(default_factory=Counter)  # conversations showing each link
    captured: int = 0  # conversations whose arguments and results were all captured
    models: Counter[str] = field(default_factory=Counter)
    cases: list[dict[str, object]] = field(default_factory=list)  # the first CASES distinct first-call arguments
    by_case: list[Counter[int]] = field(default_factory=list)  # input per conversation, for each of `cases`
    # Per replacing tool, for each of `cases`: the input the conversation would take with the chain replaced.
    predicted: dict[str, list[Counter[int]]] = field(default_factory=dict)
    # How its calls were asked for, response by response: each grouping seen, with its conversations.
    turned: Counter[tuple[tuple[str, ...], ...]] = field(default_factory=Counter)
    # Where no study names the replacing tool: conversations estimated, their input, and the least and most they
    # would take with the chain replaced (prediction.estimate).
    estimated: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    # Per model (and its provider): conversations and the input they would save, never pooled across models.
    by_model: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    def add(self, facts: Facts) -> None:
        """Counts one conversation showing this chain, by its facts (and, for each replacement of its tools, what it
        would take)."""
        self.conversations += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(facts.key)
        counts = [count for _, count in facts.steps]
        self.fewest = [min(a, b) for a, b in zip(self.fewest, counts)] if self.fewest else counts
        self.most = [max(a, b) for a, b in zip(self.most, counts)] if self.most else list(counts)
        self.turns[facts.model_calls] += 1
        self.turned[facts.turned] += 1
        for i, tokens in enumerate(facts.added):
            if i == len(self.added):
                self.added.append(Counter())
            self.added[i][tokens] += 1
        total, saved = facts.total, facts.resends
        self.input_tokens[total] += 1
        self.saved[saved] += 1
        self.models.update(facts.models)
        arguments = facts.arguments
        if arguments is not None and len(self.cases) < CASES and arguments not in self.cases:
            self.cases.append(arguments)
            self.by_case.append(Counter())
        if arguments is not None and arguments in self.cases:
            at = self.cases.index(arguments)
            self.by_case[at][total] += 1
            for k, (tool, predicted) in enumerate(facts.predicted):  # by tool name (Chains sorts them once)
                per = self.predicted.setdefault(tool, [])
                per += [Counter() for _ in range(len(self.cases) - len(per))]
                per[at][predicted] += 1
                if k == 0:  # the first replacement by name, as the chain's own saving takes it
                    saved = total - predicted
        if facts.estimate is not None:
            for i, v in enumerate((1, total, *facts.estimate)):
                self.estimated[i] += v
        if facts.first_model is not None:
            tally = self.by_model.setdefault(facts.first_model, [0, 0])
            tally[0] += 1
            tally[1] += saved
        if facts.captured:
            self.captured += 1
            self.links.update(facts.links)

    def _steps(self) -> tuple[tuple[str, ...], ...]:
        """The grouping of calls into model responses most of its conversations show (the first such, on a tie)."""
        return max(self.turned.items(), key=lambda kv: kv[1])[0] if self.turned else tuple((t,) for t in self.tools)

    def _calls(self) -> dict[str, tuple[int, int]]:
        """Each tool's least and most calls in a row, as callsPerStep counts them."""
        return {tool: (a, b) for tool, a, b in zip(self.tools, self.fewest, self.most)}

    def summary(self, total: int) -> dict[str, Any]:
        """The chain as the report shows it; `total` is the number of conversations read."""
        return {
            "tools": list(self.tools),
            "conversations": self.conversations,
            "share": round(self.conversations / total, 4) if total else 0.0,
            "examples": self.examples,
            "callsPerStep": [{"min": a, "max": b} for a, b in zip(self.fewest, self.most)],
            "steps": [list(step) for step in self._steps()],
            "shown": shown(self._steps(), self._calls()),
            "modelTurns": _spread(self.turns),
            "modelCalls": sum(turns * n for turns, n in self.turns.items()),
            "tokensAddedPerTurn": [_median(h) for h in self.added],
            "inputTokensPerConversation": _spread(self.input_tokens),
            "inputTokensSavedPerConversation": _spread(self.saved),
            "inputTokensSavedMean": round(sum(v * c for v, c in self.saved.items()) / self.conversations, 2),
            "inputTokensMean": round(sum(v * c for v, c in self.input_tokens.items()) / self.conversations, 2),
            "models": sorted(self.models),
            "linksCaptured": self.captured,
            "cases": self.cases,
            "inputTokensByCase": [_median(h) for h in self.by_case],
            "byModel": [
                {"model": model, "provider": provider, "conversations": n, "savedInputPerConversation": round(t / n, 2)}
                for (model, provider), (n, t) in sorted(self.by_model.items(), key=lambda kv: (-kv[1][0], kv[0]))
            ],
            "estimated": (
                {
                    "conversations": self.estimated[0],
                    "inputToday": round(self.estimated[1] / self.estimated[0], 2),
                    "leastInput": round(self.estimated[2] / self.estimated[0], 2),
                    "mostInput": round(self.estimated[3] / self.estimated[0], 2),
                }
                if self.estimated[0]
                else None
            ),
            "predicted": [
                {
                    "tool": tool,
                    "byCase": {case_key(c): _median(h) for c, h in zip(self.cases, per) if h},
                }
                for tool, per in sorted(self.predicted.items())
            ],
            "links": [
                {
                    "from": link.source,
                    "path": link.path,
                    "tool": link.tool,
                    "argument": link.argument,
                    "conversations": c,
                }
                for link, c in sorted(self.links.items(), key=lambda kv: (-kv[1], kv[0]))
            ],
        }


class Chains:
    """The recurring chains, counted one conversation at a time (memory grows with the distinct chains)."""

    def __init__(self, replacements: Sequence[Replacement] = ()) -> None:
        self.by_tools: dict[tuple[str, ...], Chain] = {}
        self.total = 0
        self.replacements = tuple(sorted(replacements, key=lambda r: r.tool))

    def add(self, conversation: Conversation) -> None:
        """Counts one conversation in its chain."""
        self.add_facts(facts(conversation, self.replacements))

    def add_facts(self, found: Facts) -> None:
        """Counts one conversation in its chain, by its facts (found with this count's replacements)."""
        self.total += 1
        tools = tuple(tool for tool, _ in found.steps)
        chain = self.by_tools.get(tools)
        if chain is None:  # not setdefault: that would make a chain (and its histograms) per conversation
            chain = self.by_tools[tools] = Chain(tools)
        chain.add(found)

    def ranked(self) -> list[Chain]:
        """Most conversations first, then by tools."""
        return sorted(self.by_tools.values(), key=lambda c: (-c.conversations, c.tools))


def chains(conversations: Iterable[Conversation]) -> tuple[list[Chain], int]:
    """The recurring chains, most conversations first (then by tools), and the number of conversations read."""
    counted = Chains()
    for conversation in conversations:
        counted.add(conversation)
    return counted.ranked(), counted.total
