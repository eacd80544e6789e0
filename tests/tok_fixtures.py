"""Shared tokenizers from ../shared/tokenizers and how to call each library directly (the oracles)."""

from __future__ import annotations

from pathlib import Path

SHARED_TOK = Path(__file__).resolve().parent.parent.parent / "shared" / "tokenizers"

def published_pattern(name: str) -> str:
    """The split pattern as its publisher ships it, never tokstat's own table: OpenAI encodings from
    tiktoken's registry (``tiktoken_ext.openai_public``, its constructor run with the ranks download
    stubbed out), Llama 3 from the ``pat_str`` of Meta's ``tokenizer.py`` quoted in PROVENANCE.md."""
    import re
    from unittest import mock

    import tiktoken_ext.openai_public as op

    if name in op.ENCODING_CONSTRUCTORS:
        with mock.patch.object(op, "load_tiktoken_bpe", lambda *a, **k: {}):
            return op.ENCODING_CONSTRUCTORS[name]()["pat_str"]
    prov = (SHARED_TOK / name / "PROVENANCE.md").read_text(encoding="utf-8")
    return re.search(r'pat_str=r"(.*?)",\n', prov).group(1)


# name -> (tokstat spec, oracle factory returning encode(text) -> ids)
def _tiktoken_file(path, pattern):
    def make():
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        enc = tiktoken.Encoding("x", pat_str=published_pattern(pattern), mergeable_ranks=load_tiktoken_bpe(str(path)),
                                special_tokens={})
        return enc.encode_ordinary
    return make


def _hf(path):
    def make():
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(path))
        return lambda s: tok.encode(s, add_special_tokens=False).ids
    return make


def _wp(path, lower):
    def make():
        from tokenizers import BertWordPieceTokenizer

        tok = BertWordPieceTokenizer(str(path), lowercase=lower)
        return lambda s: tok.encode(s, add_special_tokens=False).ids
    return make


def _spm(path):
    def make():
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=str(path))
        return lambda s: sp.encode(s)
    return make


T = SHARED_TOK
CASES = {
    "cl100k_base": (f"tiktoken:{T}/cl100k_base/cl100k_base.tiktoken", _tiktoken_file(T / "cl100k_base/cl100k_base.tiktoken", "cl100k_base")),
    "o200k_base": (f"tiktoken:{T}/o200k_base/o200k_base.tiktoken", _tiktoken_file(T / "o200k_base/o200k_base.tiktoken", "o200k_base")),
    "r50k_base": (f"tiktoken:{T}/r50k_base/r50k_base.tiktoken", _tiktoken_file(T / "r50k_base/r50k_base.tiktoken", "r50k_base")),
    "llama3": (f"tiktoken:{T}/llama3/tokenizer.model?pattern=llama3", _tiktoken_file(T / "llama3/tokenizer.model", "llama3")),
    "qwen3": (f"hf:{T}/qwen3/tokenizer.json", _hf(T / "qwen3/tokenizer.json")),
    "deepseek-v3": (f"hf:{T}/deepseek-v3/deepseek_tokenizer.json", _hf(T / "deepseek-v3/deepseek_tokenizer.json")),
    "bert-base-chinese": (f"wordpiece:{T}/bert-base-chinese/vocab.txt", _wp(T / "bert-base-chinese/vocab.txt", True)),
    "bert-base-multilingual-cased": (f"wordpiece:{T}/bert-base-multilingual-cased/vocab.txt",
                                     _wp(T / "bert-base-multilingual-cased/vocab.txt", False)),
    "llama2": (f"spm:{T}/llama2/tokenizer.model", _spm(T / "llama2/tokenizer.model")),
    "chinese-llama-2": (f"spm:{T}/chinese-llama-2/tokenizer.model", _spm(T / "chinese-llama-2/tokenizer.model")),
    "t5": (f"spm:{T}/t5/spiece.model", _spm(T / "t5/spiece.model")),
    "mistral-v3": (f"spm:{T}/mistral-v3/mistral_instruct_tokenizer_240323.model.v3",
                   _spm(T / "mistral-v3/mistral_instruct_tokenizer_240323.model.v3")),
}
#: tokenizers whose spans tile the whole text (lossless: byte-level BPE, or SentencePiece with byte fallback
#: and identity normalisation)
LOSSLESS = {"cl100k_base", "o200k_base", "r50k_base", "llama3", "qwen3", "deepseek-v3", "llama2", "chinese-llama-2",
            "mistral-v3"}


def tiny_files(folder) -> dict[str, str]:
    """One small tokenizer file of each kind, made here (no ../shared): a byte-level ranks file, a
    BPE ``tokenizer.json``, a SentencePiece ``tokenizer.model`` and a WordPiece ``vocab.txt``."""
    import base64
    import io

    import sentencepiece as spm
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    folder = Path(folder)
    texts = ["the cat sat on the mat", "語言模型 tokens and 中文", "hello world, hello tokens"] * 20
    out = {}
    toks = [bytes([b]) for b in range(256)] + [b"th", b"the"]
    out["tiktoken"] = folder / "x.tiktoken"
    out["tiktoken"].write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(toks)))
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]"], show_progress=False))
    (folder / "hf").mkdir()
    out["hf"] = folder / "hf" / "tokenizer.json"
    tok.save(str(out["hf"]))
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=buf, vocab_size=40, model_type="bpe",
                                   character_coverage=1.0, minloglevel=2)
    (folder / "spm").mkdir()
    out["spm"] = folder / "spm" / "tokenizer.model"
    out["spm"].write_bytes(buf.getvalue())
    (folder / "wp").mkdir()
    out["wordpiece"] = folder / "wp" / "vocab.txt"
    out["wordpiece"].write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\ncat\n##s\nhello\n中\n文\n")
    return {k: str(v) for k, v in out.items()}


def sample_bpe(folder, name: str, size: int, *, drop_non_ascii: bool = False) -> str:
    """A byte-level BPE of ``size`` trained on the bundled zh/en sample, saved as
    ``folder/name/tokenizer.json``; returns its ``hf:`` spec. ``drop_non_ascii``: its normaliser
    deletes every non-ASCII character (a tokenizer that loses text and looks cheap)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    folder = Path(folder)
    text = folder / "sample-lines.txt"
    if not text.exists():
        sample = Path(__file__).resolve().parent.parent / "corpora/sample-zh-en/sample.tsv"
        text.write_text(sample.read_text(encoding="utf-8").replace("\t", "\n"), encoding="utf-8")
    t = Tokenizer(models.BPE())
    if drop_non_ascii:
        t.normalizer = normalizers.Replace(Regex(r"[^\x00-\x7f]"), "")
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    t.train([str(text)], trainers.BpeTrainer(vocab_size=size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    (folder / name).mkdir()
    t.save(str(folder / name / "tokenizer.json"))
    return f"hf:{folder / name / 'tokenizer.json'}"
