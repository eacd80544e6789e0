"""Study 3: the vocabulary a 7B model should have for English, Chinese and a 50/50 mix.

One BPE sweep (2k-48k, one training at the largest size) on PUD's English-Chinese sentences plus
Tatoeba cmn-eng (../shared), mixed 50/50 by characters; then ``tokstat vocab-plan`` for the
LLaMA-2-7B shape with the English-only, Chinese-only and 50/50 curves. Writes

    analysis/results/vocab_plan/sweep.csv, plans.json, plan_mix.png

    python analysis/study_vocab_plan.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from shared_tokenizers import SHARED

OUT = Path(__file__).resolve().parent / "results" / "vocab_plan"
SIZES = [2000, 4000, 8000, 16000, 32000, 48000]


def corpus():
    from tokstat import load_corpus
    from tokstat.corpus import Corpus, Segment

    tat = load_corpus(SHARED / "corpora/tatoeba-cmn-eng/cmn.txt")
    pud = load_corpus(SHARED / "corpora/ud-pud").select(["en", "zh"])
    segs = ([Segment("tatoeba:" + s.id, s.texts) for s in tat]
            + [Segment("pud:" + s.id, {"en": s.texts["en"], "zh": s.texts["zh"]}) for s in pud])
    return Corpus("pud+tatoeba", ["en", "zh"], lambda: iter(segs))


def main() -> int:
    if not (SHARED / "corpora").is_dir():
        print("../shared is absent", file=sys.stderr)
        return 2
    from tokstat.cost.model import non_embedding_params, preset
    from tokstat.io import write_table
    from tokstat.sweep import sweep
    from tokstat.vocabplan import plot_plan, vocab_plan

    OUT.mkdir(parents=True, exist_ok=True)
    sw = sweep(corpus(), "bpe", SIZES, mix={"zh": 0.5, "en": 0.5}, n_boot=0)
    write_table(sw, OUT / "sweep.csv")
    m = preset("llama2-7b")
    n_nv = non_embedding_params(m)
    plans = {}
    for name, mix in {"en": {"en": 1.0}, "zh": {"zh": 1.0}, "mix": {"en": 0.5, "zh": 0.5}}.items():
        t = time.perf_counter()
        plan = vocab_plan(sw, n_nv=n_nv, d_model=m.d_model, mix=mix, max_premium=1.2, corpus_name="pud+tatoeba")
        plans[name] = plan.to_dict() | {"seconds": round(time.perf_counter() - t, 3)}
        print(f"{name}: {plan.recommended_vocab_size:,} (approaches {plan.approaches}; curve factor "
              f"{plan.curve_factor:.3f}; flat {plan.flat_region[0]:,}-{plan.flat_region[1]:,})")
    tao = vocab_plan(None, n_nv=n_nv, d_model=m.d_model)
    plans["tao"] = tao.to_dict()
    print(f"Tao et al.'s curve: {tao.recommended_vocab_size:,} {tao.approaches}")
    (OUT / "plans.json").write_text(json.dumps(plans, indent=2, default=str) + "\n")
    plot_plan(vocab_plan(sw, n_nv=n_nv, d_model=m.d_model, mix={"en": 0.5, "zh": 0.5}), sw, OUT / "plan_mix.png",
              n_nv, m.d_model)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
