"""Asking a system under test every question: bounded concurrency, a run deadline, the cache.

:func:`ask_all` sends each question's request (:func:`~ragassay.system.reply.fill_request`)
on at most ``concurrency`` threads, in question order, with a progress bar; no call is
started once ``run_timeout_s`` has passed. With ``cache_dir``, each prediction is kept
under a key of the system's identity, the question (id and text), ``top_k`` and the
request, so that a rerun asks only the questions that have no reply yet (a failed call is
never cached). A failed call leaves its question without a prediction, with the error:
not measured, never scored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .. import progress as stages
from ..endpoint import EndpointError, cache_key, deadline_after, map_bounded
from ..endpoint.cache import cache_file, read_entry, write_entry
from ..schema import Prediction, Question
from .callers import HttpSystem, PythonSystem
from .config import SystemConfig
from .reply import fill_request


def ask_all(system: HttpSystem | PythonSystem, cfg: SystemConfig,
            questions: Sequence[Question], top_k: int, *, progress: bool = False,
            ) -> tuple[dict[str, Prediction], dict[str, str], dict[str, Any], int]:
    """``(predictions, errors, identity, cached)``: each question's prediction, or the
    error of its call (``"system call failed: …"``), the system's identity with the
    versions it reported (``system_version``, sorted), and how many replies came from the
    cache."""
    identity = system.identity()
    k = cfg.top_k or top_k
    versions: set[str] = set()
    cached: list[int] = []  # one per reply from the cache (appends are atomic)

    def one(q: Question) -> Prediction:
        request = fill_request(cfg.request, q.question_id, q.question, k)
        key = cache_key({"kind": "system", "system": identity, "question_id": q.question_id,
                         "question": q.question, "top_k": k, "request": request})
        path = cache_file(cfg.cache_dir, key)
        hit = read_entry(path)
        if hit is not None:
            try:
                pred = Prediction.model_validate_json(hit["text"])
                cached.append(1)
                return pred
            except ValueError:
                pass  # an entry of another version: ask again and overwrite it
        if isinstance(system, HttpSystem):
            system.check_stopped()
        pred = system.ask(request, q.question_id, key)
        write_entry(path, {"system": identity, "question_id": q.question_id,
                           "text": json.dumps(pred.model_dump(mode="json"),
                                              ensure_ascii=False)})
        return pred

    on = True if progress else None
    with stages.bar("asking the system", len(questions), enabled=on) as bar:
        def counted(q: Question) -> Prediction:
            try:
                return one(q)
            finally:
                bar.advance()
        results = map_bounded(counted, list(questions), cfg.concurrency or 1,
                              deadline_after(cfg.run_timeout_s))
    preds: dict[str, Prediction] = {}
    errors: dict[str, str] = {}
    for q, res in zip(questions, results, strict=True):
        if isinstance(res, EndpointError):
            errors[q.question_id] = f"system call failed: {res}"
        else:
            preds[q.question_id] = res
            version = res.metadata.get("system_version")
            if isinstance(version, str):
                versions.add(version)
    return preds, errors, {**identity, "system_version": sorted(versions)}, len(cached)
