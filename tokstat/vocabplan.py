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
        out = np.maximum(self.a * lv**2 + self.b * lv + self.c, 0.0)   # a count per character: never below 0
        return float(out) if np.ndim(out) == 0 else out

    def slope(self, v: float) -> float:
        """df/dV where the curve is used (0 where it is held flat)."""
        if not (self.v_ceiling or 1.0) <= v <= self.v_floor:
            return 0.0
        return (2 * self.a * math.log(v) + self.b) / v

    def extrapolates(self, v: float) -> bool:
        return bool(self.sizes) and not (min(self.sizes) <= v <= max(self.sizes))


#: the fitted curves are evaluated up to this size (the FLOPs-optimum search): kept non-negative to here
V_FIT_CAP = 1e8
#: fewer distinct swept sizes than this leave no residual degree of freedom worth an R² (3 parameters)
MIN_FIT_SIZES = 4


def _nnls2(z: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """``(a, m, sse)`` minimising ||a·z + m − y||² with a, m ≥ 0 (two unknowns: the four cases)."""
    best = None
    A = np.stack([z, np.ones_like(z)], axis=1)
    cands = []
    sol, *_ = np.linalg.lstsq(A, y, rcond=None)
    cands.append((float(sol[0]), float(sol[1])))
    cands.append((0.0, max(0.0, float(y.mean()))))
    zz = float(z @ z)
    cands.append((max(0.0, float(z @ y) / zz) if zz > 0 else 0.0, 0.0))
    for a, m in cands:
        if a < 0 or m < 0:
            continue
        sse = float(((a * z + m - y) ** 2).sum())
        if best is None or sse < best[2]:
            best = (a, m, sse)
    return best


def fit_curve(sizes, tpc, source: str = "", min_sizes: int = MIN_FIT_SIZES) -> Curve:
    """Least-squares fit of tokens per character against x = ln V in Tao et al.'s form, constrained
    so that the curve is non-negative and non-increasing wherever it is used (up to
    :data:`V_FIT_CAP`): f(x) = a·(min(x, x_v) − x_v)² + m with a ≥ 0 and m ≥ 0, i.e. a·x² + b·x + c
    with b = −2a·x_v, c = a·x_v² + m, held flat at m past its vertex x_v. Where the unconstrained
    quadratic already satisfies this it is the answer; otherwise the vertex is searched (for each
    vertex the rest is a two-unknown non-negative least squares). Needs :data:`MIN_FIT_SIZES` distinct
    sizes: three parameters through three points always give R² = 1.

    >>> v = [2000, 4000, 8000, 16000, 32000]
    >>> c = fit_curve(v, [Curve(*TAO_ABC)(x) for x in v])
    >>> [round(x, 6) for x in (c.a, c.b, c.c)], round(c.r2, 6)
    ([0.006392, -0.158111, 1.204701], 1.0)
    >>> steep = fit_curve([1000, 4000, 16000, 64000], [0.9, 0.6, 0.35, 0.15])   # concave: would go negative
    >>> bool(min(steep(np.geomspace(1000, 1e8, 50))) >= 0), bool(np.all(np.diff(steep(np.geomspace(1000, 1e8, 50))) <= 0))
    (True, True)
    """
    v = np.asarray(sizes, dtype=float)
    y = np.asarray(tpc, dtype=float)
    distinct = sorted(set(v.tolist()))
    if len(distinct) < min_sizes:
        raise TokstatError(f"fitting f(V) needs at least {MIN_FIT_SIZES} distinct vocabulary sizes (3 parameters: "
                           f"fewer leave nothing to test the fit on), got {[int(x) for x in distinct]}",
                           fix="sweep at least 4 sizes, e.g. --sizes 4000,8000,16000,32000")
    x = np.log(v)
    cap = math.log(V_FIT_CAP)
    a, b, c = (float(t) for t in np.polyfit(x, y, 2))

    def feasible(a, b, c) -> bool:
        if a < 0:
            return False
        if a == 0:
            return b <= 0 and b * cap + c >= 0
        xv = min(-b / (2 * a), cap)
        return a * xv * xv + b * xv + c >= 0

    if not feasible(a, b, c):
        def sse_at(xv):
            return _nnls2((np.minimum(x, xv) - xv) ** 2, y)

        grid = np.linspace(x.min() - 1, cap, 400)
        errs = [sse_at(g)[2] for g in grid]
        k = int(np.argmin(errs))
        lo, hi = grid[max(0, k - 1)], grid[min(len(grid) - 1, k + 1)]
        for _ in range(80):                                       # golden-section refinement of the vertex
            m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
            if sse_at(m1)[2] <= sse_at(m2)[2]:
                hi = m2
            else:
                lo = m1
        xv = (lo + hi) / 2
        aa, mm, _ = sse_at(xv)
        a, b, c = aa, -2 * aa * xv, aa * xv * xv + mm
    fitted = Curve(a, b, c, None, tuple(int(t) for t in distinct), source)
    pred = fitted(v)
    ss = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float(((y - pred) ** 2).sum()) / ss if ss > 0 else 1.0
    return Curve(a, b, c, r2, fitted.sizes, source)


@dataclass(frozen=True)
class MixCurve:
    """Σ_L w_L · f_L(V): the mix's tokens per character, with ``weights`` the mix's shares of the
    training *characters*. Each f_L is held flat past its own vertex, so the sum is non-negative and
    non-increasing wherever its parts are (summing the coefficients instead would let one language's
    unflattened rise pull the mix up)."""

    curves: tuple[tuple[float, Curve], ...]
    source: str = "mix"
    r2: float | None = None

    def __call__(self, v):
        out = sum(w * np.asarray(c(v), dtype=float) for w, c in self.curves)
        return float(out) if np.ndim(out) == 0 else out

    def slope(self, v: float) -> float:
        return sum(w * c.slope(v) for w, c in self.curves)

    @property
    def v_floor(self) -> float:
        return max(c.v_floor for _, c in self.curves)

    @property
    def v_ceiling(self) -> float:
        return max(c.v_ceiling for _, c in self.curves)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(sorted(set().union(*(c.sizes for _, c in self.curves))))

    def extrapolates(self, v: float) -> bool:
        return bool(self.sizes) and not (min(self.sizes) <= v <= max(self.sizes))


def mix_curve(curves: dict[str, Curve], mix: dict[str, float]) -> MixCurve:
    """The curve of a mix whose ``mix`` weights are shares of the training characters
    (:meth:`tokstat.mix.Mix.shares_in` ``"chars"``)."""
    total = sum(mix.values())
    w = {k: v / total for k, v in mix.items()}
    return MixCurve(tuple((w[k], curves[k]) for k in w), "mix of " + ", ".join(f"{k} {v:.0%}" for k, v in w.items()))


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
    mix_unit: str = "content"
    mix_chars: dict[str, float] = field(default_factory=dict)
    mix_conversion: str = ""
    approaches_median: int = 0
    answer_reason: str | None = None
    interval: tuple[int, int] | None = None
    interval_note: str = ""
    supported_up_to: int | None = None
    support_note: str = ""
    marks: list[str] = field(default_factory=list)
    capped: list[str] = field(default_factory=list)
    price_of_fairness: str = ""
    #: why there is no answer (the training text supports none of the swept sizes), else ""
    no_answer: str = ""

    def size_text(self, lang: str) -> str:
        """A language's own optimum as text: ``"≥ 999,936 (capped)"`` where the search stopped."""
        v = self.per_language[lang]
        return f"≥ {v:,} (capped)" if lang in self.capped else f"{v:,}"

    def curves(self) -> dict[str, Curve]:
        """Each language's fitted curve (none without a sweep)."""
        return {lang: Curve(f["a"], f["b"], f["c"], f["r2"], tuple(f["swept_sizes"])) for lang, f in self.fit.items()}

    def curve(self, weights: dict[str, float] | None = None):
        """The curve the answer was found on: the fitted curves mixed by ``weights`` (character
        shares; default the plan's own), or Tao et al.'s."""
        curves = self.curves()
        if not curves:
            return Curve(*TAO_ABC)
        w = weights or self.mix_chars or {k: 1.0 for k in curves}
        return mix_curve({k: curves[k] for k in w}, w)

    def answer_text(self) -> str:
        """``"23,296 (90% interval 18,048–30,720) [above what the data supports]"``; ``"none: …"``
        when the text supports none of the swept sizes (no size is given)."""
        if self.no_answer:
            return f"none: {self.no_answer}"
        s = ("≥ " if any(m.startswith("capped") for m in self.marks) else "") + f"{self.recommended_vocab_size:,}"
        if self.interval:
            s += f" (90% interval {self.interval[0]:,}–{self.interval[1]:,})"
        s += f" [{'; '.join(self.marks)}]" if self.marks else ""
        sup = self.supported_vocab_size
        if sup is not None and sup < self.recommended_vocab_size:
            s += f" — beyond the text: it supports up to {sup:,}, the answer on it"
        return s

    @property
    def supported_vocab_size(self) -> int | None:
        """The answer on the text behind it: the recommendation, or the largest size the training
        text supports where the recommendation lies beyond it (None: no answer, or not measured)."""
        if self.no_answer or self.supported_up_to is None:
            return None
        return min(self.recommended_vocab_size, self.supported_up_to)

    def to_dict(self) -> dict:
        """The plan as data: without an answer, every size that would read as one is null."""
        d = asdict(self)
        d["supported_vocab_size"] = self.supported_vocab_size
        if self.no_answer:
            d.update(recommended_vocab_size=None, interval=None, approaches_median=None, training_command="",
                     approaches=dict.fromkeys(self.approaches), serving=None)
        return d


def round_size(v: float, multiple: int = ROUND) -> int:
    """To the nearest multiple of ``multiple`` (embedding and logits matmuls tile best on multiples of 64/128).

    >>> round_size(62_281), round_size(100)
    (62336, 128)
    """
    return max(multiple, int(round(v / multiple)) * multiple)


def _tao_sizes(n_nv: float, d_tao: float, flops: float | None) -> dict[str, float]:
    return {"approach1_isoflops": approach1(n_nv, d_tao), "approach2_derivative": approach2(n_nv, d_tao),
            "approach3_parametric_loss": approach3(n_nv, d_tao, flops)}


#: the range of models the plan answers for: Tao et al.'s laws are fitted on 33M-3B non-vocabulary
#: parameters; their approach 3 has no optimum past about 2e13 (ten times the largest dense model
#: trained), and under a million parameters every law is extrapolation of extrapolation
MIN_N_NV, MAX_N_NV = 1e6, 1e13


def check_plan_inputs(*, n_nv: float, d_model: float, flops: float | None = None,
                      max_premium: float | None = None) -> None:
    """Refuse what has no answer: a non-finite or non-positive size, budget or premium bound, a model
    outside :data:`MIN_N_NV` .. :data:`MAX_N_NV`, a budget below one token's worth of compute.

    >>> check_plan_inputs(n_nv=6.5e9, d_model=4096, max_premium=float("nan"))
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: --max-premium must be a finite number of at least 1 (a premium against the pivot), got nan (fix: ...)
    """
    if not (isinstance(n_nv, (int, float)) and math.isfinite(n_nv) and MIN_N_NV <= n_nv <= MAX_N_NV):
        raise TokstatError(f"--non-vocab-params (the model's non-vocabulary parameters) must be a finite number in "
                           f"[{MIN_N_NV:.0e}, {MAX_N_NV:.0e}], the range Tao et al.'s laws extrapolate to, got {n_nv:g}",
                           fix="e.g. --non-vocab-params 6.5e9, or --model PRESET")
    if not (isinstance(d_model, (int, float)) and math.isfinite(d_model) and 1 <= d_model <= 1e6):
        raise TokstatError(f"--d-model must be a width in [1, 1e6], got {d_model}", fix="e.g. --d-model 4096")
    if flops is not None and not (math.isfinite(flops) and 6 * n_nv <= flops <= 1e35):
        raise TokstatError(f"--flops must be a finite training budget in [6·N_nv, 1e35] FLOPs, got {flops}",
                           fix="e.g. --flops 1e23, or leave it out for the compute-optimal budget")
    if max_premium is not None and not (math.isfinite(max_premium) and max_premium >= 1):
        raise TokstatError(f"--max-premium must be a finite number of at least 1 (a premium against the pivot), "
                           f"got {max_premium}", fix="e.g. --max-premium 1.5")


#: a merge seen fewer times than this in the training text is fitted on a handful of examples
MIN_MERGE_COUNT = 10
#: the plan's interval: the central share of bootstrap answers
INTERVAL = 0.9


#: a fit explaining less of the swept points' variance than this means nothing (unless the points
#: barely move: see :func:`check_fits`)
R2_MIN = 0.5
#: points within this relative spread are flat: the size barely matters there, whatever the R²
FLAT_SPREAD = 0.02


def check_is_sweep(sweep: pl.DataFrame) -> None:
    """Refuse a table that is not one training cut to several sizes (a ``compare`` output of unrelated
    tokenizers has vocabulary sizes too, but no curve runs through them)."""
    if "tokenizer" not in sweep.columns:
        return
    from .sweep import algorithm_of

    algos = algorithm_of(sweep)
    other = sorted(set(sweep.filter(algos.is_null())["tokenizer"].to_list()))
    if other:
        raise TokstatError(f"not a sweep: {len(other)} of its tokenizers were not trained by tokstat sweep "
                           f"({', '.join(other[:4])}{', …' if len(other) > 4 else ''}); a vocabulary curve needs one "
                           "training cut to several sizes", fix="pass the output of tokstat sweep --out (or run "
                           "vocab-plan --corpus CORPUS); to compare pretrained tokenizers use compare and cost")
    kinds = sorted(set(algos.drop_nulls().to_list()) - {"parity-bpe"})
    if len(kinds) > 1:
        raise TokstatError(f"not one sweep: it holds trainings of {len(kinds)} algorithms ({', '.join(kinds)})",
                           fix="plan each algorithm's sweep separately (filter the table by tokenizer)")


def check_fits(sweep: pl.DataFrame, curves: dict) -> None:
    """Refuse a curve whose R² is below :data:`R2_MIN` where the swept points move by more than
    :data:`FLAT_SPREAD`: the size it would give follows noise, not the data."""
    for lang, c in curves.items():
        y = sweep.filter(pl.col("language") == lang)["tokens_per_char"].drop_nulls()
        spread = (y.max() / y.min() - 1) if y.len() and y.min() else 0.0
        if c.r2 is not None and c.r2 < R2_MIN and spread > FLAT_SPREAD:
            raise TokstatError(f"the curve of {lang} explains {max(c.r2, 0):.0%} of how its tokens per character move across "
                               f"the swept sizes (R² {c.r2:.3f} < {R2_MIN}; the points move by {spread:.0%}): a size "
                               "read off it would follow noise", fix="sweep one tokenizer training over more sizes "
                               "(tokstat sweep --sizes 2000,4000,8000,16000,32000), or drop the language (--mix)")


def _fit_all(sweep: pl.DataFrame, langs: list[str], column: str = "tokens_per_char",
             replicate: int | None = None, drop: int | None = None) -> dict[str, Curve]:
    """Each language's curve; ``replicate``: fitted on that bootstrap replicate; ``drop``: without
    that swept size (a jackknife over the grid, for the interval only: 3 sizes then suffice)."""
    curves = {}
    for lang in langs:
        # a size the corpus could not fill appears once per size asked for: one point per actual size
        d = sweep.filter(pl.col("language") == lang).sort("vocab_size").unique("vocab_size", keep="first",
                                                                                maintain_order=True)
        if drop is not None:
            d = d.filter(pl.col("vocab_size") != drop)
        if not d.height:
            raise TokstatError(f"language {lang!r} is not in the sweep", fix=f"choose from {sorted(set(sweep['language']))}")
        y = d[column].to_list() if replicate is None else [r[replicate] for r in d[column].to_list()]
        curves[lang] = fit_curve(d["vocab_size"].to_list(), y, source=f"fitted on {lang}",
                                 min_sizes=MIN_FIT_SIZES if drop is None else MIN_FIT_SIZES - 1)
    return curves


def _flat_region(curve, n_nv: float, d_model: int, tolerance: float) -> tuple[float, float]:
    """The sizes whose training FLOPs for the same characters, 6·(N_nv + V·d)·H·f(V), are within
    ``tolerance`` of the least (unrounded)."""
    grid = np.unique(np.round(np.geomspace(V_MIN, V_MAX, 2000)))
    cost = (n_nv + grid * d_model) * curve(grid)
    ok = grid[cost <= cost.min() * (1 + tolerance)]
    return float(ok.min()), float(ok.max())


def _answer(curve, tao_sizes: dict[str, float], base: float, n_nv: float, d_model: int, multiple: int,
            tolerance: float) -> tuple[int, dict[str, int], int, tuple[int, int], float]:
    """(answer, approaches, their median, flat region, curve factor) for one mix curve: the median of
    Tao et al.'s approaches corrected by the curve factor, moved to the nearest edge of the flat
    region when it falls outside (so the answer always lies in the region the plan calls optimal)."""
    factor = flops_optimal_v(curve, n_nv, d_model) / base
    approaches = {k: round_size(min(v * factor, V_MAX), multiple) for k, v in tao_sizes.items()}
    med = int(np.median(list(approaches.values())))
    lo, hi = _flat_region(curve, n_nv, d_model, tolerance)
    flat = (max(multiple, int(math.ceil(lo / multiple)) * multiple), int(hi // multiple) * multiple)
    if flat[1] < flat[0]:
        flat = (round_size(lo, multiple), round_size(lo, multiple))
    return min(max(med, flat[0]), flat[1]), approaches, med, flat, factor


def vocab_plan(sweep: pl.DataFrame | None, *, n_nv: float, d_model: int, mix=None, mix_unit: str = "content",
               languages: list[str] | None = None, flops: float | None = None, max_premium: float | None = None,
               serve: dict | None = None, corpus_name: str = "CORPUS", algo: str = "bpe", multiple: int = ROUND,
               flat_tolerance: float = 0.01) -> Plan:
    """The vocabulary size for a model with ``n_nv`` non-vocabulary parameters and width ``d_model``.

    Without ``sweep`` the answer is Tao et al.'s (their curve, their three approaches; the
    recommendation is the median of the three). With a sweep (compare columns + ``vocab_size``) each
    language's f_L(V) is fitted (:func:`fit_curve`: non-negative, non-increasing, at least 4 sizes),
    the mix curve is Σ w_L·f_L with w the ``mix``'s shares of characters (:mod:`tokstat.mix`: the mix
    is stated in content by default, equal shares of the sweep's languages when None, and converted
    through the sweep's premiums), and each approach is multiplied by the *curve factor*
    V*_FLOPs(your curve) / V*_FLOPs(Tao's curve) — the part of the method that depends on f (see
    docs/vocab-plan.md). The answer is the median of the three, moved to the nearest edge of the
    flat region (training FLOPs within ``flat_tolerance`` of the least) when outside it, with the
    reason. With the sweep's ``new_merge_count`` the plan says up to which size the data supports a
    vocabulary, and with its ``tokens_per_char_boot`` replicates it gives a bootstrap interval for
    the answer. ``max_premium``: the smallest swept size at which every language's premium is at
    most it. ``serve`` (``{"model": ModelConfig, "gpu": GPU, "train_chars": C, "serve_chars": S}``):
    the size minimising training + serving dollars per the cost model."""
    from .mix import amounts_from_results, check_languages, equal
    from .mix import parse as parse_mix

    check_plan_inputs(n_nv=n_nv, d_model=d_model, flops=flops, max_premium=max_premium)
    mixm = parse_mix(mix, mix_unit)
    if mixm is not None and mixm.unit == "tokens":
        raise TokstatError("a mix in tokens cannot choose a vocabulary: the tokens depend on the vocabulary size",
                           fix="state the mix in content (the default), chars or bytes")
    assumptions = [f"N_nv = {n_nv:.4g} non-vocabulary parameters, d = {d_model}",
                   "approaches and coefficients: Tao et al. 2024 (github sail-sg/scaling-with-vocab)",
                   f"sizes rounded to a multiple of {multiple} (tensor-core tiles)"]
    d_tao = tao_d(n_nv)
    tao = Curve(*TAO_ABC)
    warnings: list[str] = []
    marks: list[str] = []
    try:
        tao_sizes = _tao_sizes(n_nv, d_tao, flops)
    except TokstatError:
        if flops is None:
            raise
        from .ranges import usable_edge

        def solvable(f) -> bool:
            try:
                _tao_sizes(n_nv, d_tao, f)
            except TokstatError:
                return False
            return True
        side, edge = usable_edge(solvable, float(flops), optimal_flops(n_nv))
        raise TokstatError(f"--flops {flops:g} puts Tao et al.'s approach 3 optimum outside 1 to 10M tokens of "
                           f"vocabulary (for N_nv = {n_nv:.3g}, --flops is usable {side} {edge:.3g})",
                           fix=f"give --flops a value {side} {edge:.3g}, or leave it out for the compute-optimal "
                           "budget") from None
    base = flops_optimal_v(tao, n_nv, d_model)
    if flops is not None:
        assumptions.append(f"approach 3 for a training budget of {flops:.3g} FLOPs")
    fits: dict[str, dict] = {}
    per_language: dict[str, int] = {}
    capped: list[str] = []
    price_rows: list[dict] = []
    mixw: dict[str, float] = {}
    mix_chars: dict[str, float] = {}
    conversion = ""
    interval, interval_note, supported, support_note, no_answer = None, "", None, "", ""
    if sweep is None:
        curve = tao
        assumptions.append("no corpus: Tao et al.'s tokens-per-character curve (a = 0.00639222, b = −0.15811069, "
                           "c = 1.20470122, their English-centric corpus)")
    else:
        need = {"vocab_size", "language", "tokens_per_char"}
        if "tokenizer" in sweep.columns and "requested_size" in sweep.columns:
            from .sweep import algorithm_of, price_of_fairness

            if {"bpe", "parity-bpe"} <= set(algorithm_of(sweep).drop_nulls().to_list()):
                price_rows = price_of_fairness(sweep, mixm).to_dicts()
                sweep = sweep.filter(algorithm_of(sweep) == "bpe")      # the curve is plain BPE's
        if not need <= set(sweep.columns):
            raise TokstatError(f"the sweep lacks columns {sorted(need - set(sweep.columns))}",
                               fix="pass the output of tokstat sweep --out")
        check_is_sweep(sweep)
        if "signature" in sweep.columns:
            from .parse import corpus_of

            corpora = sorted({c for c in map(corpus_of, sweep["signature"].to_list()) if c})
            if len(corpora) > 1:
                raise TokstatError(f"the sweep holds {len(corpora)} corpora ({', '.join(corpora)}): one curve "
                                   "cannot be fitted across them", fix="plan each corpus's sweep separately")
        langs = languages or sorted(set(sweep["language"].to_list()))
        actual = sorted(set(sweep["vocab_size"].to_list()))
        asked = sorted(set(sweep["requested_size"].to_list())) if "requested_size" in sweep.columns else actual
        if len(actual) < MIN_FIT_SIZES <= len(asked):
            raise TokstatError(f"the corpus fills only {max(actual):,} tokens: the sizes asked for ({', '.join(f'{a:,}' for a in asked)}) "
                               f"give {len(actual)} distinct vocabularies, and fitting f(V) needs {MIN_FIT_SIZES}",
                               fix=f"sweep sizes up to {max(actual):,}, e.g. --sizes "
                                   f"{','.join(str(max(actual) // 2 ** k) for k in (3, 2, 1, 0))}, or a larger corpus")
        curves = _fit_all(sweep, langs)
        check_fits(sweep, curves)
        for lang, c in curves.items():
            fits[lang] = {"a": c.a, "b": c.b, "c": c.c, "r2": c.r2, "swept_sizes": list(c.sizes),
                          "v_floor": None if math.isinf(c.v_floor) else c.v_floor}
            if c.v_floor < max(c.sizes) * 4:
                warnings.append(f"{lang}: the fitted curve stops falling at V ≈ {c.v_floor:,.0f}; it is held flat "
                                "beyond (a larger vocabulary never costs more tokens)")
        first = sweep.filter(pl.col("vocab_size") == sweep["vocab_size"].max())
        amounts = amounts_from_results(first.to_dicts())
        if mixm is None and len(langs) > 1 and any("chars" not in amounts.get(k, {}) for k in langs):
            # no premium (a monolingual sweep): content cannot be stated; the held-out text's own shares
            from .mix import Mix

            ch = {r["language"]: float(r.get("chars") or 0) for r in first.to_dicts() if r["language"] in langs}
            if sum(ch.values()) <= 0:
                raise TokstatError("the sweep has neither premiums nor characters per language to weigh a mix",
                                   fix="pass --mix with --mix-unit chars")
            mixm = Mix({k: v / sum(ch.values()) for k, v in ch.items()}, "chars")
            warnings.append("no premium in the sweep (monolingual data): the mix is the held-out text's own character "
                            "shares; state yours with --mix ... --mix-unit chars")
        mixm = mixm or equal(langs)
        check_languages(mixm, curves, "the sweep")
        mixw = dict(mixm.shares)
        if len(mixw) > 1:
            mix_chars = mixm.shares_in("chars", amounts)
            try:
                conversion = mixm.conversion(amounts, units=("content", "chars", "bytes"))
            except TokstatError:            # no premium: the mix as stated, unconverted
                conversion = mixm.describe()
        else:
            mix_chars = {k: 1.0 for k in mixw}
            conversion = mixm.describe()
        curve = mix_curve(curves, mix_chars)
        for lang, c in curves.items():
            v = float(np.median(list(tao_sizes.values()))) * flops_optimal_v(c, n_nv, d_model) / base
            per_language[lang] = round_size(min(v, V_MAX), multiple)
            if v > V_MAX:
                capped.append(lang)
            if v > V_MAX or c.extrapolates(per_language[lang]):
                warnings.append(f"{lang}: its own optimum {per_language[lang]:,}"
                                + (" (capped at 1,000,000: the curve is still falling there)" if v > V_MAX else "")
                                + f" lies outside the swept sizes {min(c.sizes):,}–{max(c.sizes):,} "
                                "(extrapolated: sweep larger sizes to confirm)")
        r2s = ", ".join(f"{k} R² {v['r2']:.4f} on {len(v['swept_sizes'])} sizes" for k, v in fits.items())
        assumptions.append(f"f(V) fitted per language on the sweep, non-negative and non-increasing ({r2s}); "
                           f"mix: {conversion}")
    rec, approaches, med, flat, factor = _answer(curve, tao_sizes, base, n_nv, d_model, multiple, flat_tolerance)
    price = ""
    if price_rows:
        from .sweep import fairness_sentence

        near = min(price_rows, key=lambda r: abs(math.log(r["requested_size"] / rec)))
        price = fairness_sentence(near)
    reason = None
    if rec != med:
        reason = (f"the median of Tao et al.'s three approaches, {med:,}, lies outside the sizes whose training FLOPs "
                  f"for the same text are within {flat_tolerance:.0%} of the least ({flat[0]:,}–{flat[1]:,}); the "
                  f"answer is the nearest size inside")
    if rec >= round_size(V_MAX, multiple):
        marks.append("capped: the curve still pays at 1,000,000, the largest size searched")
    if sweep is not None:
        assumptions.append(f"curve factor V*_FLOPs(yours) / V*_FLOPs(Tao's) = {base * factor:,.0f} / {base:,.0f} = "
                           f"{factor:.3f}")
        if curve.extrapolates(rec):
            marks.append("extrapolated")
            warnings.append(f"the recommendation {rec:,} lies outside the swept sizes "
                            f"{min(curve.sizes):,}–{max(curve.sizes):,}: f(V) is extrapolated there (sweep up to it "
                            "to confirm)")
        supported, support_note = _support(sweep)
        if supported == 0:
            no_answer = "the training text supports none of the swept sizes, so no size is given"
            warnings = [w for w in warnings if not w.startswith("the recommendation")]
            marks = []
        if supported is not None and rec > supported and not no_answer:
            marks.append("above what the data supports")
            warnings.append(f"the recommendation {rec:,} is above the largest size the training text supports "
                            f"({supported:,}: {support_note}); train on more text before trusting it")
        interval, interval_note = _interval(sweep, list(curves), mixw and mix_chars, tao_sizes, base, n_nv, d_model,
                                            multiple, flat_tolerance)
    assumptions.append(f"training FLOPs for the same text are least at V ≈ {flops_optimal_v(curve, n_nv, d_model):,.0f} "
                       f"and within {flat_tolerance:.0%} of that from {flat[0]:,} to {flat[1]:,}; the answer is the "
                       f"median of the three approaches (which also weigh the loss), {med:,}"
                       + (", moved into that region" if rec != med else ""))
    fairness = None
    if max_premium is not None and sweep is not None and "premium" in sweep.columns:
        worst = sweep.group_by("vocab_size").agg(pl.col("premium").max().alias("worst")).sort("vocab_size")
        fine = worst.filter(pl.col("worst") <= max_premium)
        fairness = {"max_premium": max_premium, "worst_premium_by_size": dict(zip(worst["vocab_size"].to_list(),
                                                                                   worst["worst"].to_list())),
                    "smallest_fair_size": int(fine["vocab_size"][0]) if fine.height else None}
    serving = _serving_optimum(curve, serve, multiple) if serve else None
    unit = mixm.unit if mixm is not None else "content"
    cmd = (f"tokstat train {corpus_name} --algo {algo} --vocab-size {rec}"
           + (f" --mix {','.join(f'{k}={v:g}' for k, v in mixw.items())}" if len(mixw) > 1 else "")
           + (f" --mix-unit {unit}" if len(mixw) > 1 and unit != "content" else "")
           + " --out tokenizer/")
    return Plan(rec, flat, approaches, {k: round_size(v, multiple) for k, v in tao_sizes.items()}, factor, fits,
                mixw, per_language, assumptions, fairness, serving, warnings, cmd, n_nv, d_model, unit, mix_chars,
                conversion, med, reason, interval, interval_note, supported, support_note, marks, capped, price,
                no_answer)


def _support(sweep: pl.DataFrame) -> tuple[int | None, str]:
    """The largest swept size whose newest merges occur at least :data:`MIN_MERGE_COUNT` times in
    the training text (the sweep's ``new_merge_count``), and a sentence saying so."""
    if "new_merge_count" not in sweep.columns or sweep["new_merge_count"].null_count() == sweep.height:
        return None, "not measured (the sweep has no new_merge_count: BPE sweeps record it)"
    per = (sweep.group_by("vocab_size").agg(pl.col("new_merge_count").first()).drop_nulls().sort("vocab_size"))
    last, nxt = None, None
    for v, n in per.iter_rows():
        if n < MIN_MERGE_COUNT:
            nxt = (int(v), n)
            break
        last = int(v)
    if last is None:
        more = MIN_MERGE_COUNT / max(nxt[1], 0.5)
        return 0, (f"even at {nxt[0]:,} the newest merges occur {nxt[1]:.0f} times in the training text (fewer "
                   f"than {MIN_MERGE_COUNT}): the text supports none of the swept sizes; about {more:.1f}× this "
                   f"training text would support {nxt[0]:,} (merge counts grow with the text), larger sizes more")
    tail = f"; at {nxt[0]:,} they occur {nxt[1]:.0f} times" if nxt else " (every swept size)"
    return last, (f"the newest 1% of merges occur at least {MIN_MERGE_COUNT} times in the training text up to "
                  f"{last:,}{tail}")


def _interval(sweep, langs, mix_chars, tao_sizes, base, n_nv, d_model, multiple, tolerance):
    """The central :data:`INTERVAL` of the answer over the sweep's bootstrap replicates (held-out
    segments resampled) **and over the grid**: replicate ``b`` is refitted on the whole grid or,
    in turn, without one of the swept sizes (a jackknife over the grid), so the interval carries how
    much the answer depends on which sizes were swept and on where the curve is extrapolated —
    two reasonable grids give overlapping intervals. None with the reason when there are no replicates."""
    col = "tokens_per_char_boot"
    if col not in sweep.columns or sweep[col].null_count():
        return None, "no interval: the sweep carries no bootstrap replicates (rerun tokstat sweep; CSV cannot hold them)"
    n = min(len(r) for r in sweep[col].to_list())
    grid = sorted(set(sweep["vocab_size"].to_list()))
    variants: list[int | None] = [None] + (grid if len(grid) >= MIN_FIT_SIZES else [])
    answers = []
    for b in range(n):
        if any(not (r[b] is not None and r[b] > 0) for r in sweep[col].to_list()):
            continue
        try:
            curves = _fit_all(sweep, langs, col, replicate=b, drop=variants[b % len(variants)])
        except TokstatError:
            continue
        w = mix_chars or {k: 1.0 for k in langs}
        answers.append(_answer(mix_curve(curves, w), tao_sizes, base, n_nv, d_model, multiple, tolerance)[0])
    if len(answers) < 10:
        return None, f"no interval: only {len(answers)} usable bootstrap replicates"
    lo, hi = np.quantile(answers, [(1 - INTERVAL) / 2, (1 + INTERVAL) / 2])
    return (round_size(lo, multiple), round_size(hi, multiple)), (
        f"{INTERVAL:.0%} bootstrap interval over held-out segments and the grid ({len(answers)} replicates, every "
        f"curve refitted, each on the {len(grid)} swept sizes or without one of them in turn)")


def plan_for_report(sweep: pl.DataFrame | None, *, n_nv: float, d_model: int, mix=None, **kw) -> Plan:
    """:func:`vocab_plan` for a report: fitted on ``sweep`` when it has the 4 distinct sizes a curve
    needs, else Tao et al.'s curve with a warning saying why (a report never fails for a short sweep)."""
    if sweep is not None:
        sizes = sweep["vocab_size"].unique().to_list()
        if len(sizes) >= MIN_FIT_SIZES:
            return vocab_plan(sweep, n_nv=n_nv, d_model=d_model, mix=mix, **kw)
        kw.pop("mix_unit", None)
        plan = vocab_plan(None, n_nv=n_nv, d_model=d_model, **kw)
        plan.warnings.append(f"the sweep has {len(sizes)} distinct size(s); fitting your curve needs at least "
                             f"{MIN_FIT_SIZES}, so this is Tao et al.'s curve (sweep 4 or more sizes)")
        return plan
    return vocab_plan(None, n_nv=n_nv, d_model=d_model, **kw)


def _serving_rows(curve: Curve, serve: dict) -> tuple[list[tuple[int, float, float]], float]:
    """``([(size, training dollars, training + serving dollars)], training characters)`` over the
    size grid, per the cost model (:func:`tokstat.cost.projection.serving`)."""
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
    rows = []
    for v in np.unique(np.round(np.geomspace(4_000, 512_000, 60))):
        mv = m.with_vocab(int(v))
        tpc = float(curve(v))
        train = gpu_hours(c_train * tpc * training_flops_per_token(mv, context=train_seq_len(mv, serve.get("seq_len"))),
                          g, mfu) * price
        s = serving_cost(tpc, mv, g, gpus=serve.get("gpus", 1), mfu=mfu, mbu=0.7, price=price, batch=serve.get("batch", 32))
        rows.append((int(v), train, train + c_serve * s["serving_usd_per_m_chars"] / 1e6))
    return rows, c_train


def _serving_clean(curve: Curve, serve: dict) -> bool:
    """Whether every size's price is a meaningful number (:func:`tokstat.ranges.meaningful`)."""
    from .ranges import meaningful

    try:
        rows, _ = _serving_rows(curve, serve)
    except TokstatError:
        return False
    return all(meaningful(t) and meaningful(tot) for _, t, tot in rows)


def _serving_optimum(curve: Curve, serve: dict, multiple: int) -> dict:
    """The size minimising training + serving dollars for ``train_chars`` of training text and
    ``serve_chars`` generated; an input that makes a price meaningless (``--train-chars 1e308``) is
    refused with its usable range."""
    from .ranges import meaningful, refuse_derived, usable_edge

    rows, c_train = _serving_rows(curve, serve)
    bad = next(((v, t, tot) for v, t, tot in rows if not (meaningful(t) and meaningful(tot))), None)
    if bad is not None:
        m, g = serve["model"], serve["gpu"]
        for opt, key, ordinary in (("--train-chars", "train_chars", 1e12), ("--serve-chars", "serve_chars", 1e12)):
            given = serve.get(key)
            if given is None or given == ordinary or not _serving_clean(curve, {**serve, key: ordinary}):
                continue
            edge = usable_edge(lambda x, key=key: _serving_clean(curve, {**serve, key: x}), float(given), ordinary)
            raise refuse_derived(opt, float(given), f"the training and serving cost at V = {bad[0]:,}",
                                 bad[2] if not meaningful(bad[2]) else bad[1], edge, f"with {m.name} on {g.name}")
        raise TokstatError(f"the training and serving cost at V = {bad[0]:,} is {bad[2]:g}, beyond what a float carries",
                           fix="bring --train-chars and --serve-chars closer to ordinary values")
    best = min(rows, key=lambda r: r[2])
    train_only = min(rows, key=lambda r: r[1])
    return {"train_chars": c_train, "serve_chars": serve["serve_chars"], "recommended_vocab_size": round_size(best[0], multiple),
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
              model=None, n_nv: float | None = None, d_model: int | None = None, mix=None, mix_unit: str = "content",
              max_premium: float | None = None, serve_chars: float | None = None, train_chars: float | None = None,
              gpu_name: str = "h100-sxm", flops: float | None = None, split=None, seq_len: int | None = None,
              sample_bytes: float | None = None, eval_corpus=None, pretokenizer: str | None = None):
    """What ``tokstat vocab-plan`` runs: a plan from ``sweep_df``, or from a sweep of ``corpus`` at
    ``sizes`` (then also the vocabulary allocation). Returns ``(plan, sweep_df, allocation_df or None)``."""
    from .cost.model import non_embedding_params

    if model is not None:
        n_nv = non_embedding_params(model) if n_nv is None else n_nv
        d_model = model.d_model if d_model is None else d_model
    if n_nv is None or d_model is None:
        raise TokstatError("say which model the vocabulary is for", fix="pass --model PRESET, or --non-vocab-params N --d-model D")
    check_plan_inputs(n_nv=n_nv, d_model=d_model, flops=flops, max_premium=max_premium)   # before any sweep
    from .mix import parse as parse_mix

    if (m := parse_mix(mix, mix_unit)) is not None and m.unit == "tokens":
        raise TokstatError("a mix in tokens cannot choose a vocabulary: the tokens depend on the vocabulary size",
                           fix="state the mix in content (the default), chars or bytes")
    if seq_len is not None:
        if serve_chars is None or model is None:
            raise TokstatError("--seq-len prices training in the serving-aware plan: it needs --serve-chars and --model",
                               fix="add --serve-chars N --model PRESET, or drop --seq-len")
        from .cost.model import train_seq_len

        train_seq_len(model, seq_len)
    alloc = None
    name = "CORPUS"
    if corpus is None and pretokenizer is not None:
        raise TokstatError("--pretokenizer says how a sweep run here trains; a sweep file was trained already",
                           fix="drop --pretokenizer, or pass --corpus instead of --sweep")
    if corpus is not None:
        from .loaders import load_corpus
        from .sweep import sweep

        c = corpus if not isinstance(corpus, str) else load_corpus(corpus)
        name = corpus if isinstance(corpus, str) else c.name
        sizes = sorted(set(sizes or [2000, 4000, 8000, 16000, 32000, 64000]))
        trained: list = []
        sweep_df = sweep(c, algo, sizes, mix=mix, mix_unit=mix_unit, split=split, n_boot=0, trained=trained,
                         sample_bytes=sample_bytes, eval_corpus=eval_corpus, pretokenizer=pretokenizer)
        if trained and hasattr(trained[0], "tok"):
            alloc = allocation(trained[0], text_sample(c), sweep_df["vocab_size"].unique().sort().to_list())
    serve = None
    if serve_chars is not None:
        from .cost.hardware import gpu

        if model is None:
            raise TokstatError("--serve-chars needs --model (the serving cost needs the whole shape)", fix="add --model PRESET")
        serve = {"model": model, "gpu": gpu(gpu_name), "train_chars": train_chars, "serve_chars": serve_chars,
                 "seq_len": seq_len}
    plan = vocab_plan(sweep_df, n_nv=n_nv, d_model=d_model, mix=mix, mix_unit=mix_unit, flops=flops, max_premium=max_premium, serve=serve,
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
    pof = None
    if sweep_df is not None:
        from .sweep import algorithm_of, price_of_fairness

        algos = algorithm_of(sweep_df)
        if {"bpe", "parity-bpe"} <= set(algos.drop_nulls().to_list()):
            from .mix import parse as parse_mix

            tot = sum(plan.mix_chars.values())
            mix = parse_mix({k: v / tot for k, v in plan.mix_chars.items()}, "chars") if tot else None
            pof = price_of_fairness(sweep_df, mix).sort("requested_size")
            sweep_df = sweep_df.filter(algos == "bpe")        # the fitted curves are plain BPE's
    n = 2 + (alloc is not None) + 2 * (pof is not None)
    fig, axes = plt.subplots(1, n, figsize=(5 * n, 3.8))
    curves = plan.curves()
    if not curves:
        curves = {"Tao et al.": Curve(*TAO_ABC)}
    if plan.mix_chars and len(plan.mix_chars) > 1:
        curves["mix"] = mix_curve({k: v for k, v in curves.items() if k in plan.mix_chars}, plan.mix_chars)
    for lang, c in curves.items():
        line, = axes[0].plot(grid, c(grid), label=lang)
        if sweep_df is not None and lang in set(sweep_df["language"].to_list()):
            d = sweep_df.filter(pl.col("language") == lang)
            axes[0].scatter(d["vocab_size"], d["tokens_per_char"], color=line.get_color(), s=14, zorder=3)
        cost = (n_nv + grid * d_model) * c(grid)
        axes[1].plot(grid, cost / cost.min(), label=lang)
    if not plan.no_answer:                     # no answer: no size marked either
        axes[1].axvline(plan.recommended_vocab_size, color="k", ls="--", lw=1,
                        label=f"recommended {plan.recommended_vocab_size:,}")
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
    if pof is not None:
        x = pof["requested_size"].to_list()
        a, b = axes[-2], axes[-1]
        a.plot(x, pof["plain_spread"].to_list(), marker="o", label="plain BPE")
        a.plot(x, pof["parity_spread"].to_list(), marker="o", ls="--", label="parity-aware BPE")
        a.set_ylabel("premium spread across languages (max/min)")
        b.plot(x, pof["token_cost"].to_list(), marker="o", color="C2", label="parity's extra tokens on the mix")
        if pof["token_cost_low"].null_count() == 0:
            b.fill_between(x, pof["token_cost_low"].to_list(), pof["token_cost_high"].to_list(), color="C2",
                           alpha=0.2, lw=0, label="95 % interval")
        b.axhline(0, color="k", lw=0.6)
        b.set_ylabel("tokens on the mix, parity / plain − 1")
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for ax in axes:
        ax.set_xscale("log")
        # plain tick labels: with math text off (data is never math), the log axis's default is "$10^{3}$"
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k" if v >= 1000 else f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("vocabulary size")
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8)
    if pof is not None:
        for ax in axes[-2:]:
            ax.set_xticks(pof["requested_size"].to_list())
    fig.tight_layout()
    try:
        png = figure_bytes(fig, dpi=130)
    finally:
        plt.close(fig)
    if path is not None:
        write_bytes(path, png)
    return png
