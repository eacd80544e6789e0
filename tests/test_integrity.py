"""Cache and file integrity: published hashes, ?sha256= pins, hub loads that never run remote code,
and one-line errors for corrupt tokenizer files."""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest

from tokstat import load_corpus, load_tokenizer
from tokstat.compare import resolve_tokenizers
from tokstat.errors import TokstatError
from tokstat.integrity import published_tiktoken_hashes

from tok_fixtures import SHARED_TOK


@pytest.fixture
def cl100k_file():
    p = SHARED_TOK / "cl100k_base" / "cl100k_base.tiktoken"
    if not p.is_file():
        pytest.skip("../shared is absent")
    return p


def test_published_hashes_are_tiktokens_own():
    import tiktoken_ext.openai_public as op

    hs = published_tiktoken_hashes()
    assert set(hs) >= {"r50k_base", "p50k_base", "cl100k_base", "o200k_base"}
    assert all(len(h) == 64 for h in hs.values())
    assert hs["cl100k_base"] in Path(op.__file__).read_text()


def test_intact_published_file_loads_and_matches(cl100k_file, tmp_path):
    p = tmp_path / "cl100k_base.tiktoken"
    shutil.copy(cl100k_file, p)
    a = load_tokenizer(f"tiktoken:{p}")
    assert a.file_hash == published_tiktoken_hashes()["cl100k_base"] == hashlib.sha256(p.read_bytes()).hexdigest()


def test_one_changed_byte_is_reported(cl100k_file, tmp_path):
    p = tmp_path / "cl100k_base.tiktoken"
    data = bytearray(cl100k_file.read_bytes())
    data[-3] = ord("9") if data[-3] != ord("9") else ord("8")   # one rank changed
    p.write_bytes(bytes(data))
    with pytest.raises(TokstatError, match=r"cl100k_base\.tiktoken: sha256 .* does not match the published"):
        load_tokenizer(f"tiktoken:{p}")


def test_registry_seed_from_modified_file_is_refused(cl100k_file, tmp_path, monkeypatch):
    import tiktoken.registry

    d = tmp_path / "toks"
    d.mkdir()
    (d / "cl100k_base.tiktoken").write_bytes(cl100k_file.read_bytes()[:-10] + b"\n")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOKSTAT_TOKENIZERS", str(d))
    monkeypatch.chdir(tmp_path)              # ./tokenizers is not found from here
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    with pytest.raises(TokstatError, match=r"toks/cl100k_base\.tiktoken: sha256 .* does not match"):
        load_tokenizer("tiktoken:cl100k_base")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


@pytest.mark.parametrize("kind", ["spm", "train"])
def test_sha256_pin(kind, tmp_path):
    if kind == "spm":
        if not SHARED_TOK.is_dir():
            pytest.skip("../shared is absent")
        spec, corpus = f"spm:{SHARED_TOK}/llama2/tokenizer.model", None
        digest = hashlib.sha256((SHARED_TOK / "llama2/tokenizer.model").read_bytes()).hexdigest()
    else:
        corpus = load_corpus("sample")
        spec = "train:bpe:600"
        digest = resolve_tokenizers([spec], corpus)[0].file_hash

    def load(s):
        return resolve_tokenizers([s], corpus)[0] if kind == "train" else load_tokenizer(s)

    for pin in (digest, digest[:8], digest[:8].upper()):
        assert load(f"{spec}?sha256={pin}").file_hash == digest
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:12]
    with pytest.raises(TokstatError, match="the spec pins"):
        load(f"{spec}?sha256={wrong}")


def test_hub_load_never_runs_remote_code(tmp_path, monkeypatch):
    """A hub repo shipping custom tokenizer code: only tokenizer.json is read; the code never runs."""
    from tokstat.train import train

    repo = tmp_path / "hub" / "models--evil--tok"
    snap = repo / "snapshots" / ("b" * 40)
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("b" * 40)
    train(load_corpus("sample"), "bpe", 500, out=tmp_path / "t")
    shutil.copy(tmp_path / "t" / "tokenizer.json", snap / "tokenizer.json")
    marker = tmp_path / "PWNED"
    (snap / "tokenization_evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (snap / "tokenizer_config.json").write_text(
        '{"auto_map": {"AutoTokenizer": ["tokenization_evil.EvilTokenizer", null]}, "tokenizer_class": "EvilTokenizer"}')
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    a = load_tokenizer("hf:evil/tok")
    assert a.encode_batch(["hello"])[0] and not marker.exists()
    assert "tokenization_evil" not in sys.modules


def test_nothing_is_unpickled_while_loading(tmp_path, monkeypatch):
    """Loading every kind of tokenizer file and corpus tokstat reads never calls pickle."""
    import pickle

    import datasets

    from tokstat.train import train

    train(load_corpus("sample"), "bpe", 400, out=tmp_path / "hf")
    train(load_corpus("sample"), "spm-bpe", 2000, out=tmp_path / "spm")
    datasets.Dataset.from_dict({"en": ["a b"], "zh": ["你好"]}).save_to_disk(str(tmp_path / "ds"))
    calls = []

    def refuse(*a, **k):
        calls.append(a[:1])
        raise AssertionError("unpickling")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    for spec in (f"hf:{tmp_path}/hf/tokenizer.json", f"spm:{tmp_path}/spm/tokenizer.model"):
        assert load_tokenizer(spec).encode_batch(["hello 你好"])[0]
    assert len(list(load_corpus(str(tmp_path / "ds"), columns={"en": "en", "zh": "zh"}))) == 1
    assert not calls


@pytest.mark.parametrize("name, data, kind, msg", [
    ("tokenizer.json", b"\x00\x01garbage", "hf", "not a valid tokenizer.json"),
    ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": 3}}', "hf", "not a valid tokenizer.json"),
    ("tokenizer.model", b"\x0a\x05hello" * 10, "spm", "not a SentencePiece model"),
    ("x.tiktoken", b"no-rank-here\n", "tiktoken", "not a tiktoken ranks file"),
    ("vocab.txt", b"", "wordpiece", "WordPiece"),
])
def test_corrupt_tokenizer_files_one_line(tmp_path, name, data, kind, msg):
    p = tmp_path / name
    p.write_bytes(data)
    spec = f"{kind}:{p}" + ("?pattern=gpt2" if kind == "tiktoken" else "")
    with pytest.raises(TokstatError) as e:
        load_tokenizer(spec)
    assert msg in str(e.value) and str(p) in str(e.value) and "\n" not in str(e.value) and "fix:" in str(e.value)


# ---------------------------------------------------------------- counts come from the bytes the signature names

def _ranks(merges: list[bytes]) -> bytes:
    """A complete byte-level ranks file: the 256 single bytes, then ``merges``."""
    import base64

    toks = [bytes([b]) for b in range(256)] + merges
    return b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(toks))


def _count(spec: str, text: str = "abcabc") -> list[int]:
    a = load_tokenizer(spec)
    return a.encode_batch([text])[0], a.file_hash


def test_a_changed_ranks_file_is_read_again_never_from_a_cache(tmp_path, monkeypatch):
    """tiktoken caches local ranks files by the path string: tokstat must not. After the file
    changes, the new ranks are used, the signature names the new bytes and a pin of the old hash fails."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "x.tiktoken"
    p.write_bytes(_ranks([b"ab"]))
    ids_a, hash_a = _count(f"tiktoken:{p}?pattern=cl100k_base")
    assert hash_a == hashlib.sha256(p.read_bytes()).hexdigest() and 256 in ids_a and 257 not in ids_a
    p.write_bytes(_ranks([b"bc", b"abc"]))
    ids_b, hash_b = _count(f"tiktoken:{p}?pattern=cl100k_base&sha256={hashlib.sha256(p.read_bytes()).hexdigest()}")
    assert hash_b == hashlib.sha256(p.read_bytes()).hexdigest() != hash_a
    assert ids_b == [257, 257]                       # "abc" is rank 257 in the new file
    with pytest.raises(TokstatError, match="the spec pins"):
        load_tokenizer(f"tiktoken:{p}?pattern=cl100k_base&sha256={hash_a}")


def test_a_file_of_the_same_name_in_another_folder_has_its_own_ranks(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "x.tiktoken").write_bytes(_ranks([b"ab"]))
    (tmp_path / "two" / "x.tiktoken").write_bytes(_ranks([b"ca"]))
    monkeypatch.chdir(tmp_path / "one")      # the same spec string, run from two folders
    ids1, h1 = _count("tiktoken:./x.tiktoken?pattern=cl100k_base", "abca")
    monkeypatch.chdir(tmp_path / "two")
    ids2, h2 = _count("tiktoken:./x.tiktoken?pattern=cl100k_base", "abca")
    assert ids1 == [256, ord("c"), ord("a")] and ids2 == [ord("a"), ord("b"), 256] and h1 != h2


@pytest.mark.parametrize("kind, name", [("tiktoken", "x.tiktoken?pattern=cl100k_base"), ("hf", "tokenizer.json"),
                                        ("spm", "tokenizer.model"), ("wordpiece", "vocab.txt")])
def test_every_tokenizer_file_is_hashed_from_the_bytes_it_is_built_from(tmp_path, kind, name):
    """Each kind reads its file once: the signature's hash is the sha256 of the file that was parsed."""
    from tok_fixtures import tiny_files

    path = tiny_files(tmp_path)[kind]
    a = load_tokenizer(f"{kind}:{path}" + ("?pattern=cl100k_base" if kind == "tiktoken" else ""))
    assert a.file_hash == hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_wordpiece_vocab_is_read_as_tokenizers_reads_it(tmp_path):
    """tokstat parses vocab.txt from the bytes it hashed; the result equals ``WordPiece.read_file``."""
    from tokenizers.models import WordPiece

    from tokstat.adapters.hf import wordpiece_vocab

    p = tmp_path / "vocab.txt"
    p.write_bytes("[UNK]\r\n[CLS]\nhello  \n##s\t\nhello\n\n中\n##文 \n".encode())
    assert wordpiece_vocab(p.read_bytes().decode()) == WordPiece.read_file(str(p))
    for f in sorted(SHARED_TOK.glob("*/vocab.txt")):
        assert wordpiece_vocab(f.read_bytes().decode()) == WordPiece.read_file(str(f)), f
