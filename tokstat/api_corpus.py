"""Python API behind ``tokstat corpus ...``."""

from __future__ import annotations

from .corpus import CorpusInfo, corpus_info
from .loaders import load_corpus


def info(spec: str, **opts) -> CorpusInfo:
    """``tokstat corpus info SPEC``: per-language segments, empty segments, characters, bytes."""
    return corpus_info(load_corpus(spec, **{k: v for k, v in opts.items() if v is not None}))


def load(spec: str, **opts):
    """Load a corpus spec, dropping unset options."""
    return load_corpus(spec, **{k: v for k, v in opts.items() if v is not None})
