"""The evaluation core and the public Python API: questions, gold, predictions and evidence in,
a :class:`~ragassay.runfolder.RunResult` out.

    load → predict → score → aggregate → RunResult

Every command (`run`, `sweep`, the contract command) and the API go through the same
stages, so a verdict is computed once per question and every output renders that record:
:mod:`ragassay.predict` (predictions), :mod:`ragassay.scoring` (scores, claims, the judge),
:mod:`ragassay.aggregate` (the totals), over the units of :mod:`ragassay.units`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .aggregate import summarize
from .anchor import anchor_gold
from .config import EvalConfig
from .gold import check_gold, gold_warnings
from .inputs import Inputs, Predicted
from .predictions import check_predictions
from .report.views import VIEWS
from .runfolder import RunResult
from .runrows import referenced_chunk_texts
from .schema import Chunk, GoldRecord, Prediction, Question
from .scoring import check_claims, judge, score
from .store import Index, store_of_chunks


def evaluate_rag(questions: Sequence[Question], gold: Iterable[GoldRecord],
                 predictions: Iterable[Prediction], evidence: Index | Iterable[Chunk],
                 config: EvalConfig | None = None, *, run_id: str = "api") -> RunResult:
    """Score a system's predictions against gold evidence, in memory.

    ``questions``, ``gold`` and ``predictions`` are the records the file readers produce
    (:func:`ragassay.read_questions` …); ``evidence`` is a loaded index or the chunks
    themselves. Ids are checked as the file readers check them (:class:`InputError`).
    Questions without a prediction are reported as not measured. Nothing is written:
    call ``result.write(folder)`` for a run folder.
    """
    cfg = config or EvalConfig()
    store = evidence if isinstance(evidence, Index) else store_of_chunks(list(evidence),
                                                                          "(in memory)")
    questions = list(questions)
    gold_records = check_gold(gold, questions)
    anchored = anchor_gold(questions, gold_records, store)
    inputs = Inputs(questions, anchored, store, warnings=gold_warnings(questions, anchored))
    predicted = Predicted(check_predictions(predictions, questions, store))
    k = cfg.pipeline.top_k
    results = score(cfg, inputs, predicted, k=k)
    check_claims(cfg, inputs, results)
    judge(cfg, inputs, results)
    metrics = summarize(cfg, inputs, results, run_id=run_id, mode="predictions", k=k,
                        notes=inputs.warnings)
    return RunResult(metrics, results,
                     chunk_texts=referenced_chunk_texts(results, inputs.chunk_texts),
                     views=VIEWS)
