"""No output ever replaces a file the run reads, whichever option named it (round 4).

Structural, in two layers, both walked over the command line itself:
- every command × every option that names an input (corpus, tokenizer files of every kind, the
  ``ids:`` table and its ``?vocab=`` file, ``--calibrate``, ``--eval``, ``--sweep``, result files,
  ``--groups``, ``--models-file``, segments) × every output option (``--out``, ``--png``,
  ``--segments-out``, ``--plot``, ``--html``): exit 2 with one line saying the output is an input,
  and every file byte-identical (sha256 before and after);
- the writer's own guard, with the early check switched off: the files a run actually opened (its
  record, :func:`tokstat.io.run_scope`) are refused by :func:`tokstat.io.write_outputs`.
A new command or a new option that names a file fails :func:`test_every_command_and_input_option_is_walked`
until it is classified here."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import click
import pytest

from tokstat.cli import OUTPUT_PARAMS, cli, main

from conftest import ROOT

SAMPLE = ROOT / "corpora/sample-zh-en/sample.tsv"

#: string options that never name a file (values, codes, names, specs of numbers)
NOT_PATHS = {"columns", "data_split", "source_lang", "languages", "text_col", "lang_col", "doc_lang", "pivot", "group_by",
             "segmenter_choices", "address", "sample", "mix", "parity", "sizes", "by", "value", "model_name", "gpu_name",
             "reference", "title", "language", "text", "add", "sweep_spec",
             "tokenizer"}  # worst -t: a tokenizer id of the segments table, not a spec


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, str]:
    """Every kind of input file, made here from the project's own sample: a parallel corpus, a
    folder of documents, a Hugging Face ``tokenizer.json``, a tiktoken ranks file, a WordPiece
    ``vocab.txt``, a SentencePiece model, an ``ids:`` table with its vocabulary, result tables."""
    import polars as pl
    import sentencepiece as spm
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from tokstat import compare
    from tokstat.io import write_tables

    d = tmp_path_factory.mktemp("world")
    corpus = d / "corpus.tsv"
    shutil.copy(SAMPLE, corpus)
    shutil.copy(SAMPLE, d / "cal.tsv")
    shutil.copy(SAMPLE, d / "eval.tsv")
    shutil.copytree(ROOT / "corpora/sample-docs", d / "docs")
    lines = [x for row in SAMPLE.read_text(encoding="utf-8").splitlines()[1:] for x in row.split("\t")]
    (d / "text.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train([str(d / "text.txt")], trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    (d / "tok").mkdir()
    tok.save(str(d / "tok" / "tokenizer.json"))
    import base64

    (d / "ranks.tiktoken").write_text("".join(base64.b64encode(bytes([i])).decode() + f" {i}\n" for i in range(256)))
    chars = sorted({c for x in lines for c in x if not c.isspace()})
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *chars, *("##" + c for c in chars)]) + "\n",
                                 encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(d / "text.txt"), model_prefix=str(d / "m"), vocab_size=2000, model_type="bpe",
                                   character_coverage=1.0, minloglevel=2, byte_fallback=True)
    from tokstat.loaders import load_corpus

    texts = {t for seg in load_corpus(str(corpus)) for t in seg.texts.values()}
    with open(d / "ids.jsonl", "w", encoding="utf-8") as f:
        for t in sorted(texts):
            f.write(json.dumps({"text": t, "ids": tok.encode(t).ids}, ensure_ascii=False) + "\n")
    hf = f"hf:{d / 'tok' / 'tokenizer.json'}"
    res = compare(str(corpus), [hf], n_boot=0, workers=1)
    _, segs = compare(str(corpus), [hf], n_boot=0, workers=1, return_segments=True)
    rows = [{"vocab_size": v, "language": lang, "tokens_per_char": 1.2 - 0.1 * k + (0.3 if lang == "zh" else 0),
             "premium": 1.0 if lang == "en" else 0.9} for k, v in enumerate([2000, 4000, 8000, 16000]) for lang in ("en", "zh")]
    write_tables({d / "results.csv": res, d / "segments.parquet": segs, d / "sweep.parquet": pl.DataFrame(rows)})
    (d / "groups.csv").write_text("language,group\nen,A\nzh,B\n")
    (d / "morph").mkdir()
    (d / "morph" / "english_morph_data.csv").write_text(",full_word,pt1,rest\n0,walked,walk,ed\n1,cats,cat,s\n")
    (d / "morph" / "turkish_morph_data.csv").write_text(",full_word,pt1,rest\n0,evler,ev,ler\n1,kitaplar,kitap,lar\n")
    (d / "models.toml").write_text('[tiny]\nd_model = 64\nlayers = 2\nheads = 2\nkv_heads = 2\nd_ff = 256\nvocab_size = 400\ncontext = 512\n')
    w = {k: str(v) for k, v in {
        "corpus": corpus, "cal": d / "cal.tsv", "eval": d / "eval.tsv", "docs": d / "docs", "hf": d / "tok" / "tokenizer.json",
        "ranks": d / "ranks.tiktoken", "vocab": d / "vocab.txt", "spm": d / "m.model", "ids": d / "ids.jsonl",
        "results": d / "results.csv", "segments": d / "segments.parquet", "sweep": d / "sweep.parquet",
        "groups": d / "groups.csv", "models": d / "models.toml", "morph": d / "morph"}.items()}
    w["dir"] = str(d)
    return w


def cases(w: dict[str, str]) -> dict[str, tuple[list[str], dict[str, str], dict[str, str]]]:
    """command -> (argv without outputs, {input option: a file it names}, {output option: its kind})."""
    hf, t = f"hf:{w['hf']}", "-t"
    return {
        "corpus info": (["corpus", "info", w["corpus"]], {"spec": w["corpus"]}, {}),
        "compare": (["compare", w["docs"], t, hf, t, f"tiktoken:{w['ranks']}?pattern=gpt2", t, f"wordpiece:{w['vocab']}",
                     t, f"spm:{w['spm']}", "--calibrate", w["cal"]],
                    {"corpus_spec": w["docs"] + "/eng_Latn/000.jsonl", "tokenizers": w["hf"], "tokenizers#ranks": w["ranks"],
                     "tokenizers#wordpiece": w["vocab"], "tokenizers#spm": w["spm"], "calibrate": w["cal"]},
                    {"--out": ".csv", "--segments-out": ".csv"}),
        "compare baseline": (["compare", w["corpus"], t, f"wordpiece:{w['vocab']}", "--baseline", hf],
                             {"corpus_spec": w["corpus"], "baseline": w["hf"], "tokenizers": w["vocab"]},
                             {"--out": ".csv", "--segments-out": ".csv"}),
        "compare ids": (["compare", w["corpus"], t, f"ids:{w['ids']}?vocab={w['hf']}"],
                        {"corpus_spec": w["corpus"], "tokenizers": w["ids"], "tokenizers#vocab": w["hf"]},
                        {"--out": ".json", "--segments-out": ".json"}),
        "budget": (["budget", w["docs"], t, hf], {"corpus_spec": w["docs"] + "/cmn_Hans/000.jsonl", "tokenizers": w["hf"]},
                   {"--out": ".csv"}),
        "train": (["train", w["corpus"], "--algo", "bpe", "--vocab-size", "300"], {"corpus_spec": w["corpus"]}, {"--out": "dir"}),
        "sweep": (["sweep", w["docs"], "--sizes", "300,400,500,600", "--eval", w["eval"]],
                  {"corpus_spec": w["docs"] + "/eng_Latn/000.jsonl", "eval_spec": w["eval"]}, {"--out": ".csv", "--plot": ".png"}),
        "extend": (["extend", hf, "--corpus", w["corpus"], "--languages", "zh", "--add", "10", "--eval", w["eval"]],
                   {"base": w["hf"], "corpus_spec": w["corpus"], "eval_spec": w["eval"]}, {"--out": "dir"}),
        "inventory": (["inventory", t, hf, t, f"spm:{w['spm']}"], {"tokenizers": w["hf"], "tokenizers#spm": w["spm"]},
                      {"--out": ".json"}),
        "morphscore": (["morphscore", t, hf, t, f"spm:{w['spm']}", "--data", w["morph"]],
                       {"tokenizers": w["hf"], "tokenizers#spm": w["spm"], "data_dir": w["morph"] + "/english_morph_data.csv"},
                       {"--out": ".csv"}),
        # a file under a folder an option names is an input whether or not the run opens it (round 5:
        # --languages tur skips english_morph_data.csv, which --out must still never replace)
        "morphscore languages": (["morphscore", t, hf, "--data", w["morph"], "--languages", "tur"],
                                 {"data_dir": w["morph"] + "/english_morph_data.csv"}, {"--out": ".csv"}),
        "fit-estimator": (["fit-estimator", w["corpus"], t, hf], {"corpus_spec": w["corpus"], "tokenizer_spec": w["hf"]},
                          {"--out": ".json"}),
        "overlap": (["overlap", t, hf, t, f"wordpiece:{w['vocab']}"], {"tokenizers": w["hf"], "tokenizers#wp": w["vocab"]},
                    {"--out": ".csv", "--png": ".png"}),
        "groups": (["groups", w["results"], "--by", "custom", "--groups", w["groups"]],
                   {"results": w["results"], "groups_file": w["groups"]}, {"--out": ".csv", "--png": ".png"}),
        "model-info": (["model-info", "--model", "tiny", "--models-file", w["models"]], {"models_file": w["models"]}, {}),
        "cost": (["cost", "--results", w["results"], "--model", "tiny", "--models-file", w["models"], "--gpu", "h100-sxm",
                  "--train-chars", "1e9"], {"results": w["results"], "models_file": w["models"]}, {"--out": ".csv"}),
        "vocab-plan": (["vocab-plan", "--sweep", w["sweep"], "--model", "tiny", "--models-file", w["models"]],
                       {"sweep_file": w["sweep"], "models_file": w["models"]}, {"--out": ".csv", "--png": ".png"}),
        "vocab-plan corpus": (["vocab-plan", "--corpus", w["corpus"], "--sizes", "300,400,500,600", "--model", "tiny",
                               "--models-file", w["models"], "--eval", w["eval"]],
                              {"corpus_spec": w["corpus"], "models_file": w["models"], "eval_spec": w["eval"]}, {"--out": ".csv"}),
        "show": (["show", "你好", t, hf], {"tokenizers": w["hf"]}, {"--html": ".html"}),
        "robustness": (["robustness", w["corpus"], t, hf], {"corpus_spec": w["corpus"], "tokenizers": w["hf"]}, {"--out": ".csv"}),
        "worst": (["worst", w["segments"], t, "hf/tokenizer"], {"segments_file": w["segments"]}, {"--out": ".csv"}),
        "report": (["report", w["results"]], {"results": w["results"]}, {"--out": ".html", "--png": "dir"}),
        "report corpus": (["report", "--corpus", w["corpus"], t, hf, "--eval", w["eval"]],
                          {"corpus_spec": w["corpus"], "tokenizers": w["hf"], "eval_spec": w["eval"]}, {"--out": ".html"}),
    }


def commands() -> dict[str, click.Command]:
    out = {}

    def walk(g, prefix=""):
        for name, c in g.commands.items():
            if isinstance(c, click.Group):
                walk(c, prefix + name + " ")
            else:
                out[prefix + name] = c
    walk(cli)
    return out


def test_every_command_and_input_option_is_walked(tmp_path):
    """The walk covers every command, every option that may name a file and every output option."""
    w = {k: str(tmp_path / k) for k in ("corpus", "cal", "eval", "docs", "hf", "ranks", "vocab", "spm", "ids", "results",
                                        "segments", "sweep", "groups", "models", "dir", "morph")}
    table = cases(w)
    for name, cmd in commands().items():
        mine = [k for k in table if k == name or k.startswith(name + " ")]
        assert mine, f"{name}: not walked by tests/test_inputs_protected.py"
        path_opts = {p.name for p in cmd.params if isinstance(p.type, click.types.StringParamType)
                     and not getattr(p, "is_flag", False) and p.name not in NOT_PATHS and p.name not in OUTPUT_PARAMS}
        tried = {o.split("#")[0] for k in mine for o in table[k][1]}
        assert path_opts <= tried, f"{name}: options naming files but never tried as the output: {path_opts - tried}"
        outs = {p.opts[0] for p in cmd.params if p.name in OUTPUT_PARAMS}
        assert outs == {o for k in mine for o in table[k][2]}, f"{name}: output options {outs}"


def _digests(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def _argv_with(argv: list[str], option: str, value: str, outputs: dict[str, str], tmp: Path) -> list[str]:
    """``argv`` with ``option`` set to ``value`` and every other required output set to a fresh path."""
    extra = []
    for o, kind in outputs.items():
        if o == option:
            extra += [o, value]
        elif o == "--out":    # some commands require --out: give it a harmless one
            extra += [o, str(tmp / ("fresh" if kind == "dir" else "fresh" + kind))]
    return argv + extra


def _walk_cases(world):
    for name, (argv, ins, outs) in cases(world).items():
        for opt, path in ins.items():
            for out in outs:
                yield name, argv, opt, path, out, outs


def test_no_output_may_replace_an_input(world, tmp_path, capsys, monkeypatch):
    """Every command × every input × every output option: refused before any work, nothing changed."""
    monkeypatch.chdir(tmp_path)
    root = Path(world["dir"])
    before = _digests(root)
    n = 0
    for name, argv, opt, path, out, outs in _walk_cases(world):
        rc = main(_argv_with(argv, out, path, outs, tmp_path))
        err = capsys.readouterr().err.strip()
        assert rc == 2, (name, opt, out, err)
        assert "is an input of this run" in err and len(err.splitlines()) == 1, (name, opt, out, err)
        n += 1
    assert _digests(root) == before
    assert n >= 40


@pytest.mark.parametrize("argv_of, victim", [
    (lambda w: ["compare", w["corpus"], "-t", f"hf:{w['hf']}"], "hf"),
    (lambda w: ["compare", w["corpus"], "-t", f"spm:{w['spm']}"], "spm"),
    (lambda w: ["compare", w["corpus"], "-t", f"wordpiece:{w['vocab']}"], "vocab"),
    (lambda w: ["compare", w["corpus"], "-t", f"tiktoken:{w['ranks']}?pattern=gpt2"], "ranks"),
    (lambda w: ["compare", w["corpus"], "-t", f"ids:{w['ids']}?vocab={w['hf']}"], "ids"),
    (lambda w: ["compare", w["docs"], "-t", f"hf:{w['hf']}", "--calibrate", w["cal"]], "cal"),
    (lambda w: ["inventory", "-t", f"spm:{w['spm']}"], "spm"),
    (lambda w: ["groups", w["results"], "--by", "custom", "--groups", w["groups"]], "groups"),
])
def test_the_writer_refuses_what_the_run_opened_even_without_the_early_check(world, tmp_path, capsys, monkeypatch, argv_of, victim):
    """With the early check and the command-line record switched off, the files the run itself
    opened are still refused by the checked writer: the record is made where inputs are opened."""
    import tokstat.io as io_mod
    from tokstat.cli import measure, options, price, report, vocab

    monkeypatch.setattr(options, "paths_named", lambda value: [])
    real = io_mod.check_outputs
    monkeypatch.setattr(io_mod, "check_outputs", lambda outputs, inputs=(): real(outputs))
    for job in (measure, price, vocab, report):
        monkeypatch.setattr(job, "check_outputs", lambda outputs, inputs=(): None)
    target = Path(world[victim])
    before = _digests(Path(world["dir"]))
    rc = main(argv_of(world) + ["--out", str(target)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "is an input of this run" in err, err
    assert _digests(Path(world["dir"])) == before


def test_a_folder_output_never_replaces_a_file_the_run_read_inside_it(tmp_path):
    """A folder output receives files by name: one that the run read (``DIR/tokenizer.json``) is refused,
    the folder and the file untouched; a new name beside it is written."""
    from tokstat.errors import TokstatError
    from tokstat.io import read_input, run_scope, write_outputs

    d = tmp_path / "tok"
    d.mkdir()
    (d / "tokenizer.json").write_bytes(b"the base")
    with run_scope():
        read_input(d / "tokenizer.json", "tokenizer file")
        with pytest.raises(TokstatError, match="is an input of this run"):
            write_outputs({d: {"tokenizer.json": b"extended", "metadata.json": b"{}"}})
        assert sorted(q.name for q in d.iterdir()) == ["tokenizer.json"]
        write_outputs({d: {"metadata.json": b"{}"}})
    assert (d / "tokenizer.json").read_bytes() == b"the base" and (d / "metadata.json").read_bytes() == b"{}"
    write_outputs({d: {"tokenizer.json": b"outside a run nothing is recorded"}})


def test_an_input_changed_during_the_run_is_an_error(tmp_path):
    """Read, then changed (grown, or replaced by another file), then read again or written after: one
    error naming it, nothing written."""
    from tokstat.errors import TokstatError
    from tokstat.io import read_input, run_scope, write_outputs

    f = tmp_path / "shard.jsonl"
    f.write_bytes(b'{"text": "a"}\n')
    with run_scope():
        read_input(f)
        with open(f, "ab") as g:
            g.write(b'{"text": "b"}\n')
        with pytest.raises(TokstatError, match=r"shard\.jsonl: the input changed while this run was reading it \(14 bytes, then 28\)"):
            read_input(f)
        with pytest.raises(TokstatError, match="changed while this run was reading it"):
            write_outputs({tmp_path / "out.csv": b"x"})
    assert not (tmp_path / "out.csv").exists()
