"""tiktoken encodings loaded without a network, from the files the pinned bpe-openai package ships."""

from __future__ import annotations

import binascii
import gzip
import hashlib
import importlib.util
import threading
from functools import cache
from pathlib import Path

import tiktoken
import tiktoken_ext.openai_public as openai_public
from tiktoken.model import encoding_name_for_model

from wismo.core.errors import InputError
from wismo.core.kinds import TIKTOKEN

# bpe-openai ships these two as .tiktoken.gz; their contents are byte for byte what tiktoken would download.
PACKAGE = "bpe-openai"
PACKAGED_ENCODINGS = ("o200k_base", "cl100k_base")
DEFAULT_ENCODING = "o200k_base"  # gpt-4.1, gpt-4.1-mini and gpt-4o use it
LABEL = TIKTOKEN

_load_lock = threading.Lock()


class OfflineEncodingError(InputError):
    """An encoding cannot be loaded from installed files; the message says what is missing and what to do."""


def _package_data_dir() -> Path:
    """bpe-openai's data folder, found without importing the package (its import parses every vocabulary)."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("the bpe_openai package is not installed")
    return Path(spec.origin).parent / "data"


def _packaged_bytes(name: str) -> bytes:
    """The decompressed .tiktoken file of `name` as shipped by bpe-openai."""
    if name not in PACKAGED_ENCODINGS:
        raise OfflineEncodingError(
            f"encoding {name!r} is not available offline; wismo loads {', '.join(PACKAGED_ENCODINGS)} from {PACKAGE}"
        )
    try:
        blob = _package_data_dir().joinpath(f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise OfflineEncodingError(
            f"{name}.tiktoken.gz not found in the {PACKAGE} package ({exc}); install the pinned dependencies "
            f"with `make setup` (pip install {PACKAGE}==0.1.4). wismo never downloads encodings."
        ) from None
    return gzip.decompress(blob)


def packaged_encoding_file(name: str) -> bytes:
    """The decompressed .tiktoken file of `name` from bpe-openai, for tools that read the file themselves."""
    return _packaged_bytes(name)


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """Parse the .tiktoken format: one base64 token and its rank per line."""
    # Split on all whitespace at once: a base64 token holds none, and the file's sha256 was checked before
    # parsing, so it is tiktoken's own file with exactly two fields a line. Twice as fast as line by line.
    fields = data.split()
    if len(fields) % 2:
        raise OfflineEncodingError(
            "the encoding file does not hold a token and a rank on every line; reinstall the pinned bpe-openai"
        )
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))


@cache
def encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The tiktoken Encoding `name`, built by tiktoken's own constructor from the packaged file, never downloaded."""
    data = _packaged_bytes(name)

    def from_package(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        # tiktoken's constructor passes the sha256 it expects; the packaged file must match it exactly.
        actual = hashlib.sha256(data).hexdigest()
        if expected_hash is None or actual != expected_hash:
            raise OfflineEncodingError(
                f"{name} from {PACKAGE} has sha256 {actual}, but tiktoken expects {expected_hash} for {url}; "
                f"reinstall the pinned {PACKAGE}"
            )
        return _parse_ranks(data)

    with _load_lock:
        # Swap tiktoken's loader for ours only while its constructor runs, so no code path can reach the network.
        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = from_package
        try:
            params = openai_public.ENCODING_CONSTRUCTORS[name]()
        finally:
            openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**params)


def encoding_for_model(model: str) -> str:
    """The encoding name tiktoken maps a model to (for example gpt-4.1-mini -> o200k_base)."""
    return encoding_name_for_model(model)
