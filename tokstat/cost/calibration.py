"""MFU calibrated on published training runs (``calibration.toml``): what each run implies, and a
default MFU per accelerator generation.

A run's implied MFU = its training FLOPs (tokstat's count: :func:`~tokstat.cost.model.training_flops_per_token`
at the run's training context × tokens) / (stated GPU-hours · 3600 · dense peak at the run's training
precision: BF16, or FP8 for DeepSeek-V3). Published
GPU-hours include every lost hour (restarts, evaluation, stragglers), so an MFU calibrated on them
already carries the run's goodput. A generation's default is its runs pooled, FLOPs-weighted
(Σ FLOPs / Σ GPU-hours·peak): large runs weigh most, as they should for a pretraining budget.
"""

from __future__ import annotations

import tomllib
from importlib import resources

from .hardware import GPU, catalogue
from .model import active_params, preset, training_flops_per_token

#: accelerator name prefix -> generation
GENERATIONS = {"v100": "volta", "a100": "ampere", "a10g": "ampere", "h100": "hopper", "h800": "hopper",
               "h200": "hopper", "b200": "blackwell", "l4": "ada", "l40s": "ada", "rtx-4090": "ada"}
#: MFU where no published run calibrates the generation (the long-used A100-era rule of thumb)
UNCALIBRATED_MFU = 0.40


def generation(gpu_name: str) -> str | None:
    """``generation("h100-sxm") == "hopper"``; None for accelerators without a known generation."""
    return next((g for p, g in GENERATIONS.items() if gpu_name.startswith(p)), None)


def runs() -> list[dict]:
    """Every published run with tokstat's FLOPs, the 6·N·D convention, and the MFU it implies."""
    data = tomllib.loads(resources.files("tokstat.cost").joinpath("calibration.toml").read_text(encoding="utf-8"))
    cat = catalogue()
    out = []
    for name, r in data.items():
        m = preset(r["model"])
        g: GPU = cat[r["gpu"]]
        flops = training_flops_per_token(m, r["train_context"]) * r["tokens"]
        hours = r["gpu_hours"] or None
        precision = r.get("precision", "bf16")
        peak = g.fp8_tflops if precision == "fp8" else g.bf16_tflops
        out.append({"run": name, "model": r["model"], "tokens": r["tokens"], "gpu": r["gpu"],
                    "generation": generation(r["gpu"]), "gpu_hours": hours, "flops": flops,
                    "flops_6nd": 6 * active_params(m) * r["tokens"], "stated_flops": r.get("stated_flops"),
                    "stated_mfu": r.get("stated_mfu"), "precision": precision, "peak_tflops": peak,
                    "implied_mfu": flops / (hours * 3600 * peak * 1e12) if hours else None,
                    "source": r["source"]})
    return out


def default_mfu(gpu_name: str, precision: str = "bf16") -> tuple[float, str]:
    """The MFU to assume on ``gpu_name`` training at ``precision`` (its dense peak), and its source.

    >>> default_mfu("h100-sxm")[1]
    'calibrated: hopper bf16 runs llama3-8b, llama3-70b, llama3.1-405b (pooled)'
    >>> default_mfu("h800", "fp8")[1]
    'calibrated: hopper fp8 runs deepseek-v3 (pooled)'
    """
    gen = generation(gpu_name)
    rs = [r for r in runs() if r["generation"] == gen and r["gpu_hours"] and r["precision"] == precision]
    if not rs:
        return UNCALIBRATED_MFU, f"uncalibrated: no published {precision} run on {gen or gpu_name}"
    mfu = sum(r["flops"] for r in rs) / sum(r["gpu_hours"] * 3600 * r["peak_tflops"] * 1e12 for r in rs)
    return round(mfu, 3), f"calibrated: {gen} {precision} runs {', '.join(r['run'] for r in rs)} (pooled)"


#: the runs of the leave-one-out validation (docs/cost-model.md)
VALIDATION_RUNS = ("llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3.1-405b", "deepseek-v3")


def leave_one_out(names=VALIDATION_RUNS) -> list[dict]:
    """Validate the MFU honestly: for each run, an MFU calibrated on the *other* runs only (pooled
    FLOPs-weighted, as :func:`default_mfu` pools; each MFU is a share of its own run's dense peak),
    the GPU-hours that predicts for the held-out run, and the error against its published hours.
    Two calibrations: ``all`` (every other run) and ``same`` (the other runs of its generation and
    precision, None where there is none — the situation of the default for a new generation)."""
    rs = {r["run"]: r for r in runs() if r["run"] in names and r["gpu_hours"]}
    out = []

    def pooled(others):
        return (sum(o["flops"] for o in others) / sum(o["gpu_hours"] * 3600 * o["peak_tflops"] * 1e12 for o in others)
                if others else None)

    for name in names:
        r = rs[name]
        row = {"run": name, "gpu": r["gpu"], "precision": r["precision"], "published_gpu_hours": r["gpu_hours"],
               "implied_mfu": r["implied_mfu"]}
        for key, others in (("all", [o for k, o in rs.items() if k != name]),
                            ("same", [o for k, o in rs.items() if k != name and o["generation"] == r["generation"]
                                      and o["precision"] == r["precision"]])):
            mfu = pooled(others)
            hours = r["flops"] / (mfu * r["peak_tflops"] * 1e12 * 3600) if mfu else None
            row[f"mfu_{key}"] = mfu
            row[f"predicted_gpu_hours_{key}"] = hours
            row[f"error_{key}"] = hours / r["gpu_hours"] - 1 if hours else None
            row[f"calibrated_on_{key}"] = [o["run"] for o in others]
        out.append(row)
    return out


def leave_one_out_markdown() -> str:
    """The table of docs/cost-model.md (a test checks that the docs hold exactly this)."""
    lines = ["| held-out run | GPU | implied MFU | MFU from the other 5 | predicted / published GPU-hours | error "
             "| MFU from its generation | error |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in leave_one_out():
        same = (f"{r['mfu_same']:.1%} ({', '.join(r['calibrated_on_same'])}) | {r['error_same']:+.0%}"
                if r["mfu_same"] else "none | –")
        lines.append(f"| {r['run']} | {r['gpu']} {r['precision']} | {r['implied_mfu']:.1%} | {r['mfu_all']:.1%} | "
                     f"{r['predicted_gpu_hours_all'] / 1e6:.2f}M / {r['published_gpu_hours'] / 1e6:.2f}M | "
                     f"{r['error_all']:+.0%} | {same} |")
    return "\n".join(lines)
