"""Build, save, load and verify an index: ``index.json`` + ``embeddings.npy`` in one folder.

- :mod:`.build`: :func:`build_index` (load → chunk → embed → write), :func:`embed_chunks`,
  :func:`measure_search`.
- :mod:`.format`: the two files; :func:`load_index` verifies them (sidecar rows, dimension,
  sha256) with messages naming the file and field.
- :mod:`.staleness`: :func:`fingerprint` and :func:`index_status` (is it up to date?).

The chunk store itself, :class:`~ragassay.store.Index`, and :func:`read_chunks` live in
:mod:`ragassay.store` (no embedder or loader code); they are exported here too.
"""

from ..store import ChunkRecord, Index, read_chunks
from .build import build_index, embed_chunks, measure_search, skipped_note
from .format import EMBEDDINGS, INDEX_JSON, load_index, write_index
from .staleness import fingerprint, index_status

__all__ = [
    "EMBEDDINGS",
    "INDEX_JSON",
    "ChunkRecord",
    "Index",
    "build_index",
    "embed_chunks",
    "fingerprint",
    "index_status",
    "read_chunks",
    "load_index",
    "measure_search",
    "skipped_note",
    "write_index",
]
