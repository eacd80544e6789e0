"""tokstat: what a tokenizer costs you, per language.

The public API is small and loads lazily: ``import tokstat`` imports no numpy, polars or tokenizer
library; each name is imported on first use.

>>> import tokstat
>>> sorted(tokstat.__all__)[:3]
['Corpus', 'CorpusInfo', 'Segment']
"""

from __future__ import annotations

import importlib
import sys
import types

from ._version import __version__
from .corpus import Corpus, CorpusInfo, Segment, corpus_info
from .errors import TokstatError
from .split import Split

#: public name -> module that defines it (imported on first access)
_LAZY = {
    "load_corpus": "tokstat.loaders",
    "load_tokenizer": "tokstat.adapters",
    "compare": "tokstat.compare",
    "train": "tokstat.train",
    "sweep": "tokstat.sweep",
    "study": "tokstat.study",
    "report": "tokstat.report",
    "project": "tokstat.cost.projection",
    "preset": "tokstat.cost.model",
    "gpu": "tokstat.cost.hardware",
    "vocab_plan": "tokstat.vocabplan",
    "extend": "tokstat.extend",
    "extension_plan": "tokstat.extend",
    "budget": "tokstat.budget",
    "show": "tokstat.show",
    "worst": "tokstat.show",
    "robustness": "tokstat.show",
    "group_summary": "tokstat.groups",
    "lorenz_table": "tokstat.groups",
}

__all__ = ["Corpus", "CorpusInfo", "Segment", "Split", "TokstatError", "corpus_info", *_LAZY, "__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tokstat' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


class _API(types.ModuleType):
    """Several public functions share their module's name (``compare`` in ``tokstat/compare.py``).
    Importing such a submodule would bind the module over the function; the function stays."""

    def __setattr__(self, name: str, value) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _API
