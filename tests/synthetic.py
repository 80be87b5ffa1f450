"""A generated evaluation set (bring-your-own-system mode) that reaches every verdict path.

``make_eval_set(folder)`` writes ``chunks.jsonl``, ``questions.jsonl``, ``gold.jsonl``,
``predictions.jsonl`` and ``config.yaml`` for a few hundred questions in English, German and
Korean, deterministically for a seed. Each question draws one *case* per axis:

- retrieval: the gold chunk at rank 1, at a rank in 2..k, beyond k (found = no), or absent
  from the retrieved list; some questions have two gold chunks (one in, one out of top-k);
  some gold labels have ``grade: 2``;
- answer: cites a context chunk (citations list or an inline ``[chunk_id]`` marker), cites a
  retrieved chunk beyond k, cites nothing, states a number its source does not hold
  ("30 Tage" for "14 Tage"), leaves out the ``must_contain`` item, or declines;
- labels: with or without ``expected_terms`` and ``must_contain``;
- unanswerable questions (gold ``[]``) that are declined (``insufficient``/``abstained``)
  or answered ``supported``;
- a few questions without a prediction line; hits with and without ``score``; some
  predictions with ``usage``.

The config's paths are bare file names: run ``ragassay run -c config.yaml`` from ``folder``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

# Per language: the fact a gold chunk states, the question about it, how an answer states
# it, a second fact (for two-gold questions), a decline, and a filler sentence.
_LANG: dict[str, dict[str, str]] = {
    "en": {
        "fact": "Returns of the {name} are accepted within {n} days of delivery.",
        "question": "Within how many days can I return the {name}?",
        "answer": "You can return the {name} within {n} days.",
        "term": "{n} days",
        "fact2": "Repairs of the {name} are finished within {m} weeks.",
        "question2": "How long do returns and repairs of the {name} take?",
        "answer2": "Returns within {n} days, repairs within {m} weeks.",
        "term2": "{m} weeks",
        "vague": "Please check the return policy of the {name}.",
        "decline": "I don't know.",
        "filler": "The policy applies to orders placed in the online shop.",
        "unanswerable": "Does the {name} ship to Antarctica?",
        "topic": "returns",
    },
    "de": {
        "fact": "Die Rückgabefrist für {name} beträgt {n} Tage ab Lieferung.",
        "question": "Wie lange ist die Rückgabefrist für {name}?",
        "answer": "Die Rückgabefrist für {name} beträgt {n} Tage.",
        "term": "{n} Tage",
        "fact2": "Reparaturen an {name} dauern {m} Wochen.",
        "question2": "Wie lange dauern Rückgabe und Reparatur bei {name}?",
        "answer2": "Rückgabe binnen {n} Tage, Reparatur in {m} Wochen.",
        "term2": "{m} Wochen",
        "vague": "Bitte lesen Sie die Bedingungen für {name}.",
        "decline": "Ich weiß es nicht.",
        "filler": "Die Regelung gilt für Bestellungen im Onlineshop.",
        "unanswerable": "Liefern Sie {name} auch in die Antarktis?",
        "topic": "Rückgabe",
    },
    "ko": {
        "fact": "{name} 시스템의 하자보수 기간은 {n}개월입니다.",
        "question": "{name} 시스템의 하자보수 기간은 얼마입니까?",
        "answer": "{name} 시스템의 하자보수 기간은 {n}개월입니다.",
        "term": "{n}개월",
        "fact2": "{name} 시스템의 장애 조치 시한은 {m}시간입니다.",
        "question2": "{name} 시스템의 하자보수 기간과 장애 조치 시한은?",
        "answer2": "하자보수 {n}개월, 장애 조치 {m}시간입니다.",
        "term2": "{m}시간",
        "vague": "{name} 시스템의 과업 지시서를 참고하십시오.",
        "decline": "알 수 없습니다.",
        "filler": "이 조항은 본 사업의 모든 산출물에 적용됩니다.",
        "unanswerable": "{name} 시스템의 사업 예산은 얼마입니까?",
        "topic": "하자보수",
    },
}

# Distractor chunks: no question's must_contain item occurs in them (those use n >= 5 with
# days/Tage/개월 and m in weeks/Wochen/시간 from another range), but some hold numbers.
_NOISE = [
    "Customer service answers e-mails on business days.",
    "Our warehouse ships parcels from Hamburg and Busan.",
    "Gift cards cannot be exchanged for cash.",
    "The newsletter is sent twice a month to subscribers.",
    "Der Kundendienst ist montags bis freitags erreichbar.",
    "Geschenkgutscheine sind drei Jahre gültig.",
    "Zahlungen per Rechnung sind für Firmenkunden möglich.",
    "Die Filiale in Leipzig hat samstags geöffnet.",
    "제안서는 전자조달시스템으로 제출합니다.",
    "발표 평가는 제안사별 30분 이내로 진행합니다.",
    "사업 수행 인력은 계약 후 변경할 수 없습니다.",
    "보안 서약서는 착수 시 제출합니다.",
    "The helpdesk is staffed by 4 people.",
    "Invoices are archived for 10 years.",
    "Bestellungen ab 80 € sind versandkostenfrei.",
    "하자 접수는 평일 09:00부터 받습니다.",
]
_NAME_PARTS = ("Aster Birch Cedar Dune Ember Fjord Garnet Harbor Iris Juniper Kestrel Lumen "
               "Maple Nimbus Onyx Pebble Quartz Raven Sable Tundra Umber Vesper Willow Yarrow "
               "Zephyr").split()


def _name(i: int) -> str:
    a, b = divmod(i, len(_NAME_PARTS))
    return f"{_NAME_PARTS[a % len(_NAME_PARTS)]} {_NAME_PARTS[b]}"


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _config(seed: int, k: int) -> str:
    retrieval = ["hit_at_1", f"hit_at_{k}", f"recall_at_{k}", f"precision_at_{k}",
                 f"mrr_at_{k}", f"ndcg_at_{k}", "map"]
    return (
        "# Generated by tests/synthetic.py: another system's predictions over a chunk file.\n"
        "# Paths are bare file names: run `ragassay run -c config.yaml` from this folder.\n"
        "chunks_path: chunks.jsonl\n"
        "predictions_path: predictions.jsonl\n"
        "questions_path: questions.jsonl\n"
        "gold_evidence_path: gold.jsonl\n"
        "output_root: runs\n"
        f"seed: {seed}\n"
        "\n"
        "pipeline:\n"
        "  name: naive_baseline\n"
        f"  top_k: {k}\n"
        "\n"
        "metrics:\n"
        f"  retrieval: [{', '.join(dict.fromkeys(retrieval))}]\n"
        "  answer: [faithfulness, groundedness, answer_relevancy, correct, citation_accuracy,\n"
        "           hallucination_flag, unanswerable_detection_flag]\n"
        "  bootstrap_resamples: 200\n"
    )


def make_eval_set(folder: Path, n_questions: int = 300, seed: int = 0, k: int = 5) -> Path:
    """Write the five files of a generated evaluation set into ``folder``; return the config.

    Deterministic: the same ``(n_questions, seed, k)`` gives byte-identical files.
    """
    if not 2 <= k <= len(_NOISE) - 3:
        raise ValueError(f"k must be in 2..{len(_NOISE) - 3} (ranks 2..k and beyond k are "
                         "both needed, from a fixed pool of distractor chunks)")
    rng = random.Random(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    depth = k + 3  # retrieved list length: room beyond the context

    noise_ids = [f"noise::chunk-{i:03d}" for i in range(1, len(_NOISE) + 1)]
    chunks: list[dict[str, Any]] = [
        {"chunk_id": cid, "doc_id": "noise", "text": text}
        for cid, text in zip(noise_ids, _NOISE, strict=True)
    ]
    questions: list[dict[str, Any]] = []
    gold: list[dict[str, Any]] = []
    predictions: list[dict[str, Any]] = []
    langs = list(_LANG)

    for i in range(n_questions):
        qid = f"syn-{i + 1:04d}"
        lang = langs[i % 3]
        L = _LANG[lang]
        name = _name(i)
        doc_id = f"doc-{i + 1:04d}"
        n = rng.choice([5, 7, 10, 14, 21, 28, 45, 60, 90])
        m = rng.choice([2, 3, 4, 6, 8])
        gold_a = f"{doc_id}::chunk-001"
        gold_b = f"{doc_id}::chunk-002"
        fact = L["fact"].format(name=name, n=n)
        fact2 = L["fact2"].format(name=name, m=m)
        page = rng.random() < 0.5
        chunks.append({"chunk_id": gold_a, "doc_id": doc_id, "text": f"{fact} {L['filler']}",
                       **({"page_span": [1, 1]} if page else {})})
        chunks.append({"chunk_id": gold_b, "doc_id": doc_id, "text": f"{L['filler']} {fact2}",
                       **({"page_span": [2, 2]} if page else {})})

        answerable = rng.random() >= 0.15
        two_gold = answerable and rng.random() < 0.15
        term, term2 = L["term"].format(n=n), L["term2"].format(m=m)
        q: dict[str, Any] = {"question_id": qid, "answerable": answerable,
                             "topic": f"{L['topic']} ({lang})"}
        if not answerable:
            q["question"] = L["unanswerable"].format(name=name)
            q["query_type"] = "unanswerable"
        elif two_gold:
            q["question"] = L["question2"].format(name=name)
            q["query_type"] = "multi_hop"
        else:
            q["question"] = L["question"].format(name=name)
            q["query_type"] = "factoid"
        if answerable:
            must = [term, term2] if two_gold else [term]
            if rng.random() < 0.8:
                q["must_contain"] = must
            if rng.random() < 0.7:
                q["expected_terms"] = [*must, name] if rng.random() < 0.5 else must
            q["expected_answer"] = (L["answer2"].format(n=n, m=m) if two_gold
                                    else L["answer"].format(name=name, n=n))
        questions.append(q)

        # gold
        if answerable:
            ev = [{"chunk_id": gold_a, "doc_id": doc_id, "support_claim": fact,
                   **({"grade": 2} if rng.random() < 0.2 else {})}]
            if two_gold:
                ev.append({"chunk_id": gold_b, "doc_id": doc_id, "required_terms": [term2]})
            gold.append({"question_id": qid, "gold_evidence": ev})
        else:
            gold.append({"question_id": qid, "gold_evidence": []})

        if rng.random() < 0.03:  # no prediction line at all: not measured
            continue

        # retrieved list: distractors, with the gold chunk(s) placed by the retrieval case
        others = rng.sample(noise_ids, depth)
        ranked = list(others)
        where = rng.choice(["rank1", "in_k", "beyond_k", "absent"]) if answerable else "absent"
        if two_gold:
            where = "split"
        if where == "rank1":
            ranked.insert(0, gold_a)
        elif where == "in_k":
            ranked.insert(rng.randint(1, k - 1), gold_a)
        elif where == "beyond_k":
            ranked.insert(rng.randint(k, depth - 1), gold_a)
        elif where == "split":
            ranked.insert(rng.randint(0, k - 1), gold_a)
            ranked.insert(rng.randint(k, depth - 1), gold_b)
        ranked = ranked[:depth]
        with_scores = rng.random() < 0.8
        top = rng.uniform(0.6, 0.95)
        retrieved = []
        for r, cid in enumerate(ranked):
            hit: dict[str, Any] = {"chunk_id": cid}
            if with_scores:
                hit["score"] = round(top - 0.05 * r, 4)
            retrieved.append(hit)
        context = ranked[:k]
        beyond = ranked[k]

        # answer
        text, status, cites, inline = "", "supported", [], None
        if not answerable:
            mode = rng.choice(["insufficient", "abstained", "decline_text", "answered"])
            if mode == "answered":
                cites = [context[0]]
                text = next(t for cid, t in zip(noise_ids, _NOISE, strict=True)
                            if cid == context[0])
            else:
                text = L["decline"]
                status = "supported" if mode == "decline_text" else mode
        else:
            mode = rng.choice(["cite", "cite", "inline", "outside", "none", "wrong_number",
                               "no_term", "declined"])
            answer = (L["answer2"].format(n=n, m=m) if two_gold
                      else L["answer"].format(name=name, n=n))
            source = gold_a if gold_a in context else context[0]
            if mode == "cite":
                text, cites = answer, [source]
            elif mode == "inline":
                text, inline = answer, source
            elif mode == "outside":
                text, cites = answer, [beyond]
            elif mode == "none":
                text = answer
            elif mode == "wrong_number":
                wrong = 30 if n != 30 else 31
                text = (L["answer2"].format(n=wrong, m=m) if two_gold
                        else L["answer"].format(name=name, n=wrong))
                cites = [gold_a]
            elif mode == "no_term":
                text, cites = L["vague"].format(name=name), [source]
            else:
                text, status = L["decline"], rng.choice(["insufficient", "abstained"])
        if inline is not None:
            stop = text.rstrip(".")
            text = f"{stop} [{inline}]." if lang != "ko" else f"{text} [{inline}]"
        ans: dict[str, Any] = {"text": text, "status": status,
                               "citations": [{"chunk_id": c} for c in cites]}
        pred: dict[str, Any] = {"question_id": qid, "retrieved": retrieved, "answer": ans}
        if rng.random() < 0.4:
            pred["usage"] = {"prompt_tokens": rng.randint(200, 900),
                             "completion_tokens": rng.randint(5, 60)}
        if rng.random() < 0.5:
            pred["latency_ms"] = round(rng.uniform(100, 2000), 1)
        predictions.append(pred)

    _write_jsonl(folder / "chunks.jsonl", chunks)
    _write_jsonl(folder / "questions.jsonl", questions)
    _write_jsonl(folder / "gold.jsonl", gold)
    _write_jsonl(folder / "predictions.jsonl", predictions)
    config = folder / "config.yaml"
    config.write_text(_config(seed, k), encoding="utf-8")
    return config
