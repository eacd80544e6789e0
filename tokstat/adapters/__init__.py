"""Tokenizer spec strings -> adapters (a registry of constructors, as in tiktoken).

``tiktoken:cl100k_base``, ``tiktoken:PATH?pattern=llama3``, ``hf:PATH/tokenizer.json``, ``hf:ORG/NAME``,
``wordpiece:PATH/vocab.txt?lowercase=true``, ``spm:PATH.model``. Any spec may pin its files with
``?sha256=HEX`` (see :mod:`tokstat.integrity`). ``train:ALGO:SIZE`` specs need a corpus: the job layer
(:func:`tokstat.compare.resolve_tokenizers`) trains them; this registry only loads files.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import TokstatError
from ..integrity import check_pin
from .base import Adapter, Encoded
from .hf import load_hf, load_wordpiece
from .spm import load_spm
from .tiktoken_ import load_tiktoken

__all__ = ["Adapter", "Encoded", "load_tokenizer", "parse_spec", "CONSTRUCTORS"]

CONSTRUCTORS: dict[str, Callable[[str, dict[str, str]], Adapter]] = {
    "tiktoken": load_tiktoken,
    "hf": load_hf,
    "wordpiece": load_wordpiece,
    "spm": load_spm,
}
FORMS = "tiktoken:NAME|PATH, hf:PATH/tokenizer.json|ORG/NAME, wordpiece:PATH/vocab.txt, spm:PATH.model, train:ALGO:SIZE"


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """``"wordpiece:v.txt?lowercase=true"`` -> ``("wordpiece", "v.txt", {"lowercase": "true"})``."""
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise TokstatError(f"tokenizer spec {spec!r} has no kind", fix=f"write one of: {FORMS}")
    target, _, query = rest.partition("?")
    opts = {}
    for kv in filter(None, query.split("&")):
        k, eq, v = kv.partition("=")
        if not eq:
            raise TokstatError(f"option {kv!r} in {spec!r} is not key=value", fix="write ?key=value&key=value")
        opts[k] = v
    return kind, target, opts


def load_tokenizer(spec: str | Adapter) -> Adapter:
    """Build the adapter for ``spec`` (an :class:`Adapter` is returned as it is)."""
    if isinstance(spec, Adapter):
        return spec
    kind, target, opts = parse_spec(spec)
    if kind == "train":
        raise TokstatError(f"{spec!r} is trained on a corpus, not loaded from a file",
                           fix="pass it to tokstat.compare(corpus, [...]) or train it with tokstat.train()")
    if kind not in CONSTRUCTORS:
        raise TokstatError(f"unknown tokenizer kind {kind!r} in {spec!r}", fix=f"write one of: {FORMS}")
    adapter = CONSTRUCTORS[kind](target, opts)
    check_pin(spec, adapter.file_hash, opts.get("sha256"), path=target)
    return adapter
