"""Importers of public QA and retrieval sets: each reads one layout into an
:class:`~ragassay.importers.common.ImportedSet` that :func:`write_set` writes as a folder
``ragassay index`` and ``ragassay run`` take as it is.

One module per layout: :mod:`.squad` (SQuAD v1/v2, KorQuAD v1), :mod:`.beir` (BEIR),
:mod:`.trec` (TREC qrels + topics + corpus JSONL), :mod:`.bidmate` (the contract project).
"""

from .beir import read_beir
from .bidmate import read_bidmate
from .common import ImportedSet, Skipped, write_set
from .squad import read_squad
from .trec import read_trec

__all__ = ["ImportedSet", "Skipped", "read_beir", "read_bidmate", "read_squad", "read_trec",
           "write_set"]
