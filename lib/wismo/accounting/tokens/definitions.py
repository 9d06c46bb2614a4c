"""Complete counts of function definitions: rendered as OpenAI's harmony format does (nested fields included),
per tool and per part, with the cookbook's top-level count beside them."""

from __future__ import annotations

import bisect
import hashlib
import itertools
import shutil
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypedDict, cast

from wismo.accounting import tokens
from wismo.core.environ import temporary_env

HARMONY_PACKAGE = "openai-harmony==0.0.8"
HARMONY_METHOD = (
    "openai-harmony 0.0.8 rendering: the developer message's '# Tools' section, TypeScript-like, as OpenAI's "
    "open-weight models read function definitions (nested objects, arrays, enums, oneOf and defaults rendered; "
    "anyOf, $ref and const rendered as 'any')"
)
HARMONY_ENCODING = "o200k_base"  # harmony's o200k_harmony is o200k_base plus special tokens
# The sha256 tiktoken expects of o200k_base.tiktoken; harmony reads the same file.
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_ENV = "TIKTOKEN_ENCODINGS_BASE"
_load_lock = threading.Lock()

# The text harmony puts around the tools of the "functions" namespace (template_tools_section in its encoding.rs).
_HEADER = "# Tools\n\n## functions\n\nnamespace functions {\n\n"
_FOOTER = "} // namespace functions"
_MESSAGE_START = "<|start|>developer<|message|>"
_MESSAGE_END = "<|end|>"


class HarmonyEncoding(Protocol):
    """What wismo uses of openai-harmony's encoding (the package ships no type information)."""

    def render(self, message: object) -> list[int]:
        """The tokens of one message."""
        ...

    def decode_utf8(self, tokens: list[int]) -> str:
        """Tokens back to text."""
        ...


@lru_cache(maxsize=1)
def harmony_encoding() -> HarmonyEncoding:
    """openai-harmony's gpt-oss encoding, loaded from the o200k_base file bpe-openai ships, never downloaded."""
    try:
        import openai_harmony
    except ModuleNotFoundError:
        raise tokens.OfflineEncodingError(
            f"openai-harmony is not installed; `make setup` installs the pinned {HARMONY_PACKAGE}"
        ) from None
    data = tokens.packaged_encoding_file(HARMONY_ENCODING)
    actual = hashlib.sha256(data).hexdigest()
    if actual != O200K_SHA256:
        raise tokens.OfflineEncodingError(
            f"{HARMONY_ENCODING} from {tokens.PACKAGE} has sha256 {actual}, expected {O200K_SHA256}; reinstall the "
            f"pinned {tokens.PACKAGE}"
        )
    # harmony looks for <name>.tiktoken in TIKTOKEN_ENCODINGS_BASE and downloads when it is unset: give it a
    # private folder for the duration of the load only, so nothing else in the process sees the variable.
    folder = Path(tempfile.mkdtemp(prefix="wismo-harmony-"))
    try:
        (folder / f"{HARMONY_ENCODING}.tiktoken").write_bytes(data)
        with _load_lock:
            try:
                with temporary_env(**{_ENV: str(folder)}):
                    return cast(
                        "HarmonyEncoding",
                        openai_harmony.load_harmony_encoding(openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS),
                    )
            except openai_harmony.HarmonyError as exc:
                raise tokens.OfflineEncodingError(
                    f"openai-harmony could not load {HARMONY_ENCODING} from {folder}: {exc}"
                ) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _message(functions: list[dict[str, object]]) -> object:
    """The harmony developer message that declares `functions` (no instructions)."""
    import openai_harmony as h

    described = [
        h.ToolDescription.new(f["name"], f.get("description") or "", parameters=f.get("parameters")) for f in functions
    ]
    return h.Message.from_role_and_content(h.Role.DEVELOPER, h.DeveloperContent.new().with_function_tools(described))


def render_tokens(functions: list[dict[str, object]]) -> list[int]:
    """The tokens of the developer message that declares `functions`, as openai-harmony renders it."""
    return harmony_encoding().render(_message(functions))


def render(functions: list[dict[str, object]]) -> str:
    """The developer message that declares `functions`, as text (special tokens written out)."""
    return harmony_encoding().decode_utf8(render_tokens(functions))


def _lines(text: str) -> list[str]:
    """Rust's str::lines(): split on \\n, drop one trailing \\r per line and a final empty line."""
    if not text:
        return []
    parts = text.split("\n")
    if text.endswith("\n"):
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


class PartsRecord(TypedDict):
    """One function definition's tokens under one method, labelled (Parts.as_dict)."""

    method: str
    encoding: str
    label: str
    total: int
    name: int
    description: int
    parameters: int
    overhead: int


class ToolCountRecord(TypedDict):
    """One function definition counted both ways (ToolCount.as_dict)."""

    name: str
    harmony: PartsRecord
    cookbook: PartsRecord


class WholeRecord(TypedDict):
    """A whole list of definitions under one method: its total and the frame around the tools."""

    method: str
    encoding: str
    label: str
    total: int
    frame: int


class DefinitionsRecord(TypedDict):
    """A list of function definitions counted both ways, per tool and whole (DefinitionsCount.as_dict)."""

    tools: list[ToolCountRecord]
    harmony: WholeRecord
    cookbook: WholeRecord


@dataclass(frozen=True)
class Parts:
    """Tokens of one function definition under one method: the whole and its name, description and parameters."""

    method: str
    encoding: str
    total: int
    name: int
    description: int
    parameters: int

    @property
    def overhead(self) -> int:
        """What the method adds around the three parts (and tokens that straddle their boundaries)."""
        return self.total - self.name - self.description - self.parameters

    def as_dict(self) -> PartsRecord:
        """The figures with their labels."""
        return {
            "method": self.method,
            "encoding": self.encoding,
            "label": tokens.LABEL,
            "total": self.total,
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "overhead": self.overhead,
        }


def harmony_block(function: dict[str, Any]) -> tuple[str, str, str]:
    """One function's block in the harmony rendering, split into its description comment, its 'type NAME = '
    line start and its parameters type; raises if the package renders it another way."""
    content = render([function])[len(_MESSAGE_START) : -len(_MESSAGE_END)]
    name = function["name"]
    comment = "".join(f"// {line}\n" for line in _lines(function.get("description") or ""))
    opening, closing = f"type {name} = ", " => any;\n\n"
    block = content[len(_HEADER) : -len(_FOOTER)] if content.startswith(_HEADER) and content.endswith(_FOOTER) else ""
    if not (block.startswith(comment + opening) and block.endswith(closing)):
        raise ValueError(f"{HARMONY_PACKAGE} rendered {name} in an unexpected form: {content!r}")
    return comment, opening, block[len(comment) + len(opening) : -len(closing)]


def _block_text(function: dict[str, object]) -> str:
    """One function's whole block as harmony renders it, with the blank line that follows it."""
    comment, opening, params = harmony_block(function)
    return f"{comment}{opening}{params} => any;\n\n"


def block_totals(functions: list[dict[str, object]]) -> list[int]:
    """Tokens of each function's block within the whole rendering; a token that straddles two blocks (';\n\n//')
    goes to the block its last character belongs to, so blocks, header and footer add up to the whole."""
    blocks = [_block_text(f) for f in functions]
    content = render(functions)[len(_MESSAGE_START) : -len(_MESSAGE_END)]
    if content != _HEADER + "".join(blocks) + _FOOTER:
        raise ValueError(
            f"{HARMONY_PACKAGE} rendered {len(functions)} functions other than block by block: {content!r}"
        )
    encoding = tokens.encoding(HARMONY_ENCODING)
    ids = encoding.encode(content, disallowed_special=())
    _, starts = encoding.decode_with_offsets(ids)
    ends = [s - 1 for s in starts[1:]] + [len(content) - 1]  # the offset of each token's last character
    bounds = list(itertools.accumulate([len(_HEADER), *(len(b) for b in blocks)]))
    totals = [0] * len(blocks)
    for end in ends:
        index = bisect.bisect_right(bounds, end) - 1  # -1: header, len(blocks): footer
        if 0 <= index < len(blocks):
            totals[index] += 1
    return totals


def harmony_parts(function: dict[str, Any], total: int | None = None) -> Parts:
    """Tokens of one function's harmony block (alone unless `total` gives its count in context), and of its name,
    description comment and parameters type, each counted on its own."""
    comment, opening, params = harmony_block(function)

    def text(s: str) -> int:
        return tokens.count_text(s, HARMONY_ENCODING)

    whole = total if total is not None else text(_block_text(function))
    return Parts(
        HARMONY_METHOD,
        HARMONY_ENCODING,
        total=whole,
        name=text(function["name"]),
        description=text(comment),
        parameters=text(params),
    )


def cookbook_parts(function: dict[str, Any], encoding_name: str = tokens.DEFAULT_ENCODING) -> Parts:
    """The cookbook's count of one function, split by what removing the description or the parameters saves."""
    whole = tokens.count_function(function, encoding_name)
    return Parts(
        tokens.COOKBOOK_GPT4O.name,
        encoding_name,
        total=whole,
        name=tokens.count_text(function["name"], encoding_name),
        description=whole - tokens.count_function({**function, "description": ""}, encoding_name),
        parameters=whole - tokens.count_function({**function, "parameters": {}}, encoding_name),
    )


@dataclass(frozen=True)
class ToolCount:
    """One function definition counted both ways."""

    name: str
    harmony: Parts
    cookbook: Parts

    def as_dict(self) -> ToolCountRecord:
        """Both counts, labelled."""
        return {"name": self.name, "harmony": self.harmony.as_dict(), "cookbook": self.cookbook.as_dict()}


@dataclass(frozen=True)
class DefinitionsCount:
    """A list of function definitions counted both ways: per tool, and whole with each method's frame."""

    tools: tuple[ToolCount, ...]
    harmony_total: int
    cookbook_total: int
    cookbook_encoding: str

    def as_dict(self) -> DefinitionsRecord:
        """Every figure labelled with its method and encoding; 'frame' is the whole minus the tools' sum."""

        def whole(method: str, encoding: str, total: int, key: str) -> WholeRecord:
            frame = total - sum(getattr(t, key).total for t in self.tools)
            return {"method": method, "encoding": encoding, "label": tokens.LABEL, "total": total, "frame": frame}

        return {
            "tools": [t.as_dict() for t in self.tools],
            "harmony": whole(HARMONY_METHOD, HARMONY_ENCODING, self.harmony_total, "harmony"),
            "cookbook": whole(tokens.COOKBOOK_GPT4O.name, self.cookbook_encoding, self.cookbook_total, "cookbook"),
        }


def count_definitions(
    functions: list[dict[str, Any]], encoding_name: str = tokens.DEFAULT_ENCODING
) -> DefinitionsCount:
    """Count function definitions (type/name/description/parameters dicts) the harmony way and the cookbook way."""
    in_context = block_totals(functions) if functions else []
    return DefinitionsCount(
        tools=tuple(
            ToolCount(f["name"], harmony_parts(f, n), cookbook_parts(f, encoding_name))
            for f, n in zip(functions, in_context)
        ),
        # The whole developer message: its four message tokens, the namespace text and every block.
        harmony_total=len(render_tokens(functions)) if functions else 0,
        cookbook_total=tokens.count_tools(functions, encoding_name),
        cookbook_encoding=encoding_name,
    )
