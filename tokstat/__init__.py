"""tokstat: what a tokenizer costs you, per language."""

from .corpus import Corpus, CorpusInfo, Segment, corpus_info
from .errors import TokstatError
from .loaders import load_corpus

__version__ = "0.1.0"

from .adapters import load_tokenizer  # noqa: E402
from .compare import compare  # noqa: E402
__all__ = ["Corpus", "CorpusInfo", "Segment", "TokstatError", "corpus_info", "load_corpus", "load_tokenizer", "compare", "__version__"]
