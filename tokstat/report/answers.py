"""The questions the page answers first, one sentence each, computed from the results.

Each :class:`Answer` carries the numbers its sentence states (``numbers``), so a test can check
them against the tables, and the id of the section holding its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from ..cost.choice import Choice, Decision, decide
from ..metrics import MAX_UNK, pivot_of, unreliable  # noqa: F401 - unreliable is part of this module's API
from ..errors import TokstatError
from ..fmt import fmt, money
from ..markup import Markup, h, join


@dataclass
class Answer:
    key: str
    question: Markup
    html: Markup                        # the full answer (under the card's "details")
    evidence: str                       # id of the element holding the evidence
    numbers: dict[str, float] = field(default_factory=dict)
    lead: Markup | None = None          # the one sentence on the first screen (≤ 40 words); None: ``html``
    chart: object | None = None         # the card's chart (a :class:`~.charts.Chart`)
    record: dict | None = None          # the answer as data (the tokenizer card: the Decision's record)


def words(m: Markup) -> int:
    """Words of a sentence as read (tags removed): what the first screen's 40-word bound counts.

    >>> words(Markup("<b>tiktoken/o200k_base</b>: 0.412 tokens per character."))
    6
    """
    import html as _html
    import re

    return len(_html.unescape(re.sub(r"<[^>]+>", " ", str(m))).split())


def _iv(lo, hi, fmt_: str = "{:.2f}") -> str:
    """An interval as the first screen states it: its level always named (one level per page: 95 %)."""
    return f" (95 % interval {fmt_.format(lo)}–{fmt_.format(hi)})" if lo is not None and hi is not None else ""


def _mix_words(rows: dict, mix, w: dict[str, float]) -> str:
    """The mix in words, as stated and converted (``content en 50% · zh 50% = characters en 75% ·
    zh 25% = …``), through the recommended tokenizer's premiums."""
    from ..mix import amounts_from_results, equal

    m = mix or equal(list(w))
    try:
        return m.conversion(amounts_from_results(list(rows.values())))
    except TokstatError:
        return "characters " + " · ".join(f"{k} {v:.0%}" for k, v in w.items())


@dataclass
class Verdict:
    """What the answers and the evidence of one comparison share, computed once: the pivot, the
    tokenizers that lose text (with why), the ranking of the others and the mix's weights — from
    the answers every command gives (:func:`tokstat.cost.choice.decide`)."""
    pivot: str | None
    decision: Decision

    @property
    def choice(self) -> Choice:
        """The ranking the page is ordered by: training dollars with cost rows, else tokens."""
        d = self.decision
        return d.train if d.train is not None and d.train.criterion == "dollars" else d.tokens

    @property
    def bad(self) -> dict[str, str]:
        return self.choice.excluded

    @property
    def weights(self) -> dict[str, float]:
        return self.choice.weights

    @property
    def rank(self) -> pl.DataFrame:
        return pl.DataFrame({"tokenizer": list(self.choice.scores), "score": list(self.choice.scores.values())},
                            schema={"tokenizer": pl.String, "score": pl.Float64})

    @property
    def best(self) -> str | None:
        return self.choice.best


def verdict(c: pl.DataFrame, mix, costs: pl.DataFrame | None = None) -> Verdict:
    return Verdict(pivot_of(c), decide(c, mix, costs))


def _lead(d: Decision) -> Markup:
    """The first screen's sentence of "which tokenizer?": each question with its winner, grouped
    where they agree, the 95 % interval labelled, and why the winners differ (≤ 60 words)."""
    cs = d.choices()
    groups: dict[str, list[str]] = {}
    for q, c in cs.items():
        groups.setdefault(c.best, []).append(q)
    parts = []
    for t, qs in groups.items():
        dollar = [q for q in qs if q != "tokens"]          # the verbs: "train", "serve"
        head = " and ".join((["fewest tokens"] if "tokens" in qs else [])
                            + ([f"cheapest to {' and '.join(dollar)} {d.model or 'the model'}"] if dollar else []))
        first = dollar[0] if dollar else "tokens"
        c = cs[first]
        lo, hi = c.intervals.get(t, (None, None))
        iv = ("" if lo is None else
              h(", 95 % interval {}–{}", money(lo), money(hi)) if c.criterion == "dollars" else
              h(", 95 % interval {:.3f}–{:.3f}", lo, hi))
        what = {"train": "to train", "serve": c.unit.replace(" of the mix", "")}.get(first, "tokens per character")
        nxt = (Markup("") if c.runner_up is None else
               h("; next {} {:+.1%}{}", c.runner_up, c.diff, "" if c.meaningful is None else
                 (", meaningful" if c.meaningful else ", not meaningful")))
        parts.append(h("{}: <b>{}</b> ({} {}{}{})", head[:1].upper() + head[1:], t, c.number(t), what, iv, nxt))
    lead = join(". ", parts) + Markup(".")
    a = d.tokens.best
    q = next((q for q, c in cs.items() if q != "tokens" and c.best != a), None) if a is not None else None
    if q is not None:
        pa, pb = d.per_token(a, q), d.per_token(cs[q].best, q)
        if pa and pb:
            lead += h(" {}'s vocabulary costs {:+.1%} per token.", a, pa / pb - 1)
    return lead


def _ci(r: dict) -> str:
    lo, hi = r.get("premium_ci_low"), r.get("premium_ci_high")
    return f" (95 % CI {lo:.2f}–{hi:.2f})" if lo is not None and hi is not None else ""


def answers(sec, extras: dict | None = None, prefix: str = "", v: Verdict | None = None) -> list[Answer]:
    """The answers for one section (:class:`~tokstat.report.read.Section`); ``extras``: the plan,
    the mix and the model from :func:`tokstat.study.study` or the report's options; ``v``: the
    section's :func:`verdict` (computed here when not given)."""
    extras = extras or {}
    out: list[Answer] = []
    c = sec.get("compare")
    best = None
    if c is not None and c.height:
        v = v or verdict(c, extras.get("mix"), sec.get("cost"))
        pivot, bad, rank, w, ch = v.pivot, v.bad, v.rank, v.weights, v.choice
        left = (Markup("") if not bad else
                h(" Not recommended, as they lose text: {}.", join("; ", [h("{} ({})", t, y) for t, y in bad.items()])))
        if rank.height:
            best = rank["tokenizer"][0]
            rows = {r["language"]: r for r in c.filter(pl.col("tokenizer") == best).iter_rows(named=True)}
            mixs = _mix_words(rows, ch.mix, w) + (" — the mix the cost rows carry" if ch.mix_source ==
                                                   "the cost rows' mix" else "")
            parts = [h("{:.2f}× the {} tokens in {}{}", rows[lang]["premium"], pivot, lang, _ci(rows[lang]))
                     for lang in rows if pivot is not None and lang != pivot and rows[lang]["premium"] is not None]
            what = (h("the lowest training cost for this mix ({} for the volume, {:.3f} tokens per character of the mix: {})",
                      money(ch.scores[best]), ch.tokens[best], mixs) if ch.criterion == "dollars" else
                    h("the fewest tokens for this mix ({:.3f} tokens per character of the mix: {})", rank["score"][0], mixs))
            text = h("<b>{}</b>: {}; {} — among {} reliable tokenizer(s){}.{}", best, what, ch.closeness(), rank.height,
                     h("; for the same content it needs {}", join("; ", parts)) if parts else "", left)
            nums = {f"premium:{lang}": rows[lang]["premium"] for lang in rows
                    if pivot is not None and lang != pivot and rows[lang]["premium"] is not None}
            dec = v.decision
            lead = _lead(dec)
            if not dec.agree:
                text += h(" {}", join(" ", [h("{}.", line[:1].upper() + line[1:]) for line in dec.lines()]))
            nums["score"] = ch.tokens[best]
            if ch.criterion == "dollars":
                nums["dollars"] = ch.scores[best]
            if ch.diff is not None:
                nums["runner_up_diff"] = ch.diff
            out.append(Answer("tokenizer", Markup("Which tokenizer?"), text, f"{prefix}premium", nums, lead=lead,
                              record=dec.record()))
        else:
            out.append(Answer("tokenizer", Markup("Which tokenizer?"),
                              Markup("None of the tokenizers compared is reliable on every language.") + left,
                              f"{prefix}table-compare"))
        k = sec.get("cost")
        if best is not None and pivot is not None:
            rows = {r["language"]: r for r in c.filter(pl.col("tokenizer") == best).iter_rows(named=True)}
            cost = ({r["language"]: r for r in k.filter(pl.col("tokenizer") == best).iter_rows(named=True)}
                    if k is not None else {})
            items, nums = [], {}
            for lang, r in rows.items():
                if lang == pivot or r["premium"] is None:
                    continue
                s = h("<li><b>{}</b>: {:.2f}× the tokens{}", lang, r["premium"], _ci(r))
                nums[f"premium:{lang}"] = r["premium"]
                kr, kp = cost.get(lang), cost.get(pivot)
                held = (kr or {}).get("held_equal") or "content"
                if kr is not None and kp is not None and held == "content":
                    s += h("; training {} vs {} ({:.2f}×)", money(kr["dollars"]), money(kp["dollars"]),
                           kr["cost_multiplier"])
                elif kr is not None and kp is not None:      # a volume of the same characters: another ratio, named
                    s += h("; training the same number of {} (not the same content): {} vs {} ({:.2f}× per {})", held,
                           money(kr["dollars"]), money(kp["dollars"]), kr["cost_multiplier"], held[:-1])
                if kr is not None and kp is not None:
                    nums[f"dollars:{lang}"] = kr["dollars"]
                    if kr.get("usd_per_request") is not None and kr.get("serving_multiplier") is not None:
                        s += h("; serving {} vs {} per 1,000 requests ({:.2f}×)", money(kr["usd_per_request"] * 1000),
                               money(kp["usd_per_request"] * 1000), kr["serving_multiplier"])
                        nums[f"serving_multiplier:{lang}"] = kr["serving_multiplier"]
                items.append(s + Markup("</li>"))
            if items:
                prem = sorted(((r["premium"], lang, r) for lang, r in rows.items()
                               if lang != pivot and r["premium"] is not None), key=lambda x: (-x[0], x[1]))
                p, worst_lang, wr = prem[0]
                over = sum(1 for x in prem if x[0] > 1.5)
                kb = k.filter(pl.col("tokenizer") == best) if k is not None and "train_fits" in k.columns else None
                r0 = kb.row(0, named=True) if kb is not None and kb.height and not (kb["train_fits"] == "fits").all() \
                    else None
                lead = h("With {}, <b>{}</b> pays most: {:.2f}×{} the {} tokens for the same content{}{}.", best,
                         worst_lang, p, _iv(wr.get("premium_ci_low"), wr.get("premium_ci_high")), pivot,
                         h("; {} of {} languages pay over 1.5×", over, len(prem)) if len(prem) > 1 else "",
                         h("; <b>training {} does not fit {}× {}</b> as priced", r0.get("model") or "the model",
                           r0.get("gpus") or "?", r0.get("gpu") or "the GPU") if r0 is not None else "")
                out.append(Answer("cost", h("What does each language cost against {}?", pivot),
                                  h("With {}, for the same content:<ul>{}</ul>", best, join("", items)),
                                  f"{prefix}cost" if cost else f"{prefix}premium", nums, lead=lead))
    if c is not None and c.height and "vs_baseline" in c.columns and c["vs_baseline"].drop_nulls().len():
        out.append(switch_answer(c, prefix, v))
    b = sec.get("budget")
    if b is not None and b.height:
        out.append(budget_answer(b, prefix))
    e = sec.get("extension")
    if e is not None and e.filter(pl.col("target")).height:
        out.append(extension_answer(e, prefix))
    plan = extras.get("plan")
    if plan is not None:
        out.append(vocab_answer(plan, extras.get("model") or "the model", prefix,
                                c if c is not None and c.height else None, v if best else None))
    return out


def switch_answer(c: pl.DataFrame, prefix: str = "", v: Verdict | None = None) -> Answer:
    """"What changes if we switch?" (``compare --baseline``): for the best-ranked other tokenizer,
    its tokens × the baseline's on the same texts, the languages that change least and most."""
    base = c["baseline"].drop_nulls()[0]
    ranked = [t for t in (list(v.choice.scores) if v is not None else []) if t != base]
    others = [t for t in c["tokenizer"].unique(maintain_order=True).to_list() if t != base]
    to = next((t for t in ranked if t in others), others[0] if others else base)
    g = c.filter((pl.col("tokenizer") == to) & pl.col("vs_baseline").is_not_null()).sort("vs_baseline")
    items = join("", [h("<li><b>{}</b>: {:.2f}×{} the tokens</li>", r["language"], r["vs_baseline"],
                        _iv(r.get("vs_baseline_ci_low"), r.get("vs_baseline_ci_high")))
                      for r in g.iter_rows(named=True)])
    nums = {f"vs_baseline:{r['language']}": r["vs_baseline"] for r in g.iter_rows(named=True)}
    if not g.height:
        return Answer("switch", h("What changes if we switch from {}?", base),
                      Markup("No ratio: the tokenizers were scored on different texts."), f"{prefix}table-compare")
    lo_r, hi_r = g.row(0, named=True), g.row(-1, named=True)
    lead = h("Switching {} → <b>{}</b>: tokens ×{:.2f}{} on {} to ×{:.2f}{} on {}, on the same texts.", base, to,
             lo_r["vs_baseline"], _iv(lo_r.get("vs_baseline_ci_low"), lo_r.get("vs_baseline_ci_high")),
             lo_r["language"], hi_r["vs_baseline"], _iv(hi_r.get("vs_baseline_ci_low"), hi_r.get("vs_baseline_ci_high")),
             hi_r["language"])
    return Answer("switch", h("What changes if we switch from {}?", base), h("With {}:<ul>{}</ul>", to, items),
                  f"{prefix}table-compare", nums, lead=lead)


def extension_answer(e: pl.DataFrame, prefix: str = "") -> Answer:
    """"Extend the tokenizer?": per target language, what each size saves (tokens, premium before →
    after with its interval) and the requests after which serving has paid for the continued
    pretraining."""
    from ..fmt import money, si

    t = e.filter(pl.col("target")).sort("language", "added")
    items, nums = [], {}
    for r in t.iter_rows(named=True):
        s = h("<li><b>{}</b> +{:,} tokens: {:.0%} fewer {} tokens", r["base"], r["added"], r["tokens_saved"] or 0.0,
              r["language"])
        if r.get("premium_before") is not None and r.get("premium_after") is not None:
            s += h(" (premium {:.2f}× → {:.2f}×{})", r["premium_before"], r["premium_after"],
                   h(" [{:.2f}–{:.2f}]", r["premium_after_ci_low"], r["premium_after_ci_high"])
                   if r.get("premium_after_ci_low") is not None else "")
        if r.get("adapt_usd") is not None:
            s += h("; {} new parameters, continued pretraining {}", si(float(r["new_params"])), money(r["adapt_usd"]))
            if r.get("break_even_requests") is not None:
                s += h(", paid back by serving after {} requests ({} saved per 1,000)", si(r["break_even_requests"]),
                       money(r["saving_usd_per_1k_requests"]))
            else:
                s += Markup(", never paid back by serving (nothing saved per request)")
        nums[f"tokens_saved:{r['language']}:{r['added']}"] = r["tokens_saved"]
        items.append(s + Markup("</li>"))
    return Answer("extend", Markup("Extend the tokenizer for a language?"), h("<ul>{}</ul>", join("", items)),
                  f"{prefix}extension", nums)


def budget_answer(b: pl.DataFrame, prefix: str = "") -> Answer:
    """"How many tokens is your data?": per tokenizer the total with its interval (or the exact
    count), and the language whose share of the tokens departs most from its share of the bytes."""
    from ..fmt import si

    from ..budget import TOTAL

    totals = {r["tokenizer"]: r for r in b.filter(pl.col("language") == TOTAL).iter_rows(named=True)}
    b = b.filter(pl.col("language") != TOTAL)
    parts, nums = [], {}
    for (tok,), g in b.group_by("tokenizer", maintain_order=True):
        exact = g["exact"].drop_nulls()
        t = totals.get(tok)
        if t is not None and exact.len() != g.height:         # the total's own interval (not a sum of bounds)
            iv = (h("95 % interval {}–{}", si(t["tokens_low"]), si(t["tokens_high"])) if t["tokens_low"] is not None
                  and t["tokens_low"] != t["tokens_high"] else "every cluster read: exact" if t["tokens_low"] is not None
                  else "no interval")
            parts.append(h("<b>{}</b> tokens with {} ({})", si(t["tokens"]), tok, iv))
            nums[f"tokens:{tok}"] = float(t["tokens"])
            continue
        if exact.len() == g.height:
            parts.append(h("<b>{}</b> tokens with {} (counted)", si(float(exact.sum())), tok))
            nums[f"tokens:{tok}"] = float(exact.sum())
        else:
            parts.append(h("<b>{}</b> tokens with {} (95 % interval {}–{})", si(g["tokens"].sum()), tok,
                           si(g["tokens_low"].sum()), si(g["tokens_high"].sum())))
            nums[f"tokens:{tok}"] = float(g["tokens"].sum())
    first = b.filter(pl.col("tokenizer") == b["tokenizer"][0])
    gap = first.with_columns((pl.col("token_share") - pl.col("byte_share")).abs().alias("_gap")).sort(
        "_gap", descending=True, nulls_last=True).row(0, named=True)
    nbytes = si(first["bytes"].sum())
    text = h("Your {}B of text is {}.", nbytes, join("; ", parts))
    if gap["token_share"] is not None and gap["byte_share"] is not None:
        text += h(" With {}, {} is {:.0%} of the tokens but {:.0%} of the bytes.", first["tokenizer"][0],
                  gap["language"], gap["token_share"], gap["byte_share"])
    text += h(" ({})", first["estimator"][0])
    return Answer("budget", Markup("How many tokens is your data?"), text, f"{prefix}budget", nums)


def vocab_answer(plan, model: str, prefix: str = "", c: pl.DataFrame | None = None, v: Verdict | None = None) -> Answer:
    """"Which vocabulary size?": one answer (the plan's, inside its flat region or with the reason it
    moved), its interval, whether the data supports it, and what it costs against the tokenizer the
    page recommends on the same mix."""
    per = join(", ", [h("{} {}{}", k, plan.size_text(k), " (extrapolated)" if plan.fit.get(k) and not (
        min(plan.fit[k]["swept_sizes"]) <= n <= max(plan.fit[k]["swept_sizes"])) else "")
        for k, n in plan.per_language.items()])
    nums = {"recommended_vocab_size": plan.recommended_vocab_size, "flat_low": plan.flat_region[0],
            "flat_high": plan.flat_region[1]}
    support = (h("; the data supports up to {:,}", plan.supported_up_to) if plan.supported_up_to is not None else
               Markup("; Tao et al.'s curve, no sweep of this corpus") if not plan.fit else Markup(""))
    lead = h("<b>{:,}</b> tokens for {}: training FLOPs within 1 % of the least from {:,} to {:,}{}.",
             plan.recommended_vocab_size, model, plan.flat_region[0], plan.flat_region[1], support)
    if plan.fit and getattr(plan, "no_answer", ""):
        return Answer("vocab", Markup("Which vocabulary size?"),
                      h("<b>No size</b> for {} on {}: {}. {}.", model, plan.mix_conversion or "this corpus",
                        plan.no_answer, plan.support_note), f"{prefix}vocabulary", nums,
                      lead=h("<b>No size</b> for {}: {}.", model, plan.no_answer))
    if plan.fit:
        text = h("<b>{}</b> tokens for {} on {} (training FLOPs for the same text within 1 % of the least from {:,} "
                 "to {:,}; per language: {}); fitted on the sweep, Tao et al.'s method.",
                 plan.answer_text(), model, plan.mix_conversion or "this corpus", plan.flat_region[0],
                 plan.flat_region[1], per)
    else:
        text = h("<b>{:,}</b> tokens for {} by Tao et al.'s English-centric curve (flat from {:,} to {:,}): "
                 "this report has no sweep of your corpus; add <code>--sweep bpe:8000,16000,32000,64000</code> for a "
                 "size fitted to your languages.", plan.recommended_vocab_size, model, plan.flat_region[0],
                 plan.flat_region[1])
    if plan.answer_reason:
        text += h(" Moved: {}.", plan.answer_reason)
    if plan.price_of_fairness:
        text += h(" The price of fairness: {}.", plan.price_of_fairness)
    if plan.interval:
        nums["interval_low"], nums["interval_high"] = plan.interval
    if plan.supported_up_to is not None and plan.recommended_vocab_size > plan.supported_up_to:
        text += h(" <b>More than the data supports</b>: {}.", plan.support_note)
    elif plan.support_note and plan.fit:
        text += h(" Data: {}.", plan.support_note)
    if c is not None and v is not None and v.best is not None and plan.fit:
        rows = {r["language"]: r for r in c.filter(pl.col("tokenizer") == v.best).iter_rows(named=True)}
        vt = next((r.get("vocab_size") for r in rows.values() if r.get("vocab_size")), None)
        w = {k: x for k, x in (plan.mix_chars or {}).items()}
        if vt and w and all(rows.get(k, {}).get("tokens_per_char") for k in w):
            if set(w) == set(v.weights) and v.best in v.choice.tokens:
                # one value per quantity: the mix in characters and the tokenizer's tokens per
                # character of it are the first card's; the plan's curves are weighted the same way
                w = dict(v.weights)
                theirs = v.choice.tokens[v.best]
                ours = float(plan.curve(w)(plan.recommended_vocab_size))
            else:
                theirs = sum(x * rows[k]["tokens_per_char"] for k, x in w.items()) / sum(w.values())
                ours = float(plan.curve()(plan.recommended_vocab_size))
            text += h(" Against <b>{}</b> ({:,} tokens), the tokenizer recommended above: on this mix it spends "
                      "{:.3f} tokens per character, a {:,}-token BPE trained on this corpus {:.3f} (held-out, fitted): "
                      "{} {:.0%} {} tokens, with an embedding table {:.1f}× {}.", v.best, int(vt), theirs,
                      plan.recommended_vocab_size, ours, v.best, abs(1 - theirs / ours),
                      "fewer" if theirs < ours else "more", max(vt, plan.recommended_vocab_size)
                      / min(vt, plan.recommended_vocab_size), "as large" if vt >= plan.recommended_vocab_size
                      else "smaller")
            nums["tokenizer_tpc"], nums["plan_tpc"] = theirs, ours
    return Answer("vocab", Markup("Which vocabulary size?"), text, f"{prefix}vocabulary", nums, lead=lead)


def assumptions(sec, extras: dict | None = None) -> list[tuple[str, Markup]]:
    """``(label, text)`` pairs: what the numbers assume (the text escaped by construction)."""
    extras = extras or {}
    out: list[tuple[str, str]] = []
    c = sec.get("compare") if sec.get("compare") is not None else sec.get("sweep")
    if c is not None:
        sigs = [s for s in c["signature"].to_list() if s] if "signature" in c.columns else []
        norm = sorted({p.split(":", 1)[1] for s in sigs for p in s.split("|") if p.startswith("norm:")})
        words = sorted({p.split(":", 1)[1] for s in sigs for p in s.split("|") if p.startswith("words:")})
        scripts = sorted({p.split(":", 1)[1] for s in sigs for p in s.split("|") if p.startswith("script:")})
        segs = c["segments"].max() if "segments" in c.columns else None
        langs = list(map(str, c["language"].unique(maintain_order=True).to_list()))
        named = ", ".join(langs[:12]) + (f" and {len(langs) - 12} more" if len(langs) > 12 else "")
        out.append(("corpus", h("{}: {} segments, {} languages: {}{}{}{}", sec.corpus or "unnamed", fmt(segs),
                                len(langs), named,
                                f"; Chinese script {', '.join(scripts)}" if scripts else "",
                                f"; normalisation {', '.join(norm)}" if norm else "",
                                f"; words by {', '.join(words)}" if words else "")))
        out.append(("counts", Markup("tokens exclude special tokens; the premium is tokens for the same parallel text "
                              "relative to the pivot, a ratio of sums (Petrov et al. 2023) with a 95 % bootstrap "
                              "interval over segments; the mean of per-segment ratios (TokSuite) is in the full table")))
    k = sec.get("cost") if sec.get("cost") is not None else sec.get("sweep_cost")
    if k is not None and k.height:
        r = k.row(0, named=True)
        if r.get("model"):
            out.append(("model", h("{}, vocabulary: {}", r["model"], r["vocab_source"])))
        if r.get("gpu"):
            out.append(("hardware", h("{}× {}, MFU {:.1%} ({}), {}", r.get("gpus") or 1, r["gpu"], r["mfu"],
                                      r["mfu_source"], r["train_precision"])))
        out.append(("price", h("{} per GPU-hour ({})", money(r["price_usd_h"]), r["price_source"])))
        out.append(("training volume", h("{}", r["volume"])))
        if r.get("seq_len"):
            out.append(("training sequences", h("{:,} tokens (compute and memory are priced at this length)", int(r["seq_len"]))))
        if r.get("prompt_chars") is not None:
            out.append(("request", h("{:,.0f} characters in, {:,.0f} out, of pivot-language content (the same "
                                     "content in every language)", r["prompt_chars"], r["output_chars"])))
    plan = extras.get("plan")
    if plan is not None:
        out.append(("vocabulary plan", join("; ", plan.assumptions)))
    return out
