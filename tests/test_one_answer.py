"""One question, one answer: compare --mix, cost and the report name the same tokenizer for the same
inputs (a close race; a race with a tokenizer that loses text), the runner-up's difference carries a
paired interval, and every ×pivot says what it holds equal."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tokstat import compare, gpu, preset, project
from tokstat.cli import main
from tokstat.cost.choice import choose, replicates
from tokstat.mix import Mix
from tokstat.report import report

from conftest import ROOT
from tok_fixtures import sample_bpe

SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")
MIX = "zh=0.3,en=0.7"


def answer_of(page: Path) -> str:
    import html

    s = page.read_text(encoding="utf-8")
    m = re.search(r'data-answer="tokenizer"><h3>.*?</h3><div class="lead">.*?</div>.*?<details><summary>details</summary>'
                  r'<div>(.*?)</div></details>', s, re.S)
    return html.unescape(re.sub("<[^>]+>", "", m.group(1)))


def said(out: str, prefix: str) -> str:
    flat = " ".join(out.split())
    m = re.search(re.escape(prefix) + r" (\S+?):", flat)
    assert m, flat[-600:]
    return m.group(1)


@pytest.fixture(scope="module")
def toks(tmp_path_factory) -> dict[str, str]:
    """Two close byte-level BPEs (1,000 and 1,100 merges), the first copied under a second name (an
    exact tie), and one that deletes every non-ASCII character (it loses text; looks cheapest)."""
    d = tmp_path_factory.mktemp("toks")
    out = {name: sample_bpe(d, name, size, drop_non_ascii=drop)
           for name, size, drop in (("small", 1000, False), ("big", 1100, False), ("drop", 400, True))}
    (d / "twin").mkdir()
    shutil.copy(d / "small" / "tokenizer.json", d / "twin" / "tokenizer.json")
    out["twin"] = f"hf:{d / 'twin' / 'tokenizer.json'}"
    return out


def test_without_a_model_compare_and_the_report_give_one_answer(toks, tmp_path, capsys):
    specs = [toks["small"], toks["big"], toks["drop"]]
    res = tmp_path / "c.parquet"
    assert main(["compare", SAMPLE, *sum((["-t", s] for s in specs), []), "--mix", MIX, "--out", str(res)]) in (0, None)
    from_compare = said(capsys.readouterr().out, "fewest tokens for this mix:")
    c = pl.read_parquet(res)
    ch = choose(c, Mix({"zh": 0.3, "en": 0.7}))
    assert ch.criterion == "tokens" and ch.best == from_compare
    assert "hf/drop" in ch.excluded and "hf/drop" not in ch.scores       # the cheapest-looking one is out
    page = report({"compare": c}, tmp_path / "r.html", mix=Mix({"zh": 0.3, "en": 0.7}))
    assert answer_of(page).startswith(f"{from_compare}:")


def test_with_a_model_cost_and_the_report_give_one_answer_and_the_report_uses_the_costs_mix(toks, tmp_path, capsys):
    specs = [toks["small"], toks["big"], toks["drop"]]
    res, costs = tmp_path / "c.parquet", tmp_path / "k.parquet"
    compare(SAMPLE, specs, workers=1, n_boot=200).write_parquet(res)
    assert main(["cost", "--results", str(res), "--model", "llama2-7b", "--gpu", "h100-sxm", "--mix", MIX,
                 "--out", str(costs)]) in (0, None)
    out = capsys.readouterr().out
    from_cost = re.search(r"cheapest to train[^:]*?: (\S+?):", " ".join(out.split())).group(1)
    k = pl.read_parquet(costs)
    assert k["mix_spec"].drop_nulls().unique().to_list() == ["content:zh=0.3,en=0.7"]
    ticked = k.filter((pl.col("language") == "mix") & pl.col("recommended"))["tokenizer"].to_list()
    assert ticked == [from_cost]                                          # the cost table's tick on the mix row
    assert "hf/drop ⚠" in " ".join(out.split())                            # lossy rows marked inline
    assert main(["report", str(res), str(costs), "--out", str(tmp_path / "r.html")]) in (0, None)
    text = answer_of(tmp_path / "r.html")
    assert text.startswith(f"{from_cost}: the lowest training cost for this mix")
    assert "the mix the cost rows carry" in text and "zh 30%" in text
    ch = choose(pl.read_parquet(res), None, k)
    assert ch.criterion == "dollars" and ch.best == from_cost and ch.mix.shares == {"zh": 0.3, "en": 0.7}


def test_an_exact_tie_is_no_meaningful_difference(toks):
    c = compare(SAMPLE, [toks["small"], toks["twin"]], workers=1, n_boot=200)
    ch = choose(c)
    assert ch.diff == 0 and ch.diff_low == 0 and ch.diff_high == 0 and ch.meaningful is False
    assert "no meaningful difference" in ch.sentence()


def test_the_difference_interval_is_paired(toks):
    """Paired replicates (the same draw of segments for both tokenizers) give a narrower interval on
    the difference than the same replicates unpaired, and the point difference lies inside."""
    c = compare(SAMPLE, [toks["small"], toks["big"]], workers=1, n_boot=200)
    ch = choose(c)
    assert ch.diff_low <= ch.diff <= ch.diff_high
    a, b = ch.best, ch.runner_up
    w = ch.weights

    def reps(t):
        g = {r["language"]: replicates(r["tokens_per_char_boot"]) for r in c.filter(pl.col("tokenizer") == t).iter_rows(named=True)}
        return sum(v * g[lang] for lang, v in w.items())
    ra, rb = reps(a), reps(b)
    unpaired = np.quantile(np.roll(rb, 97) / ra - 1, [0.025, 0.975])
    assert (ch.diff_high - ch.diff_low) < 0.5 * (unpaired[1] - unpaired[0])
    same = np.quantile(rb / ra - 1, [0.025, 0.975])
    assert ch.diff_low == pytest.approx(same[0]) or ch.criterion != "tokens"


def test_a_same_characters_ratio_is_never_called_same_content(toks, tmp_path, capsys):
    """--train-chars holds characters equal: its ×pivot is not the premium and says so, in the
    terminal header, the cost rows and the report."""
    res, costs = tmp_path / "c.parquet", tmp_path / "k.parquet"
    compare(SAMPLE, [toks["small"]], workers=1, n_boot=50).write_parquet(res)
    assert main(["cost", "--results", str(res), "--model", "llama2-7b", "--gpu", "h100-sxm", "--train-chars", "1e12",
                 "--out", str(costs)]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "×pivot (same characters)" in out and "not the same content" in out
    k = pl.read_parquet(costs)
    assert k["held_equal"].unique().to_list() == ["characters"]
    zh = k.filter(pl.col("language") == "zh").row(0, named=True)
    assert zh["cost_multiplier"] != pytest.approx(zh["premium"], rel=0.05)
    assert main(["report", str(res), str(costs), "--out", str(tmp_path / "r.html")]) in (0, None)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "The same number of characters in every language — not the same content" in page
    assert "training × pivot (same characters)" in page
    cost_answer = re.search(r'data-answer="cost"><h3>.*?</h3><div class="lead">.*?<details><summary>details</summary>'
                            r'<div>(.*?)</div></details>', page, re.S).group(1)
    assert "not the same content" in cost_answer
    k2 = project(pl.read_parquet(res), preset("llama2-7b"), gpu("h100-sxm"), tokens_per_param=20)
    assert k2["held_equal"].unique().to_list() == ["content"]
    z2 = k2.filter(pl.col("language") == "zh").row(0, named=True)
    assert z2["cost_multiplier"] == pytest.approx(z2["premium"], rel=1e-9)      # same content: the premium, priced


@pytest.mark.slow
def test_two_reasonable_grids_give_overlapping_vocabulary_intervals(shared, tmp_path):
    """The issue's case: PUD in six languages, swept at 4k–64k and at 4k–32k (the same sweep, fewer
    sizes: its values at the shared sizes are identical, so only the grid differs). The point answers
    differ by a quarter; their intervals, which carry the grid's jackknife, overlap and each holds the
    other's answer."""
    from tokstat import sweep
    from tokstat.vocabplan import plan_from

    mix = "zh=0.3,en=0.3,ja=0.1,ko=0.1,ar=0.1,hi=0.1"
    sw = sweep("ud-pud", "bpe", [4000, 8000, 16000, 32000, 64000], languages=["zh", "en", "ja", "ko", "ar", "hi"],
               mix=mix, progress=False)
    wide, _, _ = plan_from(sw, model=preset("llama2-7b"), mix=mix)
    narrow, _, _ = plan_from(sw.filter(pl.col("requested_size") <= 32000), model=preset("llama2-7b"), mix=mix)
    assert abs(wide.recommended_vocab_size - narrow.recommended_vocab_size) > 0.1 * narrow.recommended_vocab_size
    (a, b), (c, d) = wide.interval, narrow.interval
    assert max(a, c) <= min(b, d), (wide.interval, narrow.interval)
    assert a <= narrow.recommended_vocab_size <= b and c <= wide.recommended_vocab_size <= d
    assert "and the grid" in wide.interval_note


def _scaled(c: pl.DataFrame, tok: str, name: str, factor: float, vocab: int) -> pl.DataFrame:
    """``tok``'s rows as another tokenizer ``name`` with ``factor`` × its tokens (every replicate
    too) and a vocabulary of ``vocab`` entries: fewer tokens bought with a larger vocabulary."""
    from tokstat.metrics import replicates_text

    g = c.filter(pl.col("tokenizer") == tok)
    boot = [replicates_text(replicates(b) * factor) for b in g["tokens_per_char_boot"]]
    return g.with_columns(pl.lit(name).alias("tokenizer"), pl.lit(vocab, dtype=pl.Int64).alias("vocab_size"),
                          (pl.col("tokens_per_char") * factor).alias("tokens_per_char"),
                          pl.Series("tokens_per_char_boot", boot),
                          pl.col("signature").str.replace(tok.split("/")[-1], name.split("/")[-1], literal=True))


def test_when_fewest_tokens_and_cheapest_differ_every_output_names_both(toks, tmp_path, capsys):
    """A tokenizer with 2 % fewer tokens but a 600k-entry vocabulary (its unembedding costs far more
    per token): the token winner and the dollar winner differ, and compare, cost (terminal and
    table), the report's first screen and its details name both, each with its question, and why."""
    c = compare(SAMPLE, [toks["small"]], workers=1, n_boot=200)
    small = c["tokenizer"][0]
    both = pl.concat([c, _scaled(c, small, "hf/huge", 0.98, 600_000)])
    res, costs = tmp_path / "c.parquet", tmp_path / "k.parquet"
    both.write_parquet(res)
    assert main(["cost", "--results", str(res), "--model", "llama2-7b", "--gpu", "h100-sxm", "--gpus", "8", "--mix", MIX,
                 "--out", str(costs)]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "fewest tokens for this mix: hf/huge:" in out
    assert f"cheapest to train llama2-7b on it: {small}:" in out and f"cheapest to serve llama2-7b on it: {small}:" in out
    why = re.search(r"they differ because hf/huge's 600,000-entry vocabulary costs \+(\d+\.\d)% per token to train", out)
    assert why and float(why.group(1)) > 2.0, out
    assert out.index("fewest tokens for this mix") < out.index(" lang ")           # the answer before the table
    k = pl.read_parquet(costs).filter(pl.col("language") == "mix")
    ranks = {r["tokenizer"]: (r["mix_rank_tokens"], r["mix_rank_train"], r["mix_rank_serve"]) for r in k.iter_rows(named=True)}
    assert ranks == {"hf/huge": (1, 2, 2), small: (2, 1, 1)}
    # the dollar ranking is the dollars' order, the token ranking the tokens'
    d = {r["tokenizer"]: r for r in k.iter_rows(named=True)}
    assert d[small]["dollars"] < d["hf/huge"]["dollars"] and d[small]["usd_per_request"] < d["hf/huge"]["usd_per_request"]
    assert main(["report", str(res), str(costs), "--out", str(tmp_path / "r.html")]) in (0, None)
    import html

    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    lead = html.unescape(re.sub("<[^>]+>", "", re.search(r'data-answer="tokenizer"><h3>.*?</h3><div class="lead">(.*?)</div>',
                                                          page, re.S).group(1)))
    assert lead.startswith("Fewest tokens: hf/huge (") and f"Cheapest to train and serve llama2-7b: {small} (" in lead
    assert "hf/huge's vocabulary costs +" in lead and "95 % interval" in lead and len(lead.split()) <= 60
    assert "they differ because hf/huge's 600,000-entry vocabulary" in answer_of(tmp_path / "r.html").replace("They", "they")
    # the same answers as text a lead pastes: Markdown and JSON, by suffix or by --format
    import json

    assert main(["report", str(res), str(costs), "--out", str(tmp_path / "r.md")]) in (0, None)
    assert main(["report", str(res), str(costs), "--out", str(tmp_path / "answers.txt.json"), "--format", "json"]) in (0, None)
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert md.startswith("# tokstat report\n\ncorpus: ") and "mix: content zh 30% · en 70%" in md and "model: llama2-7b" in md
    assert f"**{lead}**" in md and "## Which tokenizer?" in md and "95 % interval" in md and "#premium" in md
    js = json.loads((tmp_path / "answers.txt.json").read_text(encoding="utf-8"))
    tok = next(a for a in js["answers"] if a["key"] == "tokenizer")
    assert tok["lead"] == lead and tok["decision"]["tokens"]["best"] == "hf/huge"
    assert tok["decision"]["train"]["best"] == small and tok["decision"]["serve"]["best"] == small
    assert tok["decision"]["tokens"]["runner_up_diff_low"] <= tok["decision"]["tokens"]["runner_up_diff"]
    assert "hf/huge's 600,000-entry vocabulary" in tok["decision"]["why_they_differ"]
    assert {a["key"] for a in js["answers"]} >= {"tokenizer", "cost", "vocab"} and js["context"]["model"] == "llama2-7b"
    assert main(["report", str(res), "--out", str(tmp_path / "x.md"), "--png", str(tmp_path / "png")]) == 2
    assert not (tmp_path / "x.md").exists() and not (tmp_path / "png").exists()


def test_compare_ranks_by_tokens_and_says_how_to_ask_for_dollars(toks, tmp_path, capsys):
    specs = [toks["small"], toks["big"]]
    assert main(["compare", SAMPLE, *sum((["-t", s] for s in specs), []), "--mix", MIX]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "fewest tokens for this mix:" in out and "which tokenizer" not in out
    assert "this ranks by tokens; a model pays more per token for a larger vocabulary" in out
    assert f"--mix {MIX} ranks by dollars" in out
