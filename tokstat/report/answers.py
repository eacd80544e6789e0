"""The questions the page answers first, in words computed from the results."""

from __future__ import annotations

import html

import polars as pl

from ..cost.projection import MAX_UNK

def answers(results: dict[str, pl.DataFrame]) -> list[tuple[str, str]]:
    """The three questions the page answers first, in words computed from the results."""
    out = []
    c = results.get("compare")
    if c is not None:
        pivot = c.filter(pl.col("premium") == 1.0)["language"].to_list()
        # a tokenizer that reads more than MAX_UNK of some language's characters as unknown tokens
        # loses text: its low premium is not a saving, and it is never the answer
        bad = pl.lit(False)
        if "unk_rate" in c.columns:
            bad = bad | (pl.col("unk_rate") > MAX_UNK).fill_null(False)
        if "roundtrip_rate" in c.columns:
            bad = bad | (pl.col("roundtrip_rate") < 1).fill_null(False)
        lossy = sorted(set(c.filter(bad)["tokenizer"].to_list()))
        others = c.filter(~pl.col("language").is_in(pivot[:1]) & pl.col("premium").is_not_null()
                          & ~pl.col("tokenizer").is_in(lossy))
        if others.height:
            mean = others.group_by("tokenizer").agg(pl.col("premium").mean().alias("m")).sort("m")
            best = mean.row(0, named=True)
            left = (f" Left out, as they lose text (over {MAX_UNK:.0%} of a language's characters unknown, or "
                    "their decoder does not give the text back): "
                    + ", ".join(html.escape(t) for t in lossy) + ".") if lossy else ""
            out.append(("Which tokenizer?", f"<b>{html.escape(best['tokenizer'])}</b> has the lowest mean premium "
                        f"({best['m']:.2f}× the pivot, {pivot[0] if pivot else 'pivot'}) across "
                        f"{others['language'].n_unique()} language(s); {mean.height} tokenizer(s) compared.{left}"))
        zh = c.filter(pl.col("language").str.starts_with("zh") & pl.col("premium").is_not_null()).sort("premium")
        if zh.height:
            parts = ", ".join(f"{html.escape(r['tokenizer'])} <b>{r['premium']:.2f}×</b>"
                              + (f" ({r['premium_ci_low']:.2f}–{r['premium_ci_high']:.2f})"
                                 if r["premium_ci_low"] is not None else "") for r in zh.iter_rows(named=True))
            out.append(("What does Chinese cost me?", f"Tokens for the same content, relative to the pivot: {parts}."))
    k = results.get("cost")
    s = results.get("sweep")
    if k is not None and k["recommended"].any():
        rec = k.filter(pl.col("recommended"))
        parts = "; ".join(f"{html.escape(r['language'])}: {html.escape(str(r['tokenizer']))}"
                          + (f" (vocabulary {r['vocab_size']:,})" if r.get("vocab_size") else "")
                          + f", ${r['dollars']:,.0f} to train" for r in rec.iter_rows(named=True))
        out.append(("Which vocabulary size?" if s is not None or "requested_size" in k.columns
                    else "Which is cheapest to train?", f"Cheapest per language among reliable tokenizers: {parts}."))
    elif s is not None:
        best = s.group_by("vocab_size").agg(pl.col("tokens_per_char").mean().alias("m")).sort("vocab_size")
        out.append(("Which vocabulary size?", "Mean tokens per character by size: " + ", ".join(
            f"{r['vocab_size']:,}: {r['m']:.3f}" for r in best.iter_rows(named=True))
            + ". Run <code>tokstat cost</code> on the sweep to price each size."))
    return out
