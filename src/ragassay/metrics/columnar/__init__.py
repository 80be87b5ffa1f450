"""The columnar fast path of the IR measures: TREC files and arrays read into numpy columns
(:mod:`.reader`), ids as 64-bit keys (:mod:`.keys`), a run joined with its qrels
(:mod:`.joins`) and ranked in trec_eval's order (:mod:`.ranking`), and the join turned into
what the kernels read (:mod:`.relevance`), without a Python object per line.

Everything here is an optimisation of what :mod:`ragassay.metrics.reference` states with
plain dicts and loops (the oracle); ``tests/differential/test_reference.py`` checks that
both give the same results on random files, ties, negative grades and every option.
"""

from .joins import Joined, join, join_grouped, join_sorted
from .keys import duplicate_rows, id_hash, pair_hash, run_blocks
from .ranking import by_query_and_rank, padded, rank_in_rows, rank_rows
from .reader import QRELS_COLUMNS, RUN_COLUMNS, Table, encode_ids, encode_repeated, read_table
from .relevance import ideal_grades, relevance_rows

__all__ = [
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "Joined",
    "Table",
    "by_query_and_rank",
    "duplicate_rows",
    "encode_ids",
    "encode_repeated",
    "id_hash",
    "ideal_grades",
    "join",
    "join_grouped",
    "join_sorted",
    "padded",
    "pair_hash",
    "rank_in_rows",
    "rank_rows",
    "read_table",
    "relevance_rows",
    "run_blocks",
]
