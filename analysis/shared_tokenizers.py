"""tokstat specs for the pretrained tokenizers in ../shared/tokenizers (see each PROVENANCE.md).

Left out: ``gpt2`` (encoder.json + vocab.bpe: the same vocabulary as ``r50k_base``, which is here)
and ``clip`` (a lower-casing BPE for English captions in a format tokstat does not read).
"""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
T = SHARED / "tokenizers"

SPECS = {
    "cl100k_base": f"tiktoken:{T}/cl100k_base/cl100k_base.tiktoken",
    "o200k_base": f"tiktoken:{T}/o200k_base/o200k_base.tiktoken",
    "p50k_base": f"tiktoken:{T}/p50k_base/p50k_base.tiktoken",
    "r50k_base": f"tiktoken:{T}/r50k_base/r50k_base.tiktoken",
    "whisper-multilingual": f"tiktoken:{T}/whisper-multilingual/multilingual.tiktoken?pattern=gpt2",
    "llama3": f"tiktoken:{T}/llama3/tokenizer.model?pattern=llama3",
    "llama4": f"tiktoken:{T}/llama4/tokenizer.model?pattern=llama4",
    "mistral-nemo-tekken": f"tiktoken:{T}/mistral-nemo-tekken/tekken_240718.json",
    "qwen3": f"hf:{T}/qwen3/tokenizer.json",
    "deepseek-v3": f"hf:{T}/deepseek-v3/deepseek_tokenizer.json",
    "baichuan2": f"hf:{T}/baichuan2/tokenizer.json",
    "chatglm3-6b": f"hf:{T}/chatglm3-6b/tokenizer.json",
    "claude-legacy": f"hf:{T}/claude-legacy/anthropic_tokenizer.json",
    "all-minilm-l6-v2": f"hf:{T}/all-minilm-l6-v2/tokenizer.json",
    "bert-base-cased": f"wordpiece:{T}/bert-base-cased/vocab.txt",
    "bert-base-uncased": f"wordpiece:{T}/bert-base-uncased/vocab.txt",
    "bert-base-chinese": f"wordpiece:{T}/bert-base-chinese/vocab.txt",
    "bert-base-multilingual-cased": f"wordpiece:{T}/bert-base-multilingual-cased/vocab.txt",
    "llama2": f"spm:{T}/llama2/tokenizer.model",
    "chinese-llama-2": f"spm:{T}/chinese-llama-2/tokenizer.model",
    "mistral-7b-v0.1": f"spm:{T}/mistral-7b-v0.1/tokenizer.model.v1",
    "mistral-v3": f"spm:{T}/mistral-v3/mistral_instruct_tokenizer_240323.model.v3",
    "internlm-7b": f"spm:{T}/internlm-7b/V7_sft.model",
    "t5": f"spm:{T}/t5/spiece.model",
}
