"""Orchestration for the one-command report: compare, an optional vocabulary sweep, then cost.

``study()`` runs the pipeline and returns the result tables; :func:`tokstat.report.report` renders
whatever it is given. The report never runs anything itself.
"""

from __future__ import annotations

from . import parse
from .compare import compare
from .engine.job import MAX_CHARS
from .corpus import Corpus
from .errors import TokstatError
from .cost.hardware import gpu as get_gpu
from .cost.model import preset
from .cost.projection import project
from .loaders import load_corpus
from .split import Split
from .sweep import PREFIX_ALGOS
from .sweep import sweep as run_sweep
from .mix import parse as parse_mix


def study(corpus: str | Corpus, tokenizers: list[str], *, sweep: str | None = None, model: str = "llama2-7b",
          gpu: str = "h100-sxm", train_tokens: float | None = None, mix=None, mix_unit: str = "content",
          pivot: str = "en", languages: list[str] | None = None, split: Split | None = None,
          boot_seed: int = 0, progress: bool | None = None, max_chars: int = MAX_CHARS,
          views: int = 2, seq_len: int | None = None, gpus: int = 1, sample_bytes: float | None = None,
          eval_corpus=None, pretokenizer: str | None = None) -> dict:
    """The whole pipeline for one report: compare ``tokenizers`` on ``corpus`` (with per-segment
    rows and texts, for the distributions and the worst segments); with ``sweep``
    (``ALGO:SIZE,SIZE,...``) a vocabulary sweep on the train/held-out ``split``; the cost of training
    ``model`` on ``gpu`` for ``train_tokens`` (counted in the pivot language) for each compared
    tokenizer and each swept size; the vocabulary plan (:func:`tokstat.vocabplan.vocab_plan`, from
    the sweep, or Tao et al.'s curve without one); the BPE vocabulary allocation by script; and the
    token view of the first ``views`` segments under each tokenizer. ``mix`` (:mod:`tokstat.mix`,
    shares of ``mix_unit``, content by default) is the one mix of the tokenizer answer, the cost's
    mix row, the sweep's training text and the plan (a mix in tokens cannot steer a vocabulary: the
    sweep and the plan then use equal content, and the plan says so). On documents (a monolingual
    corpus) the sweep trains on ``sample_bytes`` of them and takes its premiums from
    ``eval_corpus`` (:func:`tokstat.sweep.sweep`); ``pretokenizer``: the sweep's byte-level BPE
    pre-tokenizer (:data:`tokstat.train.PRETOKENIZERS`).

    Returns ``{"compare", "segments", "cost", "plan", "views", "mix"}`` and, with a sweep,
    ``"sweep"``, ``"sweep_cost"`` and (BPE) ``"allocation"``."""
    from .compare import resolve_tokenizers
    from .cost.model import non_embedding_params
    from .show import pieces
    from .vocabplan import allocation, plan_for_report, text_sample

    for name, value, kinds, form in (("sweep", sweep, (str, type(None)), "'ALGO:SIZE,SIZE', e.g. 'bpe:2000,4000'"),
                                     ("model", model, (str,), "a preset name, e.g. 'llama2-7b'"),
                                     ("gpu", gpu, (str,), "an accelerator name, e.g. 'h100-sxm'"),
                                     ("tokenizers", tokenizers, (list, tuple), "a list of specs")):
        if not isinstance(value, kinds):
            raise TokstatError(f"study(): {name}={value!r} is not {form}", fix=f"pass {name} as {form}")
    c = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    if languages:
        c = c.select(languages)
    mixd = parse_mix(mix, mix_unit)
    vocab_mix = mixd if mixd is None or mixd.unit != "tokens" else None
    sweep_args = parse.sweep_spec(sweep) if sweep else None   # checked before the first tokenizer runs
    m, g = preset(model), get_gpu(gpu)
    adapters = resolve_tokenizers(list(tokenizers), c)
    mono = c.kind == "monolingual"
    df, segs = compare(c, adapters, pivot=pivot, boot_seed=boot_seed, progress=progress, max_chars=max_chars,
                       return_segments=True, segments_text=True,
                       calibrate=eval_corpus if mono and eval_corpus is not None else None)
    out: dict = {"compare": df, "segments": segs, "mix": mixd}
    if mono and eval_corpus is None:
        # no premium, no content: the same content for every language cannot be priced
        import warnings

        warnings.warn("the cost section needs content: documents have none without a parallel corpus (pass --eval "
                      "PARALLEL: it calibrates the premiums and the sweep)", stacklevel=2)
    else:
        out["cost"] = project(df, m, g, gpus=gpus, train_tokens=train_tokens, mix=mixd, seq_len=seq_len)
    sw = None
    if sweep_args:
        algo, sizes = sweep_args
        trained: list = []
        sw = run_sweep(c, algo, sizes, mix=vocab_mix, pivot=pivot, split=split, boot_seed=boot_seed,
                       max_chars=max_chars, trained=trained, progress=progress, sample_bytes=sample_bytes,
                       eval_corpus=eval_corpus, pretokenizer=pretokenizer)
        out["sweep"] = sw
        if "cost" in out:
            out["sweep_cost"] = project(sw, m, g, gpus=gpus, train_tokens=train_tokens, mix=mixd, seq_len=seq_len)
        if trained and hasattr(trained[0], "tok") and algo in PREFIX_ALGOS:    # ids in merge order
            out["allocation"] = allocation(trained[0], text_sample(c), sw["vocab_size"].unique().sort().to_list())
    out["plan"] = plan_for_report(sw, n_nv=non_embedding_params(m), d_model=m.d_model, mix=vocab_mix,
                                  corpus_name=c.name, algo=sweep_args[0] if sweep_args else "bpe")
    if mixd is not None and vocab_mix is None:
        out["plan"].warnings.append("the mix is stated in tokens, which depend on the vocabulary size: the sweep and "
                                    "this plan use equal content shares")
    shown = []
    for seg in c:
        if len(shown) >= views:
            break
        if all(seg.texts.get(lang, "").strip() for lang in c.languages):
            for lang in c.languages:
                text = seg.texts[lang]
                shown.append({"segment": seg.id, "language": lang, "text": text,
                              "pieces": {a.id: pieces(a, text) for a in adapters}})
    out["views"] = shown
    return out
