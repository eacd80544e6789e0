"""``tokstat report``: compare, sweep and cost results -> one self-contained HTML file a team lead
can decide from (inline SVG charts, nothing fetched from anywhere) and, on request, the same charts
as PNG.

The page opens with the answers (which tokenizer for the language mix, what each language costs
against the pivot, which vocabulary size) and the assumptions, then per corpus the evidence.
Rendering only: the pipeline that produces the tables is :func:`tokstat.study.study`.
``read`` reads result files and splits them per corpus, ``answers`` computes the answers,
``charts`` draws, ``page`` lays out the HTML.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from ..errors import TokstatError
from ..io import figure_bytes, write_outputs
from .page import render
from .read import corpus_of, kind_of, read_results, sections

__all__ = ["report", "read_results", "kind_of", "render", "sections", "FORMATS", "format_of"]


#: the report's formats: the page, or its answers as text a lead pastes into a decision document
FORMATS = ("html", "md", "json")


def format_of(out: str | os.PathLike, fmt: str | None = None, png=None) -> str:
    """The format asked for, else the one ``out``'s suffix names (``.md``, ``.json``; else html);
    ``--png`` (the page's charts) only with html."""
    if fmt is not None and fmt not in FORMATS:
        raise TokstatError(f"unknown report format {fmt!r}", fix=f"use one of {', '.join(FORMATS)}")
    suf = Path(out).suffix.lower()
    kind = fmt or ("md" if suf in (".md", ".markdown") else "json" if suf == ".json" else "html")
    if kind != "html" and png:
        raise TokstatError("--png writes the page's charts: the md and json formats hold the answers as text",
                           fix="drop --png, or write the html page")
    return kind


def report(results: list[str | os.PathLike] | dict, out: str | os.PathLike, *,
           png: str | os.PathLike | None = None, title: str = "tokstat report", model: str | None = None,
           mix=None, mix_unit: str = "content", fmt: str | None = None) -> Path:
    """Write the HTML report of ``results`` (result files, or :func:`~tokstat.study.study`'s dict)
    to ``out``; with ``png``, every chart as ``DIR/NAME.png`` (200 dpi). Returns the written path.
    ``fmt`` (default: from ``out``'s suffix): ``html``, or the answers alone as Markdown (``md``)
    or JSON (``json``), each with its numbers, intervals and evidence (:mod:`tokstat.report.text`).

    From files, the vocabulary answer is the plan (:func:`tokstat.vocabplan.vocab_plan`) for
    ``model`` (default: the cost files' model, else ``llama2-7b``) fitted on a sweep file when one is
    given (``mix``: its language shares in ``mix_unit``, :mod:`tokstat.mix`; default equal content),
    else Tao et al.'s curve."""
    import matplotlib.pyplot as plt

    from ..mix import check_languages
    from ..mix import parse as parse_mix

    if isinstance(results, dict):
        data = results
    else:
        data = read_results(results)
    extras = {k: v for k, v in data.items() if not isinstance(v, pl.DataFrame) or k == "allocation"}
    tables = {k: v for k, v in data.items() if isinstance(v, pl.DataFrame) and k != "allocation"}
    if mix is not None:
        extras["mix"] = parse_mix(mix, mix_unit)
        have = {lang for k in ("compare", "sweep") if k in tables for lang in tables[k]["language"].to_list()}
        if have:
            check_languages(extras["mix"], have)
    extras.setdefault("model", model or _model_of(tables))
    if "plan" not in extras:
        extras["plan"] = _plan(tables, extras)
    kind = format_of(out, fmt, png)
    if kind != "html":                     # the answers alone: no page, no chart drawn
        from .page import section_answers
        from .text import answers_json, answers_md

        answers = [a for *_, ans in section_answers(sections(tables), extras) for a in ans]
        body = (answers_md if kind == "md" else answers_json)(answers, title, extras, tables)
        write_outputs({out: body.encode("utf-8")})
        return Path(out)
    page, figs, _ = render(tables, title, extras)
    try:
        # everything is rendered before the first byte is written, and the page and its PNG folder
        # are one unit: a failure leaves neither
        outputs: dict = {out: page.encode("utf-8")}
        if png is not None:
            outputs[png] = {f"{f.name}.png": figure_bytes(f.figure, dpi=200) for f in figs}
        write_outputs(outputs)
    finally:
        for f in figs:
            plt.close(f.figure)
    return Path(out)


def _model_of(tables: dict) -> str:
    for k in ("cost", "sweep_cost"):
        df = tables.get(k)
        if df is not None and "model" in df.columns and df["model"].drop_nulls().len():
            return df["model"].drop_nulls()[0]
    return "llama2-7b"


def _plan(tables: dict, extras: dict):
    """The vocabulary plan for the report's model: fitted on the sweep when there is one sweep
    corpus, Tao et al.'s otherwise."""
    from ..cost.model import non_embedding_params, preset
    from ..vocabplan import plan_for_report

    m = preset(extras["model"])
    sw = tables.get("sweep")
    if sw is not None and "signature" in sw.columns and len({corpus_of(x) for x in sw["signature"].to_list()}) > 1:
        sw = None
    mix = extras.get("mix")
    if sw is not None and mix is not None and mix.unit == "tokens":
        mix = None          # a token share depends on the vocabulary: the plan states the mix it used
    if sw is not None and mix is not None:
        mix = mix.restrict(sw["language"].to_list())
    return plan_for_report(sw, n_nv=non_embedding_params(m), d_model=m.d_model, mix=mix)
