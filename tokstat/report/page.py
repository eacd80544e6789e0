"""The HTML page: answers first, then the assumptions, then per corpus the evidence (compact tables
with the full ones folded, charts, distributions, cost, vocabulary, worst segments, token view),
then every signature. One self-contained file: inline SVG, inline CSS, and a few lines of inline
script that only make the tables sortable by a click (everything reads without it)."""

from __future__ import annotations

import polars as pl

from .._version import __version__
from ..fmt import fmt, with_interval
from .answers import Answer, Verdict, answers, assumptions, verdict
from .charts import (CARD_WIDTH, Chart, allocation_chart, bars, boxes, fairness_curves, histograms, language_colours,
                     multiplier_chart, plan_curves, ranking_chart, svg, sweep_curves, tokenizer_colours)
from ..markup import Markup, h, join, trusted
from ..show import VIEW_CSS

CSS = """
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fff}
main{max-width:1180px;margin:0 auto;padding:16px 24px 60px}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:19px;margin:34px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:18px 0 6px}
.answers{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px;margin:14px 0}
.answer{background:#f3f6fb;border-radius:8px;padding:10px 14px;overflow-wrap:anywhere}
.answer h3{margin:0 0 4px;font-size:16px}.answer ul{margin:4px 0;padding-left:20px}
.answer a.ev{font-size:13px}
dl.assume{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;font-size:14px;margin:6px 0}
dl.assume dt{font-weight:600}dl.assume dd{margin:0;overflow-wrap:anywhere}
.charts{display:flex;flex-wrap:wrap;gap:16px}
figure.chart{margin:0;border:1px solid #e5e5e5;border-radius:8px;padding:8px;background:#fff;max-width:100%;
box-sizing:border-box}
figure.chart svg{max-width:100%;height:auto;display:block}
figcaption{font-size:13px;color:#444;margin-top:4px;max-width:518px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:3px 6px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f6f6f6;position:sticky;top:0;cursor:pointer;white-space:normal;vertical-align:bottom;max-width:110px}
td.l,th.l{text-align:left}td.id{white-space:normal;min-width:14ch;max-width:34ch}tr.bad td{color:#777}
td.why{white-space:normal;text-align:left;min-width:28ch;max-width:60ch}
td.txt{white-space:normal;text-align:left;min-width:220px;max-width:460px}
details{margin:8px 0}summary{cursor:pointer;font-size:14px;color:#244b8f}
code,.sig{font:12px ui-monospace,Menlo,Consolas,monospace}.sig{color:#555;overflow-wrap:anywhere}
.note{font-size:14px;color:#444}.view{overflow-wrap:anywhere}
.answer .lead{font-size:15px}.answer figure.chart{border:0;padding:0;margin:6px 0 0}
.answer details{margin:4px 0 0;font-size:14px}
details.evidence>summary{font-size:17px;font-weight:600;margin:22px 0 6px;color:#1d1d1f}
.filter{margin:10px 0;font-size:14px}.filter input{font:inherit;padding:3px 6px;width:min(320px,90%)}
""" + VIEW_CSS

SORT_JS = Markup("""<script>
const openTo = () => { const t = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  for (let e = t; e; e = e.parentElement) if (e.tagName === 'DETAILS') e.open = true; };
window.addEventListener('hashchange', openTo); openTo();
const box = document.getElementById('filter');
if (box) box.addEventListener('input', () => { const q = box.value.trim().toLowerCase();
  document.querySelectorAll('table.sortable tbody tr').forEach(r => {
    r.hidden = q !== '' && !r.textContent.toLowerCase().includes(q); });
  if (q) document.querySelectorAll('details.evidence').forEach(d => d.open = true); });
document.querySelectorAll('table.sortable th').forEach((th, i) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0], rows = [...body.rows], asc = th.dataset.asc !== '1';
  const key = r => { const c = r.cells[i]; return c.dataset.v !== undefined ? parseFloat(c.dataset.v) : c.textContent; };
  rows.sort((a, b) => { const x = key(a), y = key(b);
    return (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y))) * (asc ? 1 : -1); });
  th.dataset.asc = asc ? '1' : '0'; rows.forEach(r => body.appendChild(r));
}));
</script>""")

#: the compact tables: (column, heading)
COMPARE_COMPACT = [("tokenizer", "tokenizer"), ("language", "language"), ("premium", "premium [95 % CI]"),
                   ("tokens_per_char", "tokens/char"), ("tokens_per_word", "tokens/word"),
                   ("split_char_rate", "split chars"), ("unk_rate", "unknown")]
COST_COMPACT = [("tokenizer", "tokenizer"), ("language", "language"),
                ("dollars", "training $"), ("cost_multiplier", "training × pivot"), ("gpu_hours", "GPU-hours"),
                ("usd_per_1k_requests", "$ / 1k requests"), ("serving_multiplier", "serving × pivot"),
                ("not_recommended_because", "not recommended because")]
SWEEP_COMPACT = [("vocab_size", "vocabulary"), ("language", "language"), ("tokens_per_char", "tokens/char"),
                 ("tokens_per_word", "tokens/word"), ("premium", "premium [95 % CI]"),
                 ("continued_word_rate", "words split"), ("embedding_params", "embedding params")]
LEFT = {"tokenizer", "language", "class", "a", "b", "group", "languages", "worst_language", "not_recommended_because", "text", "pivot_text",
        "segment", "signature", "volume", "vocab_source", "mfu_source", "price_source", "tokenizer_family", "prefill_bound", "decode_bound",
        "train_fits", "fits", "model", "gpu", "train_precision"}
HIDDEN = {"_file", "signature"}


def _cell(r: dict, col: str) -> Markup:
    v = r.get(col)
    text = with_interval(v, r.get("premium_ci_low"), r.get("premium_ci_high")) if col == "premium" else fmt(v, col)
    sort = h(' data-v="{!r}"', v) if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
    cls = "l" if col in LEFT else ""
    body = h("{}", text)
    if col in ("text", "pivot_text"):
        cls = "txt"
    elif col == "not_recommended_because":     # a sentence: wraps in the room the table has
        cls = "why"
    elif col == "tokenizer":      # long ids wrap after a "/" or "-" instead of widening the table
        cls = "l id"
        body = join("", [h("{}<wbr>", piece) for piece in _wrap_points(text)])
    return h("<td{}{}>{}</td>", h(' class="{}"', cls) if cls else "", sort, body)


def _wrap_points(text: str) -> list[str]:
    """``text`` cut after each "/" (where a long id may wrap: once for ``library/name``, never
    inside a name).

    >>> _wrap_points("tiktoken/cl100k-base")
    ['tiktoken/', 'cl100k-base']
    """
    import re

    return [x for x in re.split(r"(?<=/)", text) if x]


def table(df: pl.DataFrame, cols: list[tuple[str, str]], *, tid: str = "", bad: set[str] = frozenset()) -> Markup:
    cols = [(c, head) for c, head in cols if c in df.columns]
    left, grey = Markup(' class="l"'), Markup(' class="bad"')
    heads = join("", [h("<th{}>{}</th>", left if c in LEFT else "", head) for c, head in cols])
    rows = join("", [h("<tr{}>{}</tr>", grey if r.get("tokenizer") in bad else "", join("", [_cell(r, c) for c, _ in cols]))
                     for r in df.iter_rows(named=True)])
    return h('<div class="scroll"{}><table class="sortable"><thead><tr>{}</tr></thead><tbody>{}</tbody></table></div>',
             h(' id="{}"', tid) if tid else "", heads, rows)


#: the page as it opens (evidence folded) is at most this tall in CSS pixels at 1440 px wide (and
#: PAGE_HEIGHT_BOUND_NARROW at 800 px), whatever the number of languages and tokenizers: tested with
#: 200 languages × 20 tokenizers (tests/test_report.py)
PAGE_HEIGHT_BOUND = 2500
PAGE_HEIGHT_BOUND_NARROW = 4000
#: a full table of more cells than this is left to the result file (the page keeps the compact one)
FULL_CELLS = 60_000


def full(df: pl.DataFrame, what: str) -> Markup:
    cols = [(c, c) for c in df.columns if c not in HIDDEN]
    if df.height * len(cols) > FULL_CELLS:
        return h('<p class="note">The full {} table ({:,} rows × {} columns) is in the result file this page was made '
                 "from (tokstat's --out), not repeated here.</p>", what, df.height, len(cols))
    return h("<details><summary>Full {} table ({} columns)</summary>{}</details>", what, len(cols), table(df, cols))


def _per_1k(k: pl.DataFrame | None) -> pl.DataFrame | None:
    if k is None or "usd_per_request" not in k.columns:
        return k
    return k.with_columns((pl.col("usd_per_request") * 1000).alias("usd_per_1k_requests"))


def _figure(ch: Chart) -> Markup:
    return h('<figure class="chart" id="chart-{name}" data-chart="{name}">{svg}<figcaption>{cap}</figcaption></figure>',
             name=ch.name, svg=trusted(svg(ch.figure)), cap=ch.caption or ch.title)


def _charts(figs: list[Chart]) -> Markup:
    return h('<div class="charts">{}</div>', join("", [_figure(f) for f in figs])) if figs else Markup("")


def _order(c: pl.DataFrame, pivot: str | None) -> list[str]:
    langs = c["language"].unique(maintain_order=True).to_list()
    return [lang for lang in langs if lang != pivot] + ([pivot] if pivot in langs else [])


GROUP_COLS = [("tokenizer", "tokenizer"), ("group", "group"), ("n_languages", "languages"), ("languages", "which"),
              ("geo_mean", "geometric mean"), ("median", "median"), ("max", "max"), ("worst_language", "worst")]


def _groups(c: pl.DataFrame, pivot: str | None, best: str | None, bad: set[str], prefix: str,
            figs: list[Chart]) -> Markup:
    """The comparison by script, family and resource level (:mod:`tokstat.groups`) and the Lorenz
    curve of the premiums, for a comparison of three languages or more."""
    from ..groups import group_summary, lorenz_table

    if c["language"].n_unique() < 3:
        return Markup("")
    value = "premium" if pivot is not None and c["premium"].drop_nulls().len() else "tokens_per_byte"
    what = (h("the premium against {} (the pivot is left out of its group)", pivot) if value == "premium"
            else Markup("tokens per byte (no premium: the corpus has no aligned pivot)"))
    parts = [h('<h2 id="{}groups">By script, family and resource level</h2><p class="note">Per group of languages, {} '
               "over the group's languages, for {}; every tokenizer in the folded tables. Families and macroareas "
               "are Glottolog 5.1's, scripts the code's (or CLDR's likely script), resource levels CLDR's coverage "
               "levels (docs/metrics.md).</p>", prefix, what, best or "each tokenizer")]
    for by, title in (("script", "Script"), ("family", "Language family"), ("resource", "Resource level (CLDR coverage)")):
        g = group_summary(c, by, value=value, pivot=pivot)
        if not g.height:
            continue
        shown = g.filter(pl.col("tokenizer") == best) if best is not None else g
        parts.append(h("<h3>{}</h3>", title) + table(shown, GROUP_COLS, bad=bad)
                     + full(g.drop("dimension"), f"{title.lower()} (every tokenizer)"))
    if value == "premium":
        from .charts import lorenz_curves

        lz = lorenz_table(c, value="premium")
        ch = Chart(f"{prefix}lorenz", "Lorenz curve of the premiums", lorenz_curves(lz, bad),
                   "Languages sorted from the lowest premium up (the pivot at 1 included) against their share of "
                   "all the tokens the same content costs; the dotted diagonal is parity. Gini: twice the area "
                   "between (0: every language pays the same).")
        figs.append(ch)
        parts.append(_charts([ch]))
    return join("", parts)


def section(sec, extras: dict, prefix: str, figs: list[Chart], v: Verdict | None = None) -> Markup:
    """The evidence for one corpus (``v``: its comparison's :func:`~.answers.verdict`); the charts
    drawn are appended to ``figs``."""
    from ..show import worst

    parts = []
    c = sec.get("compare")
    # one colour per language in every chart of the section (each draws its own subset, in its own order)
    colours = language_colours({lang for k in ("compare", "sweep", "segments", "extension") if sec.get(k) is not None
                                for lang in sec.get(k)["language"].unique().to_list()}
                               | set((extras.get("plan").fit if extras.get("plan") is not None else {})))
    bad: set[str] = set()
    best = None
    pivot = None
    if c is not None and c.height:
        v = v or verdict(c, extras.get("mix"), sec.get("cost"))
        pivot, bad, best = v.pivot, set(v.bad), v.best
        order = {t: i for i, t in enumerate(v.rank["tokenizer"].to_list())}
        langs = _order(c, pivot)
        others = [lang for lang in langs if lang != pivot]
        shown = c.with_columns(pl.col("tokenizer").replace_strict(order, default=len(order), return_dtype=pl.Int64)
                               .alias("_rank")).sort("language", "_rank", "tokenizer").drop("_rank")
        compact = shown.filter(pl.col("language") != pivot) if pivot is not None and others else shown
        parts.append(h('<h2 id="{}tokenizers">Tokenizers</h2><p class="note">Rows sorted by language, then by the '
                       "ranking of the answer above; grey rows lose text (⚠ in the charts). {}Click a heading to "
                       "sort.</p>{}{}", prefix,
                       h("The pivot ({}) rows are in the full table. ", pivot) if pivot is not None and others else "",
                       table(compact, COMPARE_COMPACT, tid=f"{prefix}table-compare", bad=bad),
                       full(shown, "comparison")))
        new = []
        tcol = _colours(c, v)            # one colour per tokenizer (languages keep theirs in the curves)
        rank = list(tcol)

        drawn = rank[:TOP_TOKENIZERS]

        def panel(col: str, xlabel: str, among: list[str], caption: str, **kw) -> Chart:
            top = _top_languages(c, col, among, best)
            cap = caption + (f" The {len(top)} highest of {len(among)} languages under {best}." if len(top) < len(among)
                             else "") + (f" The {len(drawn)} best-ranked of {len(rank)} tokenizers." if len(drawn) <
                                         len(rank) else "") + (" Every row is in the tables (filter above)."
                                                               if len(top) < len(among) or len(drawn) < len(rank) else "")
            return Chart(f"{prefix}{kw.pop('name', col)}", kw.pop("title"),
                         bars(c.filter(pl.col("tokenizer").is_in(drawn)), col, xlabel, languages=top, bad=bad,
                              colours=tcol, order=rank, **kw), cap)

        if others and c["premium"].drop_nulls().len():
            new.append(panel("premium", f"tokens for the same content / {pivot} tokens", others,
                             f"Premium against {pivot} (ratio of sums) with its 95 % bootstrap interval; the dashed "
                             "line is parity; tokenizers in the answer's order and colours. ⚠: loses text.",
                             title="Premium against the pivot", lo="premium_ci_low", hi="premium_ci_high", ref=1.0))
        new.append(panel("tokens_per_char", "tokens per character", langs,
                         "Tokens per character, per language (across scripts this measures the script as much as "
                         "the tokenizer: compare languages with the premium).", title="Tokens per character"))
        if c["continued_word_rate"].drop_nulls().len():
            new.append(panel("continued_word_rate", "words split into two or more tokens", langs,
                             "Share of words split into two or more tokens.", title="Words split into several tokens",
                             name="continued_words", pct=True))
        if c["split_char_rate"].drop_nulls().sum() > 0:
            new.append(panel("split_char_rate", "characters cut by a token boundary", langs,
                             "Share of characters whose bytes a token boundary cuts (byte tokens).",
                             title="Characters cut inside", name="split_chars", pct=True))
        if "shannon_entropy" in c.columns and c["shannon_entropy"].drop_nulls().len():
            new.append(panel("shannon_entropy", "bits per token (Shannon)", langs,
                             "Shannon entropy of each language's unigram token distribution, in bits; the Rényi "
                             "entropies, type–token ratio, vocabulary utilisation and bits per byte are in the full "
                             "table (docs/metrics.md).", title="Entropy of the token distribution", name="entropy"))
        figs.extend(new)
        parts.append(_charts(new))
        parts.append(_groups(c, pivot, best, bad, prefix, figs))
        segs = sec.get("segments")
        if segs is not None and segs.height:
            parts.append(h('<h2 id="{}distributions">Per-segment distributions</h2>', prefix))
            dist = []
            seg = segs.filter(pl.col("chars") > 0)
            if pivot is not None and others:
                piv = seg.filter(pl.col("language") == pivot).select("tokenizer", "segment",
                                                                     pl.col("tokens").alias("_p"))
                pr = seg.join(piv, on=["tokenizer", "segment"]).filter(pl.col("_p") > 0).with_columns(
                    (pl.col("tokens") / pl.col("_p")).alias("segment_premium"))
                if pr.filter(pl.col("language").is_in(others)).height:   # documents have no aligned pairs
                    dist.append(Chart(f"{prefix}segment_premium", "Per-segment premium",
                                      boxes(pr, "segment_premium", f"segment tokens / {pivot} tokens of that segment",
                                            languages=others, ref=1.0, bad=bad, colours=_colours(c, v)),
                                      "Per-segment premium (box: quartiles; whiskers: 5th–95th percentile; line: "
                                      "median). Its mean is the mean-of-ratios premium (TokSuite)."))
            if best is not None:
                dist.append(Chart(f"{prefix}segment_tokens", "Tokens per segment",
                                  histograms(seg, best, langs, colours),
                                  f"Tokens per segment under {best} (the recommended tokenizer), per language."))
            figs.extend(dist)
            parts.append(_charts(dist))
            if "text" in segs.columns and best is not None and pivot is not None:
                parts.append(h('<h2 id="{}worst">Where {} does worst</h2>', prefix, best))
                aligned = seg.filter(pl.col("language") == pivot).select("segment").join(
                    seg.filter(pl.col("language") != pivot).select("segment"), on="segment").height > 0
                for lang in (others if aligned else langs):
                    if aligned:
                        w = worst(segs, tokenizer=best, language=lang, pivot=pivot, n=5)
                        cols = [("segment", "segment"), ("premium", "premium"), ("tokens", "tokens"),
                                ("pivot_tokens", f"{pivot} tokens"), ("text", lang), ("pivot_text", pivot)]
                        title = "highest per-segment premium"
                    else:   # documents: no segment of the pivot says the same thing, so no per-segment premium
                        w = worst(segs, tokenizer=best, language=lang, pivot=pivot, by="tokens_per_char", n=5)
                        cols = [("segment", "document"), ("tokens_per_char", "tokens per character"),
                                ("tokens", "tokens"), ("chars", "characters"), ("text", lang)]
                        title = "highest tokens per character"
                    if w.height:
                        parts.append(h("<h3>{}: {}</h3>", lang, title) + table(w, cols))
    k = _per_1k(sec.get("cost"))
    if k is not None and k.height:
        held = k["held_equal"][0] if "held_equal" in k.columns and k["held_equal"][0] else "content"
        cols = COST_COMPACT if held == "content" else [
            (c, f"training × pivot (same {held})" if c == "cost_multiplier" else t) for c, t in COST_COMPACT]
        parts.append(h('<h2 id="{}cost">Cost per language</h2><p class="note">{}; grey rows lose text and are never '
                       "recommended.</p>", prefix,
                       "The same content in every language" if held == "content" else
                       h("The same number of {} in every language — not the same content: its × pivot is not the "
                         "premium", held))
                     + table(k, cols, bad=bad) + full(k, "cost"))
        if k["language"].n_unique() > 1 and "serving_multiplier" in k.columns and k["serving_multiplier"].drop_nulls().len():
            # training on the same content costs the premium (the chart above); serving does not: attention
            # and KV-cache reads grow faster than the token count, so this chart says something new
            figs.append(Chart(f"{prefix}serving_multiplier", "Serving cost per request relative to the pivot",
                              bars(k, "serving_multiplier", "serving cost per request / pivot's",
                                   languages=_order(k, pivot), ref=1.0, bad=bad),
                              "What a request of the same content costs to serve per language, relative to the "
                              "pivot (training follows the premium chart: the same content, the premium's tokens)."))
            parts.append(_charts(figs[-1:]))
    b = sec.get("budget")
    if b is not None and b.height:
        parts.append(h('<h2 id="{}budget">Token budget</h2><p class="note">{}</p>', prefix, b["estimator"][0])
                     + table(b, [("tokenizer", "tokenizer"), ("language", "language"), ("bytes", "bytes"),
                                 ("tokens", "tokens"), ("tokens_low", "low (95 %)"), ("tokens_high", "high (95 %)"),
                                 ("token_share", "share of tokens"), ("byte_share", "share of bytes"),
                                 ("exact", "counted")]) + full(b, "budget"))
    e = sec.get("extension")
    if e is not None and e.height:
        from .charts import extension_curves

        t = e.filter(pl.col("target")).sort("language", "added")
        parts.append(h('<h2 id="{}extension">Extending {}</h2><p class="note">New tokens learned for {} and appended '
                       "after the base's ids; measured on text none of them was learned from. {}</p>", prefix,
                       e["base"][0], ", ".join(t["language"].unique(maintain_order=True).to_list()),
                       e["assumptions"][0])
                     + table(t, [("added", "added"), ("language", "language"), ("tokens_before", "tokens before"),
                                 ("tokens_after", "tokens after"), ("tokens_saved", "saved"),
                                 ("premium_before", "premium before"), ("premium_after", "premium after"),
                                 ("new_params", "new parameters"), ("adapt_usd", "continued pretraining"),
                                 ("saving_usd_per_1k_requests", "saved per 1,000 requests"),
                                 ("break_even_requests", "break-even (requests)")]) + full(e, "extension"))
        if t.height:
            figs.append(Chart(f"{prefix}extension_curve", "Tokens saved by extending the tokenizer",
                              extension_curves(e, colours),
                              "Tokens saved and premium against the number of tokens added (0: the base)."))
            parts.append(_charts(figs[-1:]))
    plan, sw = extras.get("plan"), sec.get("sweep")
    if plan is not None or sw is not None:
        parts.append(h('<h2 id="{}vocabulary">Vocabulary size</h2>', prefix))
        new = []
        if plan is not None:
            parts.append(h('<p class="note">{}</p><p class="note">Train it: <code>{}</code></p>',
                           join("<br>", plan.assumptions + plan.warnings), plan.training_command))
            new.append(Chart(f"{prefix}vocab_plan", "Training FLOPs against vocabulary size",
                             plan_curves(plan, sw, colours),
                             "Training FLOPs for the same text, 6·(N + V·d)·tokens, relative to the least, per "
                             "language and for the mix; shaded: within 1 %; dashed: the recommendation."))
        if sw is not None:
            new.append(Chart(f"{prefix}sweep", "Vocabulary-size sweep", sweep_curves(sw, colours),
                             "Held-out tokens per character and premium at each swept size."))
            from ..sweep import algorithm_of, price_of_fairness

            if {"bpe", "parity-bpe"} <= set(algorithm_of(sw).drop_nulls().to_list()):
                pof = price_of_fairness(sw, extras.get("mix"))
                if pof["plain_spread"].null_count() == 0 and pof["parity_spread"].null_count() == 0:
                    new.append(Chart(f"{prefix}price_of_fairness", "The price of fairness", fairness_curves(pof),
                                     "Plain against parity-aware BPE at each swept size: how far apart the languages' "
                                     "premiums are, and what parity costs in tokens on the mix (paired bootstrap "
                                     "interval)."))
            parts.append(table(sw.sort("language", "vocab_size"), SWEEP_COMPACT) + full(sw, "sweep"))
        alloc = extras.get("allocation")
        if alloc is not None and alloc.height:
            new.append(Chart(f"{prefix}allocation", "Vocabulary allocation", allocation_chart(alloc),
                             "Which scripts and languages the first V tokens of the BPE vocabulary serve."))
        figs.extend(new)
        parts.append(_charts(new))
        sk = _per_1k(sec.get("sweep_cost"))
        if sk is not None and sk.height:
            ans = f" ({plan.recommended_vocab_size:,})" if plan is not None and not plan.no_answer else ""
            parts.append(h('<h3>Cost at each swept size</h3><p class="note">Each swept size priced for the same '
                           "content; the vocabulary answer above{} weighs these tokens against the embedding over "
                           "every size, not only the swept ones.</p>", ans) + table(sk.sort("language", "vocab_size"), [
                ("vocab_size", "vocabulary"), ("language", "language"),
                ("dollars", "training $"), ("cost_multiplier", "training × pivot"),
                ("usd_per_1k_requests", "$ / 1k requests")]) + full(sk, "cost per size"))
    views = extras.get("views") or []
    if views:
        from ..show import html_fragment

        tcol = _colours(c, v) if c is not None else {}
        parts.append(h('<h2 id="{}view">A look inside</h2><p class="note">The first segments split into tokens '
                       "by each tokenizer, side by side.</p>", prefix))
        for w in views:   # html_fragment escapes by construction (tokstat.markup)
            parts.append(h('<h3>{} — segment {}</h3><div class="view">{}</div>', w["language"], w["segment"],
                           html_fragment(w["text"], w["pieces"], style=False, colours=tcol)))
    return join("", parts)


def _vocabularies(inv: pl.DataFrame | None, ov: pl.DataFrame | None, figs: list[Chart]) -> Markup:
    """What the vocabularies hold (``tokstat inventory --out``) and share (``tokstat overlap --out``)."""
    from ..inventory import overlap_figure
    from .charts import _plt

    parts = []
    if inv is not None and inv.height:
        toks = list(dict.fromkeys(inv["tokenizer"].to_list()))
        share = {(t, c): v for t, c, v in zip(inv["tokenizer"].to_list(), inv["class"].to_list(), inv["share"].to_list())}
        classes = list(dict.fromkeys(inv["class"].to_list()))
        rows = pl.DataFrame([{"class": c, **{t: fmt(share.get((t, c)), "unk_rate") for t in toks}} for c in classes],
                            schema={"class": pl.String, **{t: pl.String for t in toks}})
        parts.append(h('<h2 id="vocabularies">Vocabularies</h2><p class="note">The share of each vocabulary\'s '
                       "entries by the script of their letters, digits, punctuation, whitespace and partial UTF-8 "
                       "(bytes that are not whole characters), spelt as the bytes they stand for "
                       "(docs/metrics.md).</p>{}", table(rows, [("class", "entries"), *[(t, t) for t in toks]])))
    if ov is not None and ov.height:
        if not parts:
            parts.append(h('<h2 id="vocabularies">Vocabularies</h2>'))
        ch = Chart("overlap", "Vocabulary overlap", overlap_figure(ov, _plt()),
                   "The share of the row tokenizer's entries that the column tokenizer also has (coverage, "
                   "asymmetric), compared on the bytes each entry stands for; Jaccard in the table.")
        figs.append(ch)
        pairs = ov.filter(pl.col("a") != pl.col("b"))
        parts.append(_charts([ch]) + table(pairs, [("a", "A"), ("b", "B"), ("shared", "shared entries"),
                                                   ("jaccard", "Jaccard"), ("coverage", "of A in B")]))
    return join("", parts)


def _colours(c: pl.DataFrame | None, v: Verdict | None) -> dict[str, str]:
    """The page's one colour per tokenizer: by the answer's ranking, then the others; grey: loses text."""
    if c is None or not c.height:
        return {}
    order = list(v.choice.scores) if v is not None else []
    order += [t for t in c["tokenizer"].unique(maintain_order=True).to_list() if t not in order]
    return tokenizer_colours(order, set(v.bad) if v is not None else set())


#: most language panels an evidence chart draws (the highest under the recommended tokenizer); the
#: tables hold every language
TOP_LANGUAGES = 16
#: most tokenizers an evidence chart draws per panel (the best-ranked)
TOP_TOKENIZERS = 8


def _top_languages(c: pl.DataFrame, col: str, langs: list[str], best: str | None, n: int = TOP_LANGUAGES) -> list[str]:
    """``langs`` when there are at most ``n``, else the ``n`` with the highest ``col`` under ``best``
    (in ``langs``' order)."""
    if len(langs) <= n:
        return langs
    g = c.filter(pl.col("language").is_in(langs) & pl.col(col).is_not_null())
    if best is not None:
        g = g.filter(pl.col("tokenizer") == best)
    keep = set(g.group_by("language").agg(pl.col(col).max()).sort(col, "language", descending=[True, False])
               ["language"].head(n).to_list())
    return [lang for lang in langs if lang in keep]


def _answer_chart(a: Answer, sec, extras: dict, v: Verdict | None, prefix: str, colours: dict) -> Chart | None:
    """The one chart under an answer's sentence: the ranking, the per-language multipliers, the
    vocabulary curve, or what switching changes."""
    c = sec.get("compare")
    order = list(v.choice.scores) if v is not None else []
    if a.key == "tokenizer" and v is not None and v.choice.scores:
        unit = "$ to train on the mix" if v.choice.criterion == "dollars" else "tokens per character of the mix"
        return Chart(f"{prefix}answer-tokenizer", "Tokenizers ranked for the mix", ranking_chart(v.choice, colours, unit),
                     "Best on top; lines: 95 % bootstrap intervals.")
    if a.key == "cost" and v is not None and v.pivot is not None and order:
        return Chart(f"{prefix}answer-cost", "Premium per language", multiplier_chart(c, v.pivot, order, colours),
                     "Colours: the tokenizers of the ranking (at most 5); lines: 95 % intervals; dashed: parity.")
    if a.key == "switch" and c is not None:
        base = c["baseline"].drop_nulls()[0]
        others = [t for t in order if t != base] + [t for t in c["tokenizer"].unique(maintain_order=True).to_list()
                                                    if t != base and t not in order]
        return Chart(f"{prefix}answer-switch", "Tokens against the baseline",
                     multiplier_chart(c, None, others, colours, col="vs_baseline", lo="vs_baseline_ci_low",
                                      hi="vs_baseline_ci_high", xlabel=f"× {base}'s tokens, same texts"),
                     "Below the dashed line: fewer tokens than the baseline.")
    if a.key == "vocab" and extras.get("plan") is not None:
        return Chart(f"{prefix}answer-vocab", "Training FLOPs against vocabulary size",
                     plan_curves(extras["plan"], sec.get("sweep"), None, width=CARD_WIDTH),
                     "Shaded: within 1 % of the least; dashed: the answer; solid where the sweep measured.")
    return None


def _card(a: Answer) -> Markup:
    """An answer on the first screen: its question, one sentence, one chart, the details folded."""
    lead = a.lead if a.lead is not None else a.html
    more = h("<details><summary>details</summary><div>{}</div></details>", a.html) if a.lead is not None else ""
    fig = (h('<figure class="chart" data-chart="{}">{}<figcaption>{}</figcaption></figure>', a.chart.name,
             trusted(svg(a.chart.figure)), a.chart.caption) if a.chart is not None else "")
    return h('<div class="answer" data-answer="{}"><h3>{}</h3><div class="lead">{}</div>{}{}<a class="ev" href="#{}">'
             "evidence ↓</a></div>", a.key, a.question, lead, fig, more, a.evidence)


def section_answers(secs: list, extras: dict):
    """Per section (corpus): ``(section, id prefix, its extras, its verdict, its answers)`` — what
    the page lays out, and all the md/json formats need (no chart drawn)."""
    for i, sec in enumerate(secs):
        prefix = f"s{i + 1}-" if len(secs) > 1 else ""
        ex = extras if len(secs) == 1 else {k: v for k, v in extras.items() if k in ("mix", "model")}
        c = sec.get("compare")
        v = verdict(c, ex.get("mix"), sec.get("cost")) if c is not None and c.height else None   # answers and evidence
        yield sec, prefix, ex, v, answers(sec, ex, prefix, v)


def render(results: dict, title: str, extras: dict | None = None) -> tuple[str, list[Chart], list[Answer]]:
    """``(html, charts, answers)`` for ``results`` (kind -> table) and ``extras`` (plan, mix, views, …)."""
    from .read import sections

    extras = extras or {}
    secs = sections(results)
    figs: list[Chart] = []
    from .text import context

    ctx = context(results, extras)
    head = [h('<h1>{}</h1><p class="context">{}</p><p class="note">tokstat {}. Answers first; each links to its '
              'evidence below (folded: open it, or filter its tables).</p><div class="filter"><label>Filter the '
              'tables by language or tokenizer: <input id="filter" type="search" placeholder="e.g. zh or o200k">'
              '</label></div>', title, " · ".join(f"{k}: {v}" for k, v in ctx.items()), __version__)]
    body, all_answers = [], []
    for sec, prefix, ex, v, ans in section_answers(secs, extras):
        c = sec.get("compare")
        all_answers.extend(ans)
        block = []
        if len(secs) > 1:
            block.append(h('<h2 id="{}corpus">Corpus {}</h2><p class="note">This report holds several corpora; each '
                           "has its own answers and evidence, never merged.</p>", prefix, sec.corpus or "?"))
        if ans:
            colours = _colours(c, v)
            for a in ans:
                a.chart = _answer_chart(a, sec, ex, v, prefix, colours)
                if a.chart is not None:
                    figs.append(a.chart)
            block.append(h('<section class="answers">{}</section>', join("", [_card(a) for a in ans])))
        asm = assumptions(sec, ex)
        if asm:
            block.append(h('<h3 id="{}assumptions">Assumptions</h3><dl class="assume">{}</dl>', prefix,
                           join("", [h("<dt>{}</dt><dd>{}</dd>", k, v) for k, v in asm])))
        block.append(h('<details class="evidence" id="{}evidence"><summary>Evidence: every table and chart behind '
                       "the answers</summary>{}</details>", prefix, section(sec, ex, prefix, figs, v)))
        body.append(join("", block))
    body.append(_vocabularies(results.get("inventory"), results.get("overlap"), figs))
    sigs = []
    for df in results.values():
        if isinstance(df, pl.DataFrame) and "signature" in df.columns:
            sigs.extend(s for s in df["signature"].to_list() if s)
    if sigs:
        uniq = list(dict.fromkeys(sigs))
        body.append(h('<h2 id="signatures">Signatures</h2><details><summary>{} signature(s): corpus hash, tokenizer '
                      "id and hash, library, word segmenter, normalisation, tokstat version</summary>{}</details>",
                      len(uniq), join("", [h('<div class="sig">{}</div>', s) for s in uniq])))
    page = h('<!doctype html><html lang="en"><head><meta charset="utf-8">'
             '<meta name="viewport" content="width=device-width,initial-scale=1">'
             "<title>{}</title><style>{}</style></head><body><main>{}</main>{}</body></html>\n",
             title, Markup(CSS), join("", head + body), SORT_JS)
    return str(page), figs, all_answers


__all__ = ["render", "table", "section", "section_answers"]
