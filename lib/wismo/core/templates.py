"""Templates and JMESPath expressions, the two small languages of a study file: "{field}" filled from a case (and,
in a link's arguments, "{item}", the value the link follows), and an expression such as "relations[].from" that
finds what to follow in a tool's result (JMESPath, https://jmespath.org/specification.html).

>>> fill({"revision": "{item}", "path": "{dir}/{item}"}, {"dir": "docs", "item": "a.md"})
{'revision': 'a.md', 'path': 'docs/a.md'}
>>> read({"relations": [{"from": "A"}, {"from": "B"}]}, "relations[].from")
['A', 'B']
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import jmespath
import jmespath.exceptions

from wismo.core.errors import InputError

FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
ITEM = "item"  # in a link's arguments: the value being followed (a list under batch), never a case field


class ExpressionInvalid(InputError):
    """A JMESPath expression that does not parse: `expression`, and `reason` (the parser's own words)."""

    def __init__(self, expression: str, reason: str) -> None:
        super().__init__(f"{expression!r} is not a JMESPath expression ({reason})")
        self.expression = expression
        self.reason = reason


def fields_named(template: object) -> set[str]:
    """Every {field} a template names, in strings at any depth of lists and tables."""
    if isinstance(template, str):
        return set(FIELD.findall(template))
    if isinstance(template, dict):
        return set().union(*(fields_named(v) for v in template.values())) if template else set()
    if isinstance(template, list):
        return set().union(*(fields_named(v) for v in template)) if template else set()
    return set()


def fill(template: object, values: dict[str, object]) -> object:
    """The template with each {field} replaced by the case's value: a string that is exactly "{field}" becomes the
    value as it is (any JSON value); inside a longer string the value is written as text; tables and lists are
    filled element by element. A field the values lack raises KeyError naming it."""
    if isinstance(template, str):
        whole = FIELD.fullmatch(template)
        if whole:
            return values[whole.group(1)]
        return FIELD.sub(lambda m: as_text(values[m.group(1)]), template)
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    return template


def as_text(value: object) -> str:
    """A value as it stands inside a sentence: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@functools.lru_cache(maxsize=256)
def compiled(expression: str) -> Any:
    """The parsed JMESPath expression; ExpressionInvalid when it does not parse."""
    try:
        return jmespath.compile(expression)
    except (jmespath.exceptions.ParseError, jmespath.exceptions.LexerError) as exc:
        # The parser's message spans lines with a caret under the token; its first line says what is wrong.
        reason = str(exc).strip().splitlines()[0].rstrip(":").removesuffix(", for expression")
        raise ExpressionInvalid(expression, reason) from None


def read(value: Any, expression: str) -> Any:
    """What a JMESPath expression finds in a value (None where it finds nothing): "@" is the value itself,
    "relations[].from" every relation's `from`, "[?type=='file'].name" the names of the file entries."""
    try:
        return compiled(expression).search(value)
    except jmespath.exceptions.JMESPathError:
        return None  # a function applied to the wrong type (length(@) on a number): nothing found
