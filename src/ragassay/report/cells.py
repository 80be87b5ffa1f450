"""Per-question texts that every view shows alike: the rank of the first gold chunk and the
failure evidence, one formatter each for the terminal, ``summary.md`` and the pages.

- :func:`rank_text`: ``—`` without gold, ``not retrieved`` when no gold chunk is in the
  retrieved list (rank 0 in the record), the rank when it is within ``k``, and
  ``7 (beyond k=3)`` when the first gold chunk is in the list but beyond the cut-off ``k``.
- :func:`evidence_text`: a failure label's evidence (``failure_cases.jsonl``) as one line
  of text, ``rank: 0; rank_cutoff: 5; ranked_above: a::chunk-001, b::chunk-002``.
"""

from __future__ import annotations

import math
from typing import Any

NO_GOLD = "—"
NOT_RETRIEVED = "not retrieved"


def rank_text(rank: Any, k: int) -> str:
    """The rank cell of a question (see the module docstring); ``rank`` is the record's
    ``retrieval.rank`` (None: no gold; 0: no gold chunk retrieved)."""
    if rank is None or isinstance(rank, bool) or not isinstance(rank, int):
        return NO_GOLD
    if rank <= 0:
        return NOT_RETRIEVED
    return str(rank) if rank <= k else f"{rank} (beyond k={k})"


def _value_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}" if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return f"({evidence_text(value)})" if value else "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(_value_text(v) for v in value) if value else "none"
    return str(value)


def evidence_text(evidence: Any) -> str:
    """Failure evidence as text: a mapping as ``key: value`` pairs joined by ``; `` (lists
    joined by ``, ``, an empty one ``none``, nested mappings in parentheses, numbers with
    three decimals, flags ``yes``/``no``, None ``—``); anything else as its value text.
    ``evidence_text({})`` is ``""`` (a label without evidence)."""
    if isinstance(evidence, dict):
        return "; ".join(f"{key}: {_value_text(value)}" for key, value in evidence.items())
    return _value_text(evidence)
