"""tokstat fit-estimator: the fit recovers known weights, the held-out errors are what they say, and
the reference implementations of docs/estimator.md (run as written, Python and JavaScript) equal
tokstat's own estimate."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat.adapters.base import Adapter
from tokstat.cli import main
from tokstat.estimator import estimate, fit_estimator, script_counts

from conftest import ROOT

DOC = (ROOT / "docs/estimator.md").read_text(encoding="utf-8")
SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")


def block(lang: str) -> str:
    return re.search(rf"```{lang}\n(.*?)```", DOC, re.S).group(1)


class ScriptCounter(Adapter):
    """A tokenizer whose count is exactly 0.25·Latin + 1.5·Han + 0.5·Common characters, rounded:
    the fit must recover these weights."""
    family = "test"
    algorithm = "script counter"
    id = "test/scripts"
    library_version = "test"
    vocab_size = 10
    signature = "test/scripts@0"

    def _encode(self, texts):
        counts = [round(0.25 * c.get("Latn", 0) + 1.5 * c.get("Hani", 0) + 0.5 * c.get("Zyyy", 0))
                  for c in map(script_counts, texts)]
        return np.zeros(sum(counts), np.int64), np.array(counts, np.int64), None, None


def test_the_fit_recovers_the_weights_that_made_the_counts():
    from tokstat import load_corpus

    m = fit_estimator(load_corpus(SAMPLE), ScriptCounter())
    assert m["schema"] == 2 and set(m["languages"]) == {"en", "zh"}
    assert m["languages"]["en"]["weights"]["Latn"] == pytest.approx(0.25, abs=0.02)
    assert m["languages"]["zh"]["weights"]["Hani"] == pytest.approx(1.5, abs=0.05)
    assert m["weights"]["Latn"] == pytest.approx(0.25, abs=0.02)      # the median of the languages writing it
    assert m["weights"]["Hani"] == pytest.approx(1.5, abs=0.05)
    assert m["weights"]["Zyyy"] == pytest.approx(0.5, abs=0.06)
    assert m["weights"]["space"] == pytest.approx(0.0, abs=0.02)
    for r in m["heldout"]:
        assert abs(r["total_rel_error"]) < 0.02 and r["median_rel_error"] < 0.1
    # English does not write Han: Chinese left out is an unseen script, never undercounted
    zh = next(r for r in m["heldout"] if r["language"] == "zh")
    assert zh["unseen_script"] and zh["unseen_total_rel_error"] > 0


def test_heldout_errors_are_recomputed_by_hand(tiktoken_encoding, shared):
    """The held-out numbers equal a recomputation from the model, the split and tiktoken called directly."""
    from tokstat import load_corpus
    from tokstat.split import Split

    c = load_corpus(SAMPLE)
    m = fit_estimator(c, "tiktoken:cl100k_base", heldout=0.25, seed=3)
    enc = tiktoken_encoding("cl100k_base")
    sp = Split(0.25, 3)
    for r in m["heldout"]:
        docs = [s.texts[r["language"]] for s in c if sp.is_heldout(s.id) and s.texts[r["language"]]]
        true = np.array([len(enc.encode_ordinary(t)) for t in docs], float)
        est = np.array([estimate(t, m, r["language"]) for t in docs])
        err = np.abs(est - true) / true
        assert r["documents"] == len(docs) and r["tokens"] == true.sum()
        assert r["median_rel_error"] == pytest.approx(np.median(err)) and r["p95_rel_error"] == pytest.approx(np.quantile(err, 0.95))
        assert r["total_rel_error"] == pytest.approx((est.sum() - true.sum()) / true.sum())
        chars = np.array([len(t) for t in docs], float)
        assert r["chars4_total_rel_error"] == pytest.approx((chars.sum() / 4 - true.sum()) / true.sum())
    zh = next(r for r in m["heldout"] if r["language"] == "zh")
    assert abs(zh["total_rel_error"]) < 0.05 < abs(zh["chars4_total_rel_error"])


def test_languages_left_out_are_estimated_from_the_others_by_hand(tiktoken_encoding, tmp_path):
    """The leave-languages-out error of a language equals its held-out total estimated with the median
    weights of the languages in the other groups (recomputed here, folds and all)."""
    from tokstat import load_corpus
    from tokstat.estimator import SUPPORT
    from tokstat.split import Split

    rows = [("en", "The cat sat on the mat number {i}."), ("de", "Die Katze saß auf der Matte Nummer {i}."),
            ("fr", "Le chat était assis sur le tapis numéro {i}."), ("es", "El gato se sentó en la alfombra {i}."),
            ("ru", "Кошка сидела на коврике номер {i}."), ("uk", "Кішка сиділа на килимку номер {i}.")]
    d = tmp_path / "c"
    d.mkdir()
    for lang, pat in rows:
        (d / f"{lang}.txt").write_text("".join(pat.format(i=i * 37 % 1000) + "\n" for i in range(60)), encoding="utf-8")
    c = load_corpus(str(d))
    m = fit_estimator(c, "tiktoken:cl100k_base", folds=3)
    enc = tiktoken_encoding("cl100k_base")
    sp = Split(0.2, 0)
    langs = sorted(c.languages)
    group = {langs[j]: pos % 3 for pos, j in enumerate(np.random.default_rng(1).permutation(len(langs)))}
    held = {lang: [s.texts[lang] for s in c if sp.is_heldout(s.id)] for lang in langs}
    train = {lang: [s.texts[lang] for s in c if not sp.is_heldout(s.id)] for lang in langs}
    for r in m["heldout"]:
        others = [x for x in langs if group[x] != group[r["language"]]]
        weights = {}
        for k in {k for x in others for k in m["languages"][x]["weights"]}:
            vals = [m["languages"][x]["weights"][k] for x in others if k in m["languages"][x]["weights"]
                    and sum(script_counts(t).get(k, 0) for t in train[x]) >= SUPPORT * sum(len(t) for t in train[x])]
            if vals:
                weights[k] = float(np.median(vals))
        sub = {"weights": weights, "intercept": float(np.median([m["languages"][x]["intercept"] for x in others]))}
        true = sum(len(enc.encode_ordinary(t)) for t in held[r["language"]])
        est = sum(estimate(t, sub) for t in held[r["language"]])
        assert r["unseen_total_rel_error"] == pytest.approx(est / true - 1)
    lo = m["leave_languages_out"]
    assert lo["folds"] == 3 and lo["languages"] == 6
    assert {b["script"] for b in lo["by_script"]} == {"Latn", "Cyrl"}


#: letters (with their marks) of scripts a model fitted on Latin text never saw
UNSEEN = {"Olck": "ᱚᱛᱜᱝᱞᱟᱠᱡᱢᱣᱤᱥᱦᱧᱨᱩ", "Tfng": "ⴰⴱⴳⴷⴹⴻⴼⴽⵀⵃⵄⵅⵇⵉⵊⵍⵎⵏⵓⵔⵕⵖⵙⵚⵛⵜⵟⵡⵢⵣⵥ", "Ethi": "ሀሁሂሃሄህሆለሉሊላሌልሎመሙሚማሜምሞ",
          "Laoo": "ກຂຄງຈຊຍດຕຖທນບປຜຝພຟມຢຣລວສຫອຮະັາິີຶືຸູົຼຽເແໂໃໄ່້໊໋",
          "Khmr": "កខគឃងចឆជឈញដឋឌឍណតថទធនបផពភមយរលវសហឡអាិីឹឺុូួើឿៀេែៃោៅំះ់៌៍៎៏័",
          "Thai": "กขคฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮะัาำิีึืุู็่้๊๋์",
          "Deva": "अआइईउऊएऐओऔकखगघङचछजझञटठडढणतथदधनपफबभमयरलवशषसह़ािीुूृेैोौ्ं",
          "Cher": "ᎠᎡᎢᎣᎤᎥᎦᎧᎨᎩᎪᎫᎬᎭᎮᎯᎰᎱᎲᎳᎴᎵᎶᎷᎸᎹᎺᎻᎼᎽᎾᎿᏀ", "Vaii": "ꔀꔁꔂꔃꔄꔅꔆꔇꔈꔉꔊꔋꔌꔍꔎꔏꔐꔑꔒꔓꔔꔕꔖ",
          "Adlm": "𞤀𞤁𞤂𞤃𞤄𞤅𞤆𞤇𞤈𞤉𞤊𞤋𞤌𞤍𞤎𞤏𞤐𞤑𞤒𞤓𞤔𞤕𞤖𞤗𞤘𞤙𞤚𞤛𞤜𞤝𞤞𞤟𞤠𞤡"}
#: white space at one token a character (its own bound): the rest is the unseen script's
NO_SCRIPT = {"weights": {"Latn": 0.25, "space": 1.0, "Zyyy": 1.0}, "intercept": 0.0}


@settings(max_examples=150, deadline=None)
@given(script=st.sampled_from(sorted(UNSEEN)), data=st.data())
def test_an_unseen_script_is_never_undercounted(tiktoken_encoding, script, data):
    """Words of a script the model has no weight for, between runs of white space: the estimate is at
    least the count of byte-level BPEs of three generations."""
    letters = UNSEEN[script]
    words = data.draw(st.lists(st.text(alphabet=letters, min_size=1, max_size=12), min_size=1, max_size=8))
    text = data.draw(st.sampled_from([" ", "  ", "\n"])).join(words)
    est = estimate(text, NO_SCRIPT)
    for name in ("cl100k_base", "o200k_base", "r50k_base"):
        assert len(tiktoken_encoding(name).encode_ordinary(text)) <= est, (name, text)


def test_an_unseen_script_bound_holds_for_sentencepiece(shared):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(shared / "tokenizers/llama2/tokenizer.model"))
    for script, letters in UNSEEN.items():
        for k in range(1, 6):
            text = " ".join(letters[i:i + k * 3] for i in range(0, len(letters), k * 3))
            assert len(sp.encode(text)) <= estimate(text, NO_SCRIPT), (script, text)


MODEL = {"weights": {"Latn": 0.25, "Latn+": 0.9, "Hani": 1.1, "Zyyy": 0.5, "space": 0.3, "digit": 0.4, "Zinh": 0.9,
                     "Arab": 0.3, "Hira": 0.8}, "intercept": 1.75,
         "languages": {"en": {"weights": {"Latn": 0.2, "space": 0.1, "Zyyy": 0.6, "Grek": 2.0}, "intercept": 0.5},
                       "ja": {"weights": {"Hani": 0.7, "Hira": 0.5, "Kana": 0.9}, "intercept": 0.0}}}
TEXTS = ["", "Hello, world!", "東京で会いましょう", "e\u0301te\u0301 ٱلْعَرَبِيَّة", "👍🏽 1,234.5 — ok", "ᚠᚢᚦᚨᚱᚲ ogham ᚁᚂ",
         "한국어 文字 and ελληνικά", "\u00a0\u3000\t\n", "Ẹ kú àárọ̀ ᱚᱛᱜ ᱞᱟ ⴰⴱⴳ", "٣٤ ١٢ 12 ５", "\ud800x"]
LANGS = [None, "en", "ja", "xx"]


def test_the_python_reference_implementation_as_written():
    ns: dict = {}
    exec(block("python"), ns)
    for t in TEXTS:
        for lang in LANGS:
            assert ns["estimate"](t, MODEL, lang) == pytest.approx(estimate(t, MODEL, lang)), (t, lang)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40), st.sampled_from(LANGS))
def test_the_python_reference_on_any_text(text, lang):
    ns: dict = {}
    exec(block("python"), ns)
    assert ns["estimate"](text, MODEL, lang) == pytest.approx(estimate(text, MODEL, lang))


def test_the_javascript_reference_implementation_as_written(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (.ci/run installs it)")
    texts = [t for t in TEXTS if "\ud800" not in t]      # JSON cannot carry a lone surrogate to node
    script = block("javascript") + f"\nconst texts = {json.dumps(texts)};\nconst model = {json.dumps(MODEL)};\n" \
        f"const langs = {json.dumps(LANGS)};\n" \
        "console.log(JSON.stringify(texts.map((t) => langs.map((l) => estimate(t, model, l)))));\n"
    (tmp_path / "e.js").write_text(script, encoding="utf-8")
    got = json.loads(subprocess.run([node, str(tmp_path / "e.js")], capture_output=True, text=True, check=True).stdout)
    assert got == [pytest.approx([estimate(t, MODEL, lang) for lang in LANGS]) for t in texts]


def test_the_command_writes_the_model_and_refuses_what_it_cannot_fit(tmp_path, capsys):
    out = tmp_path / "est.json"
    assert main(["fit-estimator", SAMPLE, "-t", "train:bpe:600", "--out", str(out)]) in (0, None)
    m = json.loads(out.read_text(encoding="utf-8"))
    assert {"tokenizer", "weights", "intercept", "languages", "unseen", "heldout", "leave_languages_out", "schema"} <= set(m)
    assert "Hani" in m["weights"] and "Hani" in m["languages"]["zh"]["weights"]
    assert "estimates, not billing" in " ".join(capsys.readouterr().out.split())
    small = tmp_path / "s.tsv"
    small.write_text("en\tzh\nHello.\t你好。\nBye.\t再见。\n", encoding="utf-8")
    assert main(["fit-estimator", str(small), "-t", "train:bpe:300", "--out", str(tmp_path / "x.json")]) == 2
    assert "the fit needs at least 20 and 5" in capsys.readouterr().err
    assert main(["fit-estimator", SAMPLE, "-t", "train:bpe:300", "--out", str(tmp_path / "x.csv")]) == 2
    assert "--out must end in .json" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
