"""A study file's shape, declared once as a JSON Schema (Draft 2020-12): every table's keys, what each holds and
what it must be; `check` holds a file to it with jsonschema and says each problem in one sentence, naming where.

What a schema cannot say (a design wismo does not serve, a template naming a field no case has, a pattern that does
not compile) the reading code checks after it (declaration.py, designs.py, cases.py, published.py)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence

from wismo.core.reading import READS, TYPES
from wismo.core.textgrid import either
from wismo.studies.matching import MATCHES
from wismo.studies.problems import Problems

Schema = dict[str, object]
MUST = "x-must"  # the words after a key's name when its value is not what the schema says: "must be a string"


def _of(kind: Schema, must: str, description: str = "") -> Schema:
    """A property: what it holds, what it must be (said when it is not), and what it is for."""
    return {**kind, MUST: must, **({"description": description} if description else {})}


def _table(properties: Mapping[str, Schema], must: str, required: Sequence[str] = ()) -> Schema:
    """A TOML table with exactly these keys."""
    return {
        "type": "object",
        "properties": dict(properties),
        "additionalProperties": False,
        **({"required": list(required)} if required else {}),
        MUST: must,
    }


TEXT: Schema = {"type": "string", "minLength": 1}
NAMES: Schema = {"type": "array", "items": TEXT}
ARGUMENTS = _of({"type": "object"}, "must be a table of argument names and templates")
IGNORE = _of(NAMES, 'must be a list of object keys, such as ["checkedAt"]', "object keys left out of matching")
READING: dict[str, Schema] = {
    "read": _of({"enum": list(READS)}, f"must be {either(READS)}", "how the result is read (default json)"),
    "pattern": _of(TEXT, "must be a non-empty string (a regular expression)", "a regular expression read from text"),
    "types": _of(
        {"type": "object", "minProperties": 1, "additionalProperties": {"enum": list(TYPES)}},
        f"must be a table of the pattern's named groups and their types ({either(TYPES)})",
        "the types of a pattern's named groups",
    ),
    "block": _of(
        {"type": "integer", "minimum": 0},
        "picks one of a result's blocks by its place, from 0: a whole number",
        "the one content block read",
    ),
    "follow_resources": _of({"type": "boolean"}, "is true or false", "read the resources a result links to"),
}
ENTRY = _table(
    {
        "tool": _of(TEXT, "must be a non-empty string", "the first tool called"),
        "arguments": ARGUMENTS,
        "into": _of({"type": "string"}, "must be a string", "where the entry's value is kept"),
        **READING,
    },
    'must be the first call, entry = { tool = "...", arguments = { ... } }',
    required=("tool",),
)
LINK = _table(
    {
        "from": _of(TEXT, "must be a non-empty string (a JMESPath expression)", "where the values followed are"),
        "tool": _of(TEXT, "must be a non-empty string", "the tool called for each value"),
        "argument": _of(TEXT, "must be a non-empty string", "the argument the value followed is passed as"),
        "arguments": _of({"type": "object", "minProperties": 1}, "must be a table of argument names and templates"),
        "into": _of({"type": "string"}, "must be a string", "where the link's values are kept"),
        "batch": _of({"type": "boolean"}, "is true or false", "one call for every value at once"),
        **READING,
    },
    "must be a table, { from, tool, arguments, into }",
    required=("from", "tool"),
)
CURSOR = _table(
    {
        "next": _of(TEXT, "must be a non-empty string (a JMESPath expression)", "where the next page's cursor is"),
        "argument": _of(TEXT, "must be a non-empty string", "the argument the cursor is passed as"),
    },
    'must be a table, { next = "page.next", argument = "cursor" }',
    required=("next", "argument"),
)
DESIGN = _table(
    {
        "serve": _of(TEXT, "must be the name of a design wismo serves", "a design wismo serves"),
        "command": _of(
            {"type": "array", "items": TEXT, "minItems": 1},
            'must be a non-empty list of strings, such as ["{python}", "server.py"]',
            "a stdio server's command",
        ),
        "url": _of(
            {"type": "string", "pattern": r"^https?://[^\s/]+"},
            "must be an http:// or https:// address",
            "a Streamable HTTP endpoint",
        ),
        "env": _of(
            {"type": "object", "additionalProperties": {"type": "string"}},
            "must be a table of strings",
            "variables the server gets",
        ),
        "color": _of({"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$"}, 'must be "#RRGGBB"', "its colour in charts"),
        "entry": ENTRY,
        "links": _of(
            {"type": "array", "items": LINK}, "must be a list of tables, each { from, tool, arguments, into }"
        ),
        "cursor": CURSOR,
        "ignore": IGNORE,
    },
    "must be a table, [designs.NAME]",
)
CASE = {
    "type": "object",
    "properties": {"label": _of(TEXT, "must be a non-empty string", "the case's name in every table")},
    "required": ["label"],
}
CASES = _of(
    {"type": "array", "items": CASE, "minItems": 1},
    "must be an array of tables, [[cases]], with at least one",
    "the cases, [[cases]]",
)
UNFRIENDLY = _of(
    {"type": "array", "items": CASE},
    "must be an array of tables, [[unfriendly]]",
    "inputs every design must refuse alike, [[unfriendly]]",
)
FIGURE = "a number, or { ref = ... } naming one in the reference file"
CONVERSATION = _table(
    {
        "design": {"description": "the study's design the conversation ran on"},
        "case": {"description": "the case's key value"},
        "requests": {"description": "input tokens of the model requests, in order (all, or the first ones)"},
        "calls": {"description": "how many model requests it made"},
        "input": {"description": "total input tokens"},
        "output": {"description": "total output tokens"},
        "total": {"description": "input plus output tokens"},
        "first_smaller_by": {
            "description": "how many tokens its first request was smaller than the first conversation's of the case"
        },
        "answer": {"description": "the model's answer as published (text)"},
        "cached_input": {"description": "cached input tokens the provider reported for it"},
        "tool_calls": {"description": "how many tool calls it made (measured by the run that published it)"},
        "elapsed_s": {"description": "its elapsed time in seconds (measured by the run that published it)"},
        "call_id": {
            "description": "one of the model's call ids as the provider returned it (counting call ids counts each at "
            "its size)"
        },
    },
    "must be a table, [[published.conversations]]",
)
PUBLISHED = _table(
    {
        "source": {"description": "the run the figures come from, cited wherever they stand"},
        "model": {"description": "the model the conversations ran on"},
        "reference": {
            "description": "a JSON file the figures may be taken from with { ref = ... } (relative to the study file)"
        },
        "median_saving_percent": {
            "description": "the median token saving (every request's input and output) the provider's figures "
            "gave, if published"
        },
        "median_elapsed_saving_percent": {
            "description": "the median saving in elapsed time the run measured, in %, if published"
        },
        "conversations": _of(
            {"type": "array", "items": CONVERSATION, "minItems": 1},
            "must be an array of tables, [[published.conversations]], with at least one",
            "the conversations, [[published.conversations]]",
        ),
    },
    "must be a table, [published]",
)
STUDY = _table(
    {
        "title": _of(TEXT, "must be a non-empty string", "a short name for the study"),
        "question": _of(TEXT, "must be a non-empty string", "the user message, with {field} from each case"),
        "description": _of({"type": "string"}, "must be a string", "a paragraph on what the study compares"),
        "instructions": _of(TEXT, "must be a non-empty string", "the model's instructions (default: wismo's)"),
        "reference": {"description": "the design whose evidence the others must reproduce (default: the first)"},
        "match": _of({"enum": list(MATCHES)}, f"must be {either(list(MATCHES))}", "how evidence is compared"),
        "ignore": IGNORE,
        "key": {"description": "the case field that names each case in tables (default: the first case's first field)"},
        "setup": _of({"type": "string"}, "must be a string", "how to install the servers, said when one cannot start"),
        "runs": _of(
            TEXT,
            "must be a folder's path relative to the study file",
            "where its recorded runs are kept, relative to the file (default: data/runs/studies/<file stem>/)",
        ),
        "traces": _of(
            NAMES,
            "must list trace files' paths relative to the study file",
            "OpenTelemetry trace files of an agent using the designs, relative to the file (report 05 reads them)",
        ),
        "focus": {"description": "the case drawn call by call and shown as transcripts, by its key"},
        "reproduce": {"description": "source documents whose worked numbers the reports reproduce"},
        "published": PUBLISHED,
        "designs": _of(
            {"type": "object", "minProperties": 1, "additionalProperties": DESIGN},
            "must be tables, one per design, [designs.NAME]",
            "one table per design",
        ),
        "cases": CASES,
        "unfriendly": UNFRIENDLY,
    },
    "must be a TOML document",
    required=("title", "question"),
)


def keys(table: Schema) -> tuple[str, ...]:
    """The keys a table of the schema allows, in the order declared."""
    properties = table["properties"]
    assert isinstance(properties, dict)
    return tuple(properties)


def document() -> Schema:
    """The schema as a JSON document, for editors that check TOML against one (`wismo study schema`)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "wismo study file",
        "description": "A study: MCP server designs compared case by case (see docs/studies.md).",
        **STUDY,
    }


@functools.cache
def _validator() -> object:
    import jsonschema

    return jsonschema.Draft202012Validator(document())


def _where(path: Sequence[str | int]) -> tuple[str, str]:
    """Where a value is, as a problem names it: the table it belongs to ("top level", 'design "NAME"', "published",
    "cases[1]", "published.conversations[1]") and its key path inside that table ("entry.read", "links[1].block")."""
    if not path:
        return "top level", ""
    head, rest = str(path[0]), list(path[1:])
    if head == "designs" and rest:
        table, rest = f'design "{rest[0]}"', rest[1:]
    elif head in ("cases", "unfriendly") and rest:
        table, rest = f"{head}[{int(rest[0]) + 1}]", rest[1:]
    elif head == "published" and rest[:1] == ["conversations"] and len(rest) > 1:
        table, rest = f"published.conversations[{int(rest[1]) + 1}]", rest[2:]
    elif head == "published":
        table = "published"
    else:
        return "top level", ".".join([head, *map(str, rest)])
    words: list[str] = []
    for part in rest:
        if isinstance(part, int):
            words[-1] += f"[{part + 1}]"
        else:
            words.append(part)
    return table, ".".join(words)


def _owner(schema_path: Sequence[str | int], instance_path: Sequence[str | int]) -> tuple[Schema, int]:
    """The schema of the nearest key (or table) above an error that says what it must be, and how deep in the
    instance that key is: a bad item of `command` is said as `command`, a bad value in `env` as `env`."""
    node: object = document()
    found: tuple[Schema, int] = ({}, 0)
    depth, steps, i = 0, list(schema_path), 0
    while i < len(steps) and isinstance(node, dict):
        step = steps[i]
        if step == "properties" and i + 1 < len(steps):
            node, depth, i = node["properties"][steps[i + 1]], depth + 1, i + 2
        elif step in ("additionalProperties", "items"):
            node, depth, i = node[step], depth + 1, i + 1
        else:
            break
        if isinstance(node, dict) and MUST in node and depth <= len(instance_path):
            found = (node, depth)
    return found


def _sentences(raw: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    """(where, what) for each place `raw` breaks the schema: an unknown key, a missing one, or a key whose value is
    not what it must be (said once per key, by the key's own words)."""
    import jsonschema

    validator = _validator()
    assert isinstance(validator, jsonschema.Draft202012Validator)
    said: set[tuple[str | int, ...]] = set()
    for error in sorted(validator.iter_errors(raw), key=lambda e: [str(p) for p in e.absolute_path]):
        path = list(error.absolute_path)
        names = error.schema.get("properties") if isinstance(error.schema, dict) else None
        if error.validator == "required" and isinstance(error.instance, dict):
            table, inner = _where(path)
            for key in [k for k in error.validator_value if k not in error.instance]:
                yield (f"{table} {inner}" if inner else table), f"{key} is missing"
            continue
        if error.validator == "additionalProperties" and isinstance(error.instance, dict) and names:
            table, inner = _where(path)
            for key in [k for k in error.instance if k not in names]:
                yield (f"{table} {inner}" if inner else table), f'unknown key "{key}"; the keys are {", ".join(names)}'
            continue
        owner, depth = _owner(list(error.absolute_schema_path), path)
        at = tuple(path[:depth])
        if at in said:
            continue
        said.add(at)
        value: object = raw
        for part in at:
            value = value[part]  # type: ignore[index]  # the path jsonschema walked to the error
        table, inner = _where(list(at))
        yield table, f"{inner + ' ' if inner else ''}{owner.get(MUST, 'is not allowed here')}, not {value!r}"


def check(r: Problems, raw: Mapping[str, object]) -> None:
    """Say every place `raw` breaks the study file's schema, one sentence each."""
    for where, what in _sentences(raw):
        r.say(where, what)
