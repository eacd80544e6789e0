"""Choosing a vocabulary size before pretraining: a compute-optimal, per-language answer.

Data flow: sweep results (tokens per character per size and language) -> a fitted curve f_L(V) per
language (Tao et al. 2024's form, kept non-increasing) -> the mix curve -> Tao et al.'s three
approaches for the compute-optimal vocabulary, each corrected for *your* curve -> an
inference-aware variant, a fairness constraint and the practical answer (rounded, with its flat
region and the training command). See docs/vocab-plan.md for the derivation.

Tao, Liu, Dou, et al. 2024, "Scaling Laws with Vocabulary: Larger Models Deserve Larger
Vocabularies" (NeurIPS 2024); coefficients from github.com/sail-sg/scaling-with-vocab
(``optimal_Nv_predict.py``, ``approach2_derivative.py``, ``utils.py``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import polars as pl

from .errors import TokstatError

#: Tao et al.'s tokens-per-character curve, fitted on their English-centric corpus (utils.py)
TAO_ABC = (0.00639222, -0.15811069, 1.20470122)
#: sizes the plan considers (log grid) and the tensor-core multiple it rounds to
V_MIN, V_MAX, ROUND = 1_000, 1_000_000, 128


@dataclass(frozen=True)
class Curve:
    """f(V) = a·ln²V + b·lnV + c tokens per character, used only where it does not rise with V.

    ``sizes`` are the vocabulary sizes fitted (none for Tao's published curve), ``r2`` the fit's
    coefficient of determination. A quadratic in ln V has a vertex; past the point where the fitted
    curve stops falling, :meth:`__call__` holds it flat (larger vocabularies never cost more tokens).

    >>> tao = Curve(*TAO_ABC)
    >>> round(tao(32_000), 4), round(tao(10**7), 4) == round(tao(tao.v_floor), 4)
    (0.2524, True)
    """

    a: float
    b: float
    c: float
    r2: float | None = None
    sizes: tuple[int, ...] = ()
    source: str = "Tao et al. 2024 (English-centric corpus)"

    @property
    def v_floor(self) -> float:
        """The size past which the fitted curve would rise (its vertex), or infinity; 1 for a curve
        that rises everywhere (a = 0 < b: held flat at c)."""
        if self.a > 0:
            return math.exp(min(-self.b / (2 * self.a), 700.0))
        if self.a == 0 and self.b > 0:
            return 1.0
        return math.inf

    @property
    def v_ceiling(self) -> float:
        """For a concave fit (a < 0) the size below which it would rise, else 0."""
        if self.a < 0:
            return math.exp(min(-self.b / (2 * self.a), 700.0))
        return 0.0

    def __call__(self, v):
        lo = self.v_ceiling or 1.0
        lv = np.log(np.clip(np.asarray(v, dtype=float), lo, max(self.v_floor, lo)))
        out = self.a * lv**2 + self.b * lv + self.c
        return float(out) if np.ndim(out) == 0 else out

    def slope(self, v: float) -> float:
        """df/dV where the curve is used (0 where it is held flat)."""
        if not (self.v_ceiling or 1.0) <= v <= self.v_floor:
            return 0.0
        return (2 * self.a * math.log(v) + self.b) / v

    def extrapolates(self, v: float) -> bool:
        return bool(self.sizes) and not (min(self.sizes) <= v <= max(self.sizes))


def fit_curve(sizes, tpc, source: str = "") -> Curve:
    """Least-squares fit of tokens per character against ln V (Tao et al.'s form).

    >>> v = [2000, 4000, 8000, 16000, 32000]
    >>> c = fit_curve(v, [Curve(*TAO_ABC)(x) for x in v])
    >>> [round(x, 6) for x in (c.a, c.b, c.c)], round(c.r2, 6)
    ([0.006392, -0.158111, 1.204701], 1.0)
    """
    v = np.asarray(sizes, dtype=float)
    y = np.asarray(tpc, dtype=float)
    if len(v) < 3 or len(set(v.tolist())) < 3:
        raise TokstatError(f"fitting f(V) needs at least 3 vocabulary sizes, got {sorted(set(v.tolist()))}",
                           fix="sweep at least 3 sizes, e.g. --sizes 4000,8000,16000,32000")
    a, b, c = np.polyfit(np.log(v), y, 2)
    pred = a * np.log(v) ** 2 + b * np.log(v) + c
    ss = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float(((y - pred) ** 2).sum()) / ss if ss > 0 else 1.0
    return Curve(float(a), float(b), float(c), r2, tuple(int(x) for x in sorted(set(v.tolist()))), source)


def mix_curve(curves: dict[str, Curve], mix: dict[str, float]) -> Curve:
    """The weighted sum of the languages' curves (weights: shares of the training characters).
    The sum of quadratics in ln V is one: its coefficients are the weighted sums."""
    w = {k: v / sum(mix.values()) for k, v in mix.items()}
    a = sum(w[k] * curves[k].a for k in w)
    b = sum(w[k] * curves[k].b for k in w)
    c = sum(w[k] * curves[k].c for k in w)
    sizes = tuple(sorted(set().union(*(curves[k].sizes for k in w))))
    return Curve(a, b, c, None, sizes, "mix of " + ", ".join(f"{k} {v:g}" for k, v in w.items()))


# ---------------------------------------------------------------- Tao et al.'s three approaches

def tao_d(n_nv: float) -> float:
    """The model width Tao et al. pair with N_nv non-vocabulary parameters (utils.Nnv_to_d)."""
    for lim, d in ((50e6, 512), (200e6, 768), (500e6, 1024), (1e9, 1536), (2e9, 2048), (5e9, 3200), (10e9, 4096),
                   (20e9, 5120), (50e9, 6048), (100e9, 8192), (200e9, 12288), (500e9, 16384), (1000e9, 20480)):
        if n_nv <= lim:
            return float(d)
    return 24576.0


def optimal_flops(n_nv: float) -> float:
    """The compute budget for which N_nv is training-optimal: N_nv = e^−2.4847 · F^0.5 (approach 1)."""
    return (n_nv / math.exp(-2.4846510161625193)) ** 2


def _root(g, lo: float, hi: float) -> float:
    """A sign change of ``g`` in [lo, hi], by bisection in log space (``g(lo)`` and ``g(hi)`` differ in sign)."""
    glo = g(lo)
    if (glo > 0) == (g(hi) > 0):
        raise TokstatError("no optimum inside the searched range", fix="check the model shape and budget")
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        gm = g(mid)
        if (gm > 0) == (glo > 0):
            lo, glo = mid, gm
        else:
            hi = mid
    return math.sqrt(lo * hi)


def approach1(n_nv: float, d: float) -> float:
    """IsoFLOPs power laws: N_v = e^−1.5890 · F^0.41636 at the optimal F for N_nv; V = N_v / d."""
    return math.exp(-1.589031299255507) * optimal_flops(n_nv) ** 0.4163622634135234 / d


def approach2(n_nv: float, d: float) -> float:
    """Derivative-based, as published: N_v = 3,145,728 · (N_nv / 33M)^0.8354 (the exponent from
    the derivative of the FLOPs, the anchor from their smallest model); V = N_v / d."""
    return 3145728 * (n_nv / 33_000_000) ** 0.8353974035228025 / d


def approach3(n_nv: float, d: float, flops: float | None = None) -> float:
    """Parametric loss L = −E + A1/N_nv^α1 + A2/N_v^α2 + B/D^β with D = F / (6(N_nv + N_v)):
    dL/dV = 0 for the budget ``flops`` (default the optimal one for N_nv). Units as in their code."""
    a2_, b_ = 0.19584238398665638, 2.1241123120064955
    alpha2, beta = 0.6707374679896795, 0.44660634152009615
    f = optimal_flops(n_nv) if flops is None else flops
    n, dd, ff = n_nv / 1e6, d / 1e3, f / 1e15

    def dl_dv(v):
        u = ff / (6 * (n + v * dd))
        du = ff * dd / (6 * (n + v * dd) ** 2)
        return -alpha2 * a2_ * dd / (v * dd) ** (alpha2 + 1) + beta * b_ * du / u ** (beta + 1)

    return _root(dl_dv, 1e-3, 1e4) * 1000


def flops_optimal_v(curve: Curve, n_nv: float, d: float) -> float:
    """The V minimising training FLOPs 6·(N_nv + V·d)·H·f(V) for fixed characters H: the root of
    d·f(V) + (N_nv + V·d)·f′(V) = 0 (H cancels, and so does the level of f: only its shape counts).
    Where the curve is held flat the derivative is d·f > 0, so the root is where f still falls."""
    g = lambda v: d * float(curve(v)) + (n_nv + v * d) * curve.slope(v)   # noqa: E731
    lo, hi = max(V_MIN / 10, curve.v_ceiling * 1.000001), min(curve.v_floor * 0.999999, 1e8)
    if hi <= lo or g(lo) > 0:
        return lo if hi > lo else V_MIN / 10
    if g(hi) <= 0:
        return hi          # fewer tokens keep paying for the larger embedding up to where the curve stops falling
    return _root(g, lo, hi)


# ---------------------------------------------------------------- the plan

@dataclass
class Plan:
    recommended_vocab_size: int
    flat_region: tuple[int, int]
    approaches: dict[str, int]
    tao_approaches: dict[str, int]
    curve_factor: float
    fit: dict[str, dict]
    mix: dict[str, float]
    per_language: dict[str, int]
    assumptions: list[str]
    fairness: dict | None = None
    serving: dict | None = None
    warnings: list[str] = field(default_factory=list)
    training_command: str = ""
    n_nv: float = 0.0
    d_model: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def round_size(v: float, multiple: int = ROUND) -> int:
    """To the nearest multiple of ``multiple`` (embedding and logits matmuls tile best on multiples of 64/128).

    >>> round_size(62_281), round_size(100)
    (62336, 128)
    """
    return max(multiple, int(round(v / multiple)) * multiple)


def _tao_sizes(n_nv: float, d_tao: float, flops: float | None) -> dict[str, float]:
    return {"approach1_isoflops": approach1(n_nv, d_tao), "approach2_derivative": approach2(n_nv, d_tao),
            "approach3_parametric_loss": approach3(n_nv, d_tao, flops)}


#: the largest model the plan answers for: Tao et al.'s fits reach 70B; beyond 100T parameters
#: (about 50 times the largest dense model trained) the numbers would be extrapolation of extrapolation
MAX_N_NV = 1e14


def check_plan_inputs(*, n_nv: float, d_model: float, flops: float | None = None,
                      max_premium: float | None = None) -> None:
    """Refuse what has no answer: a non-finite or non-positive size, budget or premium bound, a model
    beyond :data:`MAX_N_NV`, a budget below one token's worth of compute.

    >>> check_plan_inputs(n_nv=6.5e9, d_model=4096, max_premium=float("nan"))
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: --max-premium must be a finite number of at least 1 (a premium against the pivot), got nan (fix: ...)
    """
    if not (isinstance(n_nv, (int, float)) and math.isfinite(n_nv) and 0 < n_nv <= MAX_N_NV):
        raise TokstatError(f"--non-vocab-params must be a finite number in (0, {MAX_N_NV:.0e}], got {n_nv}",
                           fix="e.g. --non-vocab-params 6.5e9, or --model PRESET")
    if not (isinstance(d_model, (int, float)) and math.isfinite(d_model) and 1 <= d_model <= 1e6):
        raise TokstatError(f"--d-model must be a width in [1, 1e6], got {d_model}", fix="e.g. --d-model 4096")
    if flops is not None and not (math.isfinite(flops) and 6 * n_nv <= flops <= 1e35):
        raise TokstatError(f"--flops must be a finite training budget in [6·N_nv, 1e35] FLOPs, got {flops}",
                           fix="e.g. --flops 1e23, or leave it out for the compute-optimal budget")
    if max_premium is not None and not (math.isfinite(max_premium) and max_premium >= 1):
        raise TokstatError(f"--max-premium must be a finite number of at least 1 (a premium against the pivot), "
                           f"got {max_premium}", fix="e.g. --max-premium 1.5")


def vocab_plan(sweep: pl.DataFrame | None, *, n_nv: float, d_model: int, mix: dict[str, float] | None = None,
               languages: list[str] | None = None, flops: float | None = None, max_premium: float | None = None,
               serve: dict | None = None, corpus_name: str = "CORPUS", algo: str = "bpe", multiple: int = ROUND,
               flat_tolerance: float = 0.01) -> Plan:
    """The vocabulary size for a model with ``n_nv`` non-vocabulary parameters and width ``d_model``.

    Without ``sweep`` the answer is Tao et al.'s (their curve, their three approaches; the
    recommendation is the median of the three). With a sweep (compare columns + ``vocab_size``) each
    language's f_L(V) is fitted, the mix curve is the ``mix``-weighted sum (default: equal shares of
    the sweep's languages), and each approach is multiplied by the *curve factor*
    V*_FLOPs(your curve) / V*_FLOPs(Tao's curve) — the part of the method that depends on f (see
    docs/vocab-plan.md). ``max_premium``: the smallest swept size at which every language's premium
    is at most it. ``serve`` (``{"model": ModelConfig, "gpu": GPU, "train_chars": C, "serve_chars": S}``):
    the size minimising training + serving dollars per the cost model."""
    check_plan_inputs(n_nv=n_nv, d_model=d_model, flops=flops, max_premium=max_premium)
    assumptions = [f"N_nv = {n_nv:.4g} non-vocabulary parameters, d = {d_model}",
                   "approaches and coefficients: Tao et al. 2024 (github sail-sg/scaling-with-vocab)",
                   f"sizes rounded to a multiple of {multiple} (tensor-core tiles)"]
    d_tao = tao_d(n_nv)
    tao = Curve(*TAO_ABC)
    warnings: list[str] = []
    tao_sizes = _tao_sizes(n_nv, d_tao, flops)
    if flops is not None:
        assumptions.append(f"approach 3 for a training budget of {flops:.3g} FLOPs")
    fits: dict[str, dict] = {}
    per_language: dict[str, int] = {}
    if sweep is None:
        factor = 1.0
        curve = tao
        mixw = {}
        assumptions.append("no corpus: Tao et al.'s tokens-per-character curve (a = 0.00639222, b = −0.15811069, "
                           "c = 1.20470122, their English-centric corpus)")
    else:
        need = {"vocab_size", "language", "tokens_per_char"}
        if not need <= set(sweep.columns):
            raise TokstatError(f"the sweep lacks columns {sorted(need - set(sweep.columns))}",
                               fix="pass the output of tokstat sweep --out")
        if "signature" in sweep.columns:
            from .parse import corpus_of

            corpora = sorted({c for c in map(corpus_of, sweep["signature"].to_list()) if c})
            if len(corpora) > 1:
                raise TokstatError(f"the sweep holds {len(corpora)} corpora ({', '.join(corpora)}): one curve "
                                   "cannot be fitted across them", fix="plan each corpus's sweep separately")
        langs = languages or sorted(set(sweep["language"].to_list()))
        curves = {}
        for lang in langs:
            d = sweep.filter(pl.col("language") == lang).sort("vocab_size")
            if not d.height:
                raise TokstatError(f"language {lang!r} is not in the sweep", fix=f"choose from {sorted(set(sweep['language']))}")
            curves[lang] = fit_curve(d["vocab_size"].to_list(), d["tokens_per_char"].to_list(), source=f"fitted on {lang}")
            c = curves[lang]
            fits[lang] = {"a": c.a, "b": c.b, "c": c.c, "r2": c.r2, "swept_sizes": list(c.sizes),
                          "v_floor": None if math.isinf(c.v_floor) else c.v_floor}
            if c.v_floor < max(c.sizes) * 4:
                warnings.append(f"{lang}: the fitted curve stops falling at V ≈ {c.v_floor:,.0f}; it is held flat "
                                "beyond (a larger vocabulary never costs more tokens)")
        mixw = mix or {lang: 1.0 for lang in langs}
        missing = set(mixw) - set(curves)
        if missing:
            raise TokstatError(f"--mix names languages not in the sweep: {', '.join(sorted(missing))}",
                               fix=f"use {', '.join(sorted(curves))}")
        curve = mix_curve(curves, mixw)
        base = flops_optimal_v(tao, n_nv, d_model)
        opt = flops_optimal_v(curve, n_nv, d_model)
        factor = opt / base
        for lang, c in curves.items():
            v = float(np.median(list(tao_sizes.values()))) * flops_optimal_v(c, n_nv, d_model) / base
            per_language[lang] = round_size(min(v, V_MAX), multiple)
            if c.extrapolates(per_language[lang]):
                warnings.append(f"{lang}: its own optimum {per_language[lang]:,}"
                                + (" (capped at 1,000,000)" if v > V_MAX else "")
                                + f" lies outside the swept sizes {min(c.sizes):,}–{max(c.sizes):,} "
                                "(extrapolated: sweep larger sizes to confirm)")
        r2s = ", ".join(f"{k} R² {v['r2']:.4f}" for k, v in fits.items())
        shares = ", ".join(f"{k}={v:g}" for k, v in mixw.items())
        assumptions.append(f"f(V) fitted per language on the sweep ({r2s}); mix {shares}")
        assumptions.append(f"curve factor V*_FLOPs(yours) / V*_FLOPs(Tao's) = {opt:,.0f} / {base:,.0f} = {factor:.3f}")
    approaches = {k: round_size(v * factor, multiple) for k, v in tao_sizes.items()}
    rec = int(np.median(list(approaches.values())))   # the middle of three multiples of `multiple`
    if curve.sizes and curve.extrapolates(rec):
        warnings.append(f"the recommendation {rec:,} lies outside the swept sizes "
                        f"{min(curve.sizes):,}–{max(curve.sizes):,}: f(V) is extrapolated there (sweep up to it to confirm)")
    # flat region: sizes whose training FLOPs for the same characters, 6·(N_nv + V·d)·H·f(V), are within
    # `flat_tolerance` of the least (at V*_FLOPs under the curve)
    grid = np.unique(np.round(np.geomspace(V_MIN, V_MAX, 2000)))
    cost = (n_nv + grid * d_model) * curve(grid)
    ok = grid[cost <= cost.min() * (1 + flat_tolerance)]
    flat = (round_size(ok.min(), multiple), round_size(ok.max(), multiple))
    v_flops = flops_optimal_v(curve, n_nv, d_model)
    assumptions.append(f"training FLOPs for the same text are least at V ≈ {v_flops:,.0f} and within "
                       f"{flat_tolerance:.0%} of that from {flat[0]:,} to {flat[1]:,}; the recommendation "
                       f"({rec:,}) is the median of the three approaches, which also weigh the loss")
    fairness = None
    if max_premium is not None and sweep is not None and "premium" in sweep.columns:
        worst = sweep.group_by("vocab_size").agg(pl.col("premium").max().alias("worst")).sort("vocab_size")
        fine = worst.filter(pl.col("worst") <= max_premium)
        fairness = {"max_premium": max_premium, "worst_premium_by_size": dict(zip(worst["vocab_size"].to_list(),
                                                                                   worst["worst"].to_list())),
                    "smallest_fair_size": int(fine["vocab_size"][0]) if fine.height else None}
    serving = _serving_optimum(curve, serve, multiple) if serve else None
    cmd = (f"tokstat train {corpus_name} --algo {algo} --vocab-size {rec}"
           + (f" --mix {','.join(f'{k}={v / sum(mixw.values()):g}' for k, v in mixw.items())}" if mixw and len(mixw) > 1 else "")
           + " --out tokenizer/")
    return Plan(rec, flat, approaches, {k: round_size(v, multiple) for k, v in tao_sizes.items()}, factor, fits,
                mixw, per_language, assumptions, fairness, serving, warnings, cmd, n_nv, d_model)


def plan_for_report(sweep: pl.DataFrame | None, *, n_nv: float, d_model: int, mix: dict[str, float] | None = None,
                    **kw) -> Plan:
    """:func:`vocab_plan` for a report: fitted on ``sweep`` when it has the 3 sizes a curve needs,
    else Tao et al.'s curve with a warning saying why (a report never fails for a short sweep)."""
    if sweep is not None:
        sizes = sweep["vocab_size"].unique().to_list()
        if len(sizes) >= 3:
            return vocab_plan(sweep, n_nv=n_nv, d_model=d_model, mix=mix, **kw)
        plan = vocab_plan(None, n_nv=n_nv, d_model=d_model, **kw)
        plan.warnings.append(f"the sweep has {len(sizes)} size(s); fitting your curve needs at least 3, so this is "
                             "Tao et al.'s curve (sweep 3 or more sizes)")
        return plan
    return vocab_plan(None, n_nv=n_nv, d_model=d_model, **kw)


def _serving_optimum(curve: Curve, serve: dict, multiple: int) -> dict:
    """The size minimising training + serving dollars for ``train_chars`` of training text and
    ``serve_chars`` generated, per the cost model (:func:`tokstat.cost.projection.serving`)."""
    from .cost.calibration import default_mfu
    from .cost.hardware import gpu_hours
    from .cost.model import total_params, train_seq_len, training_flops_per_token
    from .cost.projection import serving as serving_cost

    m, g, c_train, c_serve = serve["model"], serve["gpu"], serve["train_chars"], serve["serve_chars"]
    for what, v in (("--serve-chars", c_serve), ("--train-chars", c_train)):
        if v is not None and not (math.isfinite(v) and v > 0):
            raise TokstatError(f"{what} must be a finite positive number, got {v}", fix=f"e.g. {what} 1e12")
    if c_train is None:   # Chinchilla: 20 tokens per parameter, as characters of this text at a 32k vocabulary
        c_train = 20 * total_params(m) / float(curve(32_000))
    mfu = serve.get("mfu") or default_mfu(g.name)[0]
    price = g.price_usd_h
    best = None
    rows = []
    for v in np.unique(np.round(np.geomspace(4_000, 512_000, 60))):
        mv = m.with_vocab(int(v))
        tpc = float(curve(v))
        train = gpu_hours(c_train * tpc * training_flops_per_token(mv, context=train_seq_len(mv, serve.get("seq_len"))),
                          g, mfu) * price
        s = serving_cost(tpc, mv, g, gpus=serve.get("gpus", 1), mfu=mfu, mbu=0.7, price=price, batch=serve.get("batch", 32))
        total = train + c_serve * s["serving_usd_per_m_chars"] / 1e6
        rows.append((int(v), train, total))
        if best is None or total < best[2]:
            best = (int(v), train, total)
    train_only = min(rows, key=lambda r: r[1])
    return {"train_chars": c_train, "serve_chars": c_serve, "recommended_vocab_size": round_size(best[0], multiple),
            "training_only_optimum": round_size(train_only[0], multiple), "total_usd": best[2]}


# ---------------------------------------------------------------- which script and language get the tokens

def script_of(token: str) -> str:
    """The script of a token's text: its first letter's (Han, Kana, Hangul, Latin, Cyrillic, …),
    ``digit``, ``punctuation/space``, or ``bytes`` for a piece of a multi-byte character.

    >>> [script_of(t) for t in (" the", "中国", "カタ", "한", "123", "\\ufffd", ", ")]
    ['Latin', 'Han', 'Kana', 'Hangul', 'digit', 'bytes', 'punctuation/space']
    """
    import unicodedata

    if "\ufffd" in token:
        return "bytes"
    for ch in token:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            for key, script in (("CJK", "Han"), ("HIRAGANA", "Kana"), ("KATAKANA", "Kana"), ("HANGUL", "Hangul"),
                                ("LATIN", "Latin"), ("CYRILLIC", "Cyrillic"), ("ARABIC", "Arabic"),
                                ("DEVANAGARI", "Devanagari"), ("THAI", "Thai"), ("GREEK", "Greek"), ("HEBREW", "Hebrew")):
                if name.startswith(key):
                    return script
            return "other letters"
    if any(ch.isdigit() for ch in token):
        return "digit"
    return "punctuation/space"


def allocation(adapter, texts: dict[str, list[str]], sizes: list[int], max_chars: int = 200_000) -> pl.DataFrame:
    """For a BPE vocabulary (ids in merge order), the share of the first V tokens by script and by
    language, at each of ``sizes``: which language the new tokens go to as V grows. A token's
    language is the one whose text (a sample of up to ``max_chars`` characters per language)
    contains the token's text most often per character — independent of which longer tokens a
    larger vocabulary would use instead; ``none`` when no sample contains it (a piece of a
    multi-byte character, for instance)."""
    n = adapter.vocab_size
    sample = {lang: "\n".join(ts)[:max_chars] for lang, ts in texts.items()}
    langs = list(sample)
    tokens = [adapter.decode([i]) for i in range(n)]
    owner = []
    for tk in tokens:
        freq = [sample[lang].count(tk) / max(1, len(sample[lang])) if tk else 0.0 for lang in langs]
        owner.append(int(np.argmax(freq)) if max(freq) > 0 else -1)
    owner = np.array(owner)
    scripts = [script_of(t) for t in tokens]
    rows = []
    for v in sorted(set(min(s, n) for s in sizes)):
        row = {"vocab_size": v}
        own = owner[:v]
        for k, lang in enumerate(langs):
            row[f"lang:{lang}"] = float((own == k).mean())
        row["lang:none"] = float((own == -1).mean())
        sc = scripts[:v]
        for name in sorted(set(scripts)):
            row[f"script:{name}"] = sc.count(name) / v
        rows.append(row)
    return pl.DataFrame(rows).with_columns(pl.exclude("vocab_size").fill_null(0.0))


def text_sample(c, n: int = 2000) -> dict[str, list[str]]:
    """Up to ``n`` non-blank texts per language of corpus ``c``, from its start (for :func:`allocation`)."""
    sample: dict[str, list[str]] = {lang: [] for lang in c.languages}
    for seg in c:
        for lang in c.languages:
            if len(sample[lang]) < n and seg.texts.get(lang, "").strip():
                sample[lang].append(seg.texts[lang])
        if all(len(v) >= n for v in sample.values()):
            break
    return sample


# ---------------------------------------------------------------- one call from a corpus or a sweep

def plan_from(sweep_df: pl.DataFrame | None = None, *, corpus=None, algo: str = "bpe", sizes: list[int] | None = None,
              model=None, n_nv: float | None = None, d_model: int | None = None, mix: dict[str, float] | None = None,
              max_premium: float | None = None, serve_chars: float | None = None, train_chars: float | None = None,
              gpu_name: str = "h100-sxm", flops: float | None = None, split=None, seq_len: int | None = None):
    """What ``tokstat vocab-plan`` runs: a plan from ``sweep_df``, or from a sweep of ``corpus`` at
    ``sizes`` (then also the vocabulary allocation). Returns ``(plan, sweep_df, allocation_df or None)``."""
    from .cost.model import non_embedding_params

    if model is not None:
        n_nv = non_embedding_params(model) if n_nv is None else n_nv
        d_model = model.d_model if d_model is None else d_model
    if n_nv is None or d_model is None:
        raise TokstatError("say which model the vocabulary is for", fix="pass --model PRESET, or --non-vocab-params N --d-model D")
    check_plan_inputs(n_nv=n_nv, d_model=d_model, flops=flops, max_premium=max_premium)   # before any sweep
    if seq_len is not None:
        if serve_chars is None or model is None:
            raise TokstatError("--seq-len prices training in the serving-aware plan: it needs --serve-chars and --model",
                               fix="add --serve-chars N --model PRESET, or drop --seq-len")
        from .cost.model import train_seq_len

        train_seq_len(model, seq_len)
    alloc = None
    name = "CORPUS"
    if corpus is not None:
        from .loaders import load_corpus
        from .sweep import sweep

        c = corpus if not isinstance(corpus, str) else load_corpus(corpus)
        name = corpus if isinstance(corpus, str) else c.name
        sizes = sorted(set(sizes or [2000, 4000, 8000, 16000, 32000, 64000]))
        trained: list = []
        sweep_df = sweep(c, algo, sizes, mix=mix, split=split, n_boot=0, trained=trained)
        if trained and hasattr(trained[0], "tok"):
            alloc = allocation(trained[0], text_sample(c), sweep_df["vocab_size"].unique().sort().to_list())
    serve = None
    if serve_chars is not None:
        from .cost.hardware import gpu

        if model is None:
            raise TokstatError("--serve-chars needs --model (the serving cost needs the whole shape)", fix="add --model PRESET")
        serve = {"model": model, "gpu": gpu(gpu_name), "train_chars": train_chars, "serve_chars": serve_chars,
                 "seq_len": seq_len}
    plan = vocab_plan(sweep_df, n_nv=n_nv, d_model=d_model, mix=mix, flops=flops, max_premium=max_premium, serve=serve,
                      corpus_name=name, algo=algo)
    return plan, sweep_df, alloc


def per_size_table(sweep_df: pl.DataFrame, alloc: pl.DataFrame | None = None) -> pl.DataFrame:
    """``vocab-plan --out``: per swept size, tokens per character and premium per language (+ the
    allocation shares)."""
    per = sweep_df.select("vocab_size", "language", "tokens_per_char", "premium").pivot(
        on="language", index="vocab_size", values=["tokens_per_char", "premium"]).sort("vocab_size")
    return per.join(alloc, on="vocab_size", how="left") if alloc is not None else per


def plot_plan(plan: Plan, sweep_df: pl.DataFrame | None, path, n_nv: float, d_model: int,
              alloc: pl.DataFrame | None = None) -> bytes:
    """PNG bytes (written to ``path`` too unless it is None): left, tokens per character against V (swept points, fitted curves); middle, training
    FLOPs for the same text relative to the optimum, per language and for the mix, the
    recommendation marked; right (with ``alloc``), the share of the first V tokens per language."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["text.parse_math"] = False   # a "$" in a language or tokenizer id is text, never math

    from .io import figure_bytes, write_bytes

    grid = np.geomspace(V_MIN, 512_000, 300)
    fig, axes = plt.subplots(1, 3 if alloc is not None else 2, figsize=(15 if alloc is not None else 10, 3.8))
    curves = {lang: Curve(f["a"], f["b"], f["c"], f["r2"], tuple(f["swept_sizes"])) for lang, f in plan.fit.items()}
    if not curves:
        curves = {"Tao et al.": Curve(*TAO_ABC)}
    if plan.mix and len(plan.mix) > 1:
        curves["mix"] = mix_curve({k: v for k, v in curves.items() if k in plan.mix}, plan.mix)
    for lang, c in curves.items():
        line, = axes[0].plot(grid, c(grid), label=lang)
        if sweep_df is not None and lang in set(sweep_df["language"].to_list()):
            d = sweep_df.filter(pl.col("language") == lang)
            axes[0].scatter(d["vocab_size"], d["tokens_per_char"], color=line.get_color(), s=14, zorder=3)
        cost = (n_nv + grid * d_model) * c(grid)
        axes[1].plot(grid, cost / cost.min(), label=lang)
    axes[1].axvline(plan.recommended_vocab_size, color="k", ls="--", lw=1, label=f"recommended {plan.recommended_vocab_size:,}")
    axes[0].set_ylabel("tokens per character")
    axes[1].set_ylabel("training FLOPs for the same text / least")
    axes[1].set_ylim(0.98, 1.3)
    if alloc is not None:
        cols = [c for c in alloc.columns if c.startswith("lang:")]
        d = alloc.sort("vocab_size")
        axes[2].stackplot(d["vocab_size"].to_list(), *[d[c].to_list() for c in cols], labels=[c[5:] for c in cols],
                          alpha=0.8)
        axes[2].set_ylabel("share of the first V tokens")
        axes[2].set_ylim(0, 1)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("vocabulary size")
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    try:
        png = figure_bytes(fig, dpi=130)
    finally:
        plt.close(fig)
    if path is not None:
        write_bytes(path, png)
    return png
