"""tokstat vocab-plan: Tao et al. 2024's predictions reproduced, the fitted curve checked on held-out
sweep points, the curve's effect on the answer (a language whose tokens fall faster with V gets a
larger vocabulary), and the command's outputs."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import TokstatError
from tokstat.cli import main
from tokstat.cost.model import non_embedding_params, preset
from tokstat.vocabplan import (TAO_ABC, Curve, approach1, approach2, approach3, fit_curve, flops_optimal_v, mix_curve,
                               plan_from, script_of, tao_d, vocab_plan)

SAMPLE = "sample"


def plan_for(name, sweep=None, **kw):
    m = preset(name)
    return vocab_plan(sweep, n_nv=non_embedding_params(m), d_model=m.d_model, **kw)


def test_tao_et_al_published_predictions_are_reproduced():
    """Llama-2-70B should have "at least 216K" (their Figure 1); a 7B model 55-67K across the three
    approaches (optimal_Nv_predict.py); solving dF/dV = 0 directly with their f gives ~89K and ~164K."""
    p70 = plan_for("llama2-70b")
    assert p70.recommended_vocab_size == pytest.approx(216_000, rel=0.02)
    p7 = plan_for("llama2-7b")
    assert all(55_000 <= v <= 68_000 for v in p7.approaches.values()), p7.approaches
    tao = Curve(*TAO_ABC)
    assert flops_optimal_v(tao, non_embedding_params(preset("llama2-7b")), 4096) == pytest.approx(89_000, rel=0.02)
    assert flops_optimal_v(tao, non_embedding_params(preset("llama2-70b")), 8192) == pytest.approx(164_000, rel=0.03)
    # their optimal_Nv_predict.py for Nnv = 7e9 (d = 4096), vocabulary parameters
    assert approach2(7e9, tao_d(7e9)) * tao_d(7e9) == pytest.approx(3145728 * (7e9 / 33e6) ** 0.8353974035228025)
    assert approach1(7e9, 4096) == pytest.approx(62_281, rel=1e-3) and approach3(7e9, 4096) == pytest.approx(60_000, rel=0.02)
    assert any("no corpus" in a for a in p7.assumptions)


@pytest.fixture(scope="module")
def tatoeba_sweep(tmp_path_factory):
    from pathlib import Path

    from conftest import SHARED

    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    from tokstat.sweep import sweep

    return sweep(str(Path(SHARED) / "corpora/tatoeba-cmn-eng/cmn.txt"), "bpe", [2000, 4000, 8000, 16000, 32000],
                 mix={"zh": 0.5, "en": 0.5}, n_boot=0)


@pytest.mark.slow
@pytest.mark.shared
def test_the_fit_predicts_held_out_sweep_points_within_three_percent(tatoeba_sweep):
    """Each inner size left out of the fit is predicted within 3 % (measured: at most 1.9 %);
    extrapolation past the swept range is worse, which is why the plan flags it."""
    for lang in ("en", "zh"):
        d = tatoeba_sweep.filter(pl.col("language") == lang).sort("vocab_size")
        v, y = d["vocab_size"].to_list(), d["tokens_per_char"].to_list()
        for k in range(1, len(v) - 1):
            f = fit_curve(v[:k] + v[k + 1:], y[:k] + y[k + 1:])
            assert abs(f(v[k]) / y[k] - 1) < 0.03, (lang, v[k])
        assert fit_curve(v, y).r2 > 0.99


@pytest.mark.slow
@pytest.mark.shared
def test_a_real_mix_gets_a_different_size_for_en_zh_and_both(tatoeba_sweep):
    sizes = {k: plan_for("llama2-7b", tatoeba_sweep, mix=mix).recommended_vocab_size
             for k, mix in {"en": {"en": 1}, "zh": {"zh": 1}, "mix": {"en": 0.5, "zh": 0.5}}.items()}
    assert sizes["en"] < sizes["mix"] < sizes["zh"], sizes


@settings(max_examples=60, deadline=None)
@given(a=st.floats(-0.05, 0.05), b=st.floats(-0.5, 0.1), c=st.floats(0.5, 3))
def test_the_curve_never_rises_with_the_vocabulary(a, b, c):
    grid = np.geomspace(500, 2_000_000, 400)
    y = Curve(a, b, c)(grid)
    assert np.all(np.diff(y) <= 1e-9)


@settings(max_examples=40, deadline=None)
@given(steep=st.floats(1.05, 2.0), n_nv=st.floats(1e8, 1e11))
def test_a_language_whose_tokens_fall_faster_gets_a_larger_vocabulary(steep, n_nv):
    """All else equal (the same tokens per character at V = 32k and the same floor), a curve
    falling ``steep`` times as fast with V moves dF/dV = 0 to a larger V: d·f + (N_nv + V·d)·f′ = 0
    with a more negative f′."""
    base = Curve(*TAO_ABC)
    lv = math.log(32_000)
    a2, b2 = base.a * steep, base.b * steep
    fast = Curve(a2, b2, float(base(32_000)) - a2 * lv ** 2 - b2 * lv)
    assert float(fast(fast.v_floor)) > 0
    assert flops_optimal_v(fast, n_nv, tao_d(n_nv)) > flops_optimal_v(base, n_nv, tao_d(n_nv))


def synthetic_sweep(steep: float = 1.6, level: float = 2.3) -> pl.DataFrame:
    """English on Tao's curve; Chinese ``level`` times as many tokens per character and falling
    ``steep`` times as fast *relative to its level* (what moves the optimum: f′/f)."""
    sizes = [2000, 4000, 8000, 16000, 32000]
    en = Curve(*TAO_ABC)
    lv = math.log(32_000)
    a2, b2 = en.a * steep, en.b * steep
    zh = Curve(a2, b2, float(en(32_000)) - a2 * lv ** 2 - b2 * lv)
    rows = [{"vocab_size": v, "language": "en", "tokens_per_char": en(v), "premium": 1.0} for v in sizes]
    rows += [{"vocab_size": v, "language": "zh", "tokens_per_char": level * zh(v), "premium": 0.9} for v in sizes]
    return pl.DataFrame(rows)


def test_mix_curve_is_the_weighted_sum_and_the_plan_orders_languages():
    sw = synthetic_sweep()
    cur = {lang: fit_curve(sw.filter(pl.col("language") == lang)["vocab_size"],
                           sw.filter(pl.col("language") == lang)["tokens_per_char"]) for lang in ("en", "zh")}
    m = mix_curve(cur, {"en": 0.25, "zh": 0.75})
    for v in (3000, 20000):
        assert m(v) == pytest.approx(0.25 * cur["en"](v) + 0.75 * cur["zh"](v))
    p = plan_for("llama2-7b", sw, mix={"en": 0.5, "zh": 0.5}, max_premium=1.05)
    assert p.per_language["zh"] > p.per_language["en"]
    assert p.per_language["en"] <= p.recommended_vocab_size <= p.per_language["zh"]
    assert p.recommended_vocab_size % 128 == 0 and p.flat_region[0] <= p.flat_region[1]
    with pytest.raises(TokstatError, match="at least 1"):   # the pivot's own premium is 1: a bound below never holds
        plan_for("llama2-7b", sw, max_premium=0.95)
    assert plan_for("llama2-7b", sw, max_premium=1.0).fairness["smallest_fair_size"] == 2000


@pytest.mark.parametrize("kw,msg", [({"mix": {"fr": 1.0}}, "not in the sweep"),
                                    ({"languages": ["de"]}, "language 'de' is not in the sweep")])
def test_bad_plans(kw, msg):
    with pytest.raises(TokstatError, match=msg):
        plan_for("llama2-7b", synthetic_sweep(), **kw)


@pytest.mark.parametrize("sizes", [[1000, 2000], [1000, 2000, 4000], [1000, 2000, 2000, 4000, 4000]])
def test_fewer_than_four_distinct_sizes_cannot_be_fitted(sizes):
    """Three parameters through three points always give R² = 1: refused, with the sizes named."""
    with pytest.raises(TokstatError, match="at least 4 distinct vocabulary sizes"):
        fit_curve(sizes, [0.5 - 0.01 * k for k in range(len(sizes))])


USED = np.geomspace(100, 1e8, 600)     # every size a fitted curve is evaluated at (plots, grids, searches)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0.01, 3.0), min_size=4, max_size=7), st.integers(0, 3))
def test_fitted_curves_are_never_negative_nor_rising(ys, start):
    """Whatever the swept points (noisy, concave, rising), the fitted curve is >= 0 and
    non-increasing everywhere it is used, and so is any mix of such curves."""
    sizes = [1000 * 2 ** (start + k) for k in range(len(ys))]
    c = fit_curve(sizes, ys)
    y = c(USED)
    assert np.all(y >= 0) and np.all(np.diff(y) <= 1e-12)
    other = fit_curve(sizes, sorted(ys, reverse=True))
    m = mix_curve({"a": c, "b": other}, {"a": 0.3, "b": 0.7})
    ym = m(USED)
    assert np.all(ym >= 0) and np.all(np.diff(ym) <= 1e-12)
    assert m(20_000) == pytest.approx(0.3 * c(20_000) + 0.7 * other(20_000))


def test_where_the_plain_fit_is_admissible_it_is_the_least_squares_quadratic():
    """Oracle: numpy's unconstrained quadratic in ln V, when it is already non-negative and
    non-increasing over the used range; otherwise the constrained fit is never better than it
    (it is the least squares under the constraints)."""
    v = [2000, 4000, 8000, 16000, 32000]
    y = [0.52, 0.41, 0.33, 0.28, 0.255]
    a, b, c = np.polyfit(np.log(v), y, 2)
    f = fit_curve(v, y)
    assert (f.a, f.b, f.c) == pytest.approx((a, b, c))
    steep = [0.9, 0.8, 0.65, 0.45, 0.2]      # concave in ln V: the plain quadratic goes negative by 500k
    a, b, c = np.polyfit(np.log(v), steep, 2)
    assert a * np.log(5e5) ** 2 + b * np.log(5e5) + c < 0
    g = fit_curve(v, steep)
    sse_plain = sum((a * np.log(x) ** 2 + b * np.log(x) + c - t) ** 2 for x, t in zip(v, steep))
    sse = sum((g(x) - t) ** 2 for x, t in zip(v, steep))
    assert sse >= sse_plain - 1e-12 and g(5e5) >= 0


def _sweep_rows(curves: dict, sizes, premium=None, merges=None, boot=None):
    rows = []
    for lang, f in curves.items():
        for k, v in enumerate(sizes):
            r = {"vocab_size": v, "language": lang, "tokens_per_char": float(f(v)),
                 "premium": (premium or {}).get(lang, 1.0)}
            if merges is not None:
                r["new_merge_count"] = merges[k]
            if boot is not None:
                r["tokens_per_char_boot"] = [float(f(v)) * x for x in boot]
            rows.append(r)
    return pl.DataFrame(rows)


@settings(max_examples=40, deadline=None)
@given(steep=st.floats(0.3, 3.0), level=st.floats(0.5, 4.0), n_nv=st.floats(1e8, 2e11), share=st.floats(0.05, 0.95))
def test_the_answer_lies_in_its_flat_region_or_says_why(steep, level, n_nv, share):
    en = Curve(*TAO_ABC)
    lv = math.log(32_000)
    zh = Curve(en.a * steep, en.b * steep, float(en(32_000)) - en.a * steep * lv ** 2 - en.b * steep * lv)
    sw = _sweep_rows({"en": en, "zh": lambda v: level * zh(v)}, [2000, 4000, 8000, 16000, 32000, 64000],
                     premium={"zh": 0.9})
    p = vocab_plan(sw, n_nv=n_nv, d_model=int(tao_d(n_nv)), mix={"en": 1 - share, "zh": share})
    assert p.flat_region[0] <= p.recommended_vocab_size <= p.flat_region[1]
    assert (p.answer_reason is None) == (p.recommended_vocab_size == p.approaches_median)
    if p.answer_reason:
        assert not p.flat_region[0] <= p.approaches_median <= p.flat_region[1]
        assert f"{p.approaches_median:,}" in p.answer_reason


def test_a_clamped_answer_names_the_median_it_moved_from():
    """A model far larger than the data's curve wants: the median of the approaches falls outside
    the flat region, the answer is its nearest edge and the plan says so."""
    flat = lambda v: 0.3 + 0.0 * v   # noqa: E731   no gain from a larger vocabulary: FLOPs least at the smallest V
    sw = _sweep_rows({"en": flat, "zh": lambda v: 0.9 + 0.0 * v}, [2000, 4000, 8000, 16000])
    p = vocab_plan(sw, n_nv=6.5e10, d_model=8192)
    assert p.answer_reason and p.recommended_vocab_size in p.flat_region
    assert p.recommended_vocab_size != p.approaches_median


def test_the_data_sufficiency_diagnostic_marks_an_answer_it_cannot_support():
    en = Curve(*TAO_ABC)
    sizes = [8000, 16000, 32000, 64000, 128000]
    poor = vocab_plan(_sweep_rows({"en": en}, sizes, merges=[40, 12, 6, 2, 1]), n_nv=6.5e9, d_model=4096)
    assert poor.supported_up_to == 16000 and "at 32,000 they occur 6 times" in poor.support_note
    assert poor.recommended_vocab_size > 16000 and "above what the data supports" in poor.marks
    assert "above what the data supports" in poor.answer_text()
    rich = vocab_plan(_sweep_rows({"en": en}, sizes, merges=[4000, 2000, 900, 400, 150]), n_nv=6.5e9, d_model=4096)
    assert rich.supported_up_to == 128000 and not rich.marks and "every swept size" in rich.support_note
    none = vocab_plan(_sweep_rows({"en": en}, sizes), n_nv=6.5e9, d_model=4096)
    assert none.supported_up_to is None and "not measured" in none.support_note
    # beyond the text: the title line says so and gives the supported answer beside it
    assert poor.supported_vocab_size == 16000 and rich.supported_vocab_size == rich.recommended_vocab_size
    assert poor.answer_text().endswith("— beyond the text: it supports up to 16,000, the answer on it")
    assert "beyond the text" not in rich.answer_text() and poor.to_dict()["supported_vocab_size"] == 16000


def test_no_answer_means_no_number_in_any_output(tmp_path, capsys):
    """The text supports none of the swept sizes: the JSON holds no size that reads as an answer, the
    terminal never names a recommendation, and no command to train one."""
    en = Curve(*TAO_ABC)
    sw = _sweep_rows({"en": en}, [8000, 16000, 32000, 64000, 128000], merges=[3, 2, 1, 1, 1])
    p = vocab_plan(sw, n_nv=6.5e9, d_model=4096)
    assert p.no_answer
    d = p.to_dict()
    assert d["recommended_vocab_size"] is None and d["interval"] is None and d["training_command"] == ""
    assert d["supported_vocab_size"] is None and set(d["approaches"].values()) == {None}
    assert not any("recommendation" in w for w in d["warnings"]) and not d["marks"]
    path = tmp_path / "sw.parquet"
    sw.write_parquet(path)
    assert main(["vocab-plan", "--sweep", str(path), "--model", "llama2-7b", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["recommended_vocab_size"] is None and js["no_answer"]
    assert main(["vocab-plan", "--sweep", str(path), "--model", "llama2-7b"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert "recommended vocabulary none" in flat and "the recommendation" not in flat and "to train it" not in flat


def test_what_is_not_a_sweep_is_refused(tmp_path):
    """A compare output of unrelated tokenizers has sizes but no curve through them; two algorithms
    in one table are two curves."""
    en = Curve(*TAO_ABC)
    sizes = [2000, 4000, 8000, 16000]
    sw = _sweep_rows({"en": en}, sizes)
    ids = ["tiktoken/cl100k_base", "hf/qwen3", "tiktoken/o200k_base", "hf/deepseek-v3"]
    with pytest.raises(TokstatError, match="not a sweep: 4 of its tokenizers were not trained by tokstat sweep"):
        vocab_plan(sw.with_columns(pl.Series("tokenizer", ids)), n_nv=6.5e9, d_model=4096)
    two = sw.with_columns(pl.Series("tokenizer", [f"train/{a}-{v}" for a, v in zip(["bpe", "bpe", "unigram", "unigram"], sizes)]))
    with pytest.raises(TokstatError, match=r"not one sweep: it holds trainings of 2 algorithms \(bpe, unigram\)"):
        vocab_plan(two, n_nv=6.5e9, d_model=4096)
    ok = sw.with_columns(pl.Series("tokenizer", [f"train/bpe-{v}" for v in sizes]))
    assert vocab_plan(ok, n_nv=6.5e9, d_model=4096).recommended_vocab_size > 0


def test_a_fit_that_explains_nothing_is_refused_and_a_flat_one_is_not():
    sizes = [2000, 4000, 8000, 16000, 32000]
    noisy = pl.DataFrame({"vocab_size": sizes, "language": ["en"] * 5, "tokens_per_char": [0.30, 0.21, 0.33, 0.20, 0.31],
                          "premium": [1.0] * 5})
    with pytest.raises(TokstatError, match=r"the curve of en explains 0% of .* \(R² -?0\.\d+ < 0\.5; the points move by 6\d%\)"):
        vocab_plan(noisy, n_nv=6.5e9, d_model=4096)
    flat = noisy.with_columns(pl.Series("tokens_per_char", [0.2500, 0.2503, 0.2499, 0.2502, 0.2500]))
    assert vocab_plan(flat, n_nv=6.5e9, d_model=4096).fit["en"]["r2"] < 0.5      # barely moves: planned, not refused


def test_the_interval_comes_from_refitting_bootstrap_replicates():
    """Oracle: replicates equal to the point values give a zero-width interval at the answer;
    replicates that scale one language's curve move it, and the interval covers the answer."""
    en, zh = Curve(*TAO_ABC), Curve(0.009, -0.22, 1.85)
    sizes = [2000, 4000, 8000, 16000, 32000]
    same = vocab_plan(_sweep_rows({"en": en, "zh": zh}, sizes, boot=[1.0] * 20), n_nv=6.5e9, d_model=4096)
    assert same.interval == (same.recommended_vocab_size, same.recommended_vocab_size)
    rng = np.random.default_rng(0)
    rows = []
    noise = {(lang, v): rng.normal(1, 0.02, 50) for lang in ("en", "zh") for v in sizes}
    for lang, f in (("en", en), ("zh", zh)):
        for v in sizes:
            rows.append({"vocab_size": v, "language": lang, "tokens_per_char": float(f(v)), "premium": 1.0,
                         "tokens_per_char_boot": [float(f(v)) * x for x in noise[(lang, v)]]})
    p = vocab_plan(pl.DataFrame(rows), n_nv=6.5e9, d_model=4096)
    lo, hi = p.interval
    assert lo < hi and lo <= p.recommended_vocab_size <= hi and lo % 128 == 0
    assert "bootstrap" in p.interval_note
    bare = vocab_plan(_sweep_rows({"en": en, "zh": zh}, sizes), n_nv=6.5e9, d_model=4096)
    assert bare.interval is None and "no interval" in bare.interval_note


def test_the_plan_mix_is_content_converted_through_the_premiums():
    """One mix, one meaning: content shares become character shares through premium / tokens per
    character, and the same mix stated in characters gives the same plan."""
    from tokstat.mix import Mix

    en, zh = Curve(*TAO_ABC), Curve(0.009, -0.22, 1.85)
    sizes = [2000, 4000, 8000, 16000, 32000]
    sw = _sweep_rows({"en": en, "zh": zh}, sizes, premium={"zh": 1.4})
    p = vocab_plan(sw, n_nv=6.5e9, d_model=4096, mix={"en": 0.6, "zh": 0.4})
    c_en, c_zh = 1.0 / float(en(32000)), 1.4 / float(zh(32000))      # characters per unit of content
    want = 0.4 * c_zh / (0.4 * c_zh + 0.6 * c_en)
    assert p.mix_chars["zh"] == pytest.approx(want)
    assert p.mix_conversion.startswith("content en 60% · zh 40% = characters")
    q = vocab_plan(sw, n_nv=6.5e9, d_model=4096, mix=Mix(p.mix_chars, "chars"))
    assert q.recommended_vocab_size == p.recommended_vocab_size and q.mix_chars == pytest.approx(p.mix_chars)
    with pytest.raises(TokstatError, match="a mix in tokens cannot choose a vocabulary"):
        vocab_plan(sw, n_nv=6.5e9, d_model=4096, mix={"en": 0.5, "zh": 0.5}, mix_unit="tokens")


def test_an_optimum_past_the_search_is_shown_capped():
    """A curve still falling steeply at the largest sizes and a 100B model: the optimum lies past the
    1,000,000 searched; the size is shown as a bound, never as a plain number."""
    sw = _sweep_rows({"en": lambda v: max(1.5 - 0.1 * math.log(v / 1000), 0.01)}, [2000, 4000, 8000, 16000])
    p = vocab_plan(sw, n_nv=1e11, d_model=int(tao_d(1e11)))
    assert p.capped == ["en"] and p.size_text("en") == "≥ 999,936 (capped)"
    assert any("capped" in w for w in p.warnings)
    assert p.answer_text().startswith("≥ 999,936") and any(m.startswith("capped") for m in p.marks)
    modest = vocab_plan(sw, n_nv=1e10, d_model=int(tao_d(1e10)))
    assert not modest.capped and "≥" not in modest.answer_text()


def test_serving_aware_variant_uses_the_cost_model():
    sw = synthetic_sweep()
    m = preset("llama2-7b")
    p, _, _ = plan_from(sw, model=m, serve_chars=1e9)
    q, _, _ = plan_from(sw, model=m, serve_chars=1e14)
    assert p.serving["total_usd"] < q.serving["total_usd"]
    assert p.serving["recommended_vocab_size"] % 128 == 0
    assert p.serving["training_only_optimum"] == q.serving["training_only_optimum"]


def test_script_of():
    assert [script_of(t) for t in ("ab", "中", "\ufffd", " ")] == ["Latin", "Han", "bytes", "punctuation/space"]


@pytest.mark.slow
def test_plan_from_a_corpus_reports_the_allocation_and_the_cli_writes_its_outputs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["vocab-plan", "--corpus", SAMPLE, "--sizes", "1000,2000,4000,8000", "--model", "llama2-7b",
                 "--mix", "zh=0.5,en=0.5", "--png", "plan.png", "--out", "plan.csv", "--quiet"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    # the sample's text supports none of the swept sizes: no size is given, and no command to train one
    assert "recommended vocabulary none: the training text supports none of the swept sizes" in flat
    assert "vocabulary allocation" in out and "to train it" not in out and "this training text would support" in flat
    assert (tmp_path / "plan.png").read_bytes()[:4] == b"\x89PNG"
    per = pl.read_csv(tmp_path / "plan.csv")
    lang = [c for c in per.columns if c.startswith("lang:")]
    script = [c for c in per.columns if c.startswith("script:")]
    assert lang and script
    for r in per.iter_rows(named=True):
        assert sum(r[c] for c in lang) == pytest.approx(1.0) and sum(r[c] for c in script) == pytest.approx(1.0)
    han = per.sort("vocab_size")["script:Han"].to_list()
    assert han[-1] > han[0]          # Chinese gets more of the tokens as V grows
    per.write_csv(tmp_path / "unused.csv")


def test_json_plan_has_the_documented_keys(tmp_path, capsys):
    synthetic_sweep().write_parquet(tmp_path / "sw.parquet")
    assert main(["vocab-plan", "--sweep", str(tmp_path / "sw.parquet"), "--non-vocab-params", "6.5e9", "--d-model", "4096",
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    for k in ("recommended_vocab_size", "flat_region", "fit", "approaches", "assumptions"):
        assert k in plan, k
    assert set(plan["fit"]) == {"en", "zh"} and {"a", "b", "c", "r2", "swept_sizes"} <= set(plan["fit"]["en"])
