"""Orchestration for the one-command report: compare, an optional vocabulary sweep, then cost.

``study()`` runs the pipeline and returns the result tables; :func:`tokstat.report.report` renders
whatever it is given. The report never runs anything itself.
"""

from __future__ import annotations

import polars as pl

from . import parse
from .compare import compare
from .engine.job import MAX_CHARS
from .corpus import Corpus
from .cost.hardware import gpu as get_gpu
from .cost.model import preset
from .cost.projection import project
from .loaders import load_corpus
from .split import Split
from .sweep import sweep as run_sweep


def study(corpus: str | Corpus, tokenizers: list[str], *, sweep: str | None = None, model: str = "llama2-7b",
          gpu: str = "h100-sxm", train_tokens: float = 2e12, mix: dict[str, float] | str | None = None,
          pivot: str = "en", languages: list[str] | None = None, split: Split | None = None,
          boot_seed: int = 0, progress: bool | None = None, max_chars: int = MAX_CHARS) -> dict[str, pl.DataFrame]:
    """The whole pipeline for one report: compare ``tokenizers`` on ``corpus``; with ``sweep``
    (``ALGO:SIZE,SIZE,...``) a vocabulary sweep on the train/held-out ``split``; then the cost of
    training ``model`` on ``gpu`` for ``train_tokens`` (counted in the pivot language) from the
    sweep, or from the comparison. Returns ``{"compare": ..., "sweep": ..., "cost": ...}``."""
    c = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    if languages:
        c = c.select(languages)
    mixd = parse.mix(mix)
    sweep_args = parse.sweep_spec(sweep) if sweep else None   # checked before the first tokenizer runs
    m, g = preset(model), get_gpu(gpu)
    out = {"compare": compare(c, list(tokenizers), pivot=pivot, boot_seed=boot_seed, progress=progress,
                              max_chars=max_chars)}
    if sweep_args:
        algo, sizes = sweep_args
        out["sweep"] = run_sweep(c, algo, sizes, mix=mixd, pivot=pivot, split=split, boot_seed=boot_seed,
                                 max_chars=max_chars)
    out["cost"] = project(out.get("sweep", out["compare"]), m, g, train_tokens=train_tokens, mix=mixd)
    return out
