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
