"""Gold label states on hand-made chunks, the metrics policy for a label held by several
chunks, and `ragassay gold audit` / `ragassay gold fix`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.gold import anchor_gold, anchor_label, read_questions
from ragassay.metrics.retrieval import retrieval_scores
from ragassay.report.trec import _as_judged
from ragassay.schema import Chunk, Document, GoldEvidence, GoldRecord, Question
from ragassay.store import Index

runner = CliRunner()

# One shop FAQ cut into six chunks; chunks 1 and 2 share a sentence (overlapping windows),
# and chunks 4 and 5 cut one sentence in two.
CHUNKS = {
    "shop::1": "Returns are accepted within 30 days of delivery. Refunds go to the original card.",
    "shop::2": "Refunds go to the original card. Shipping takes 2 to 3 working days.",
    "shop::3": "Gift cards never expire and can be used in every store.",
    "shop::4": "Our support team answers every request within",
    "shop::5": " 24 hours on working days.",
    "shop::6": "Vouchers: one per order; the discount is 10 percent.",
}
LABELS = {  # question → (labelled chunk, support_claim, required_terms)
    "ok": ("shop::3", "Gift cards never expire", []),
    "also_in": ("shop::1", "Refunds go to the original card", []),
    "reanchored": ("shop::7", "shipping takes 2 to 3 working days", []),
    "split": ("shop::4", "answers every request within 24 hours", []),
    "terms_only": ("shop::9", "Each order takes a single voucher", ["voucher", "order"]),
    "unanchored": ("shop::8", "Returns are accepted within 14 days of delivery", []),
}


def store(dropped: dict[str, int] | None = None) -> Index:
    chunks = [Chunk(chunk_id=cid, doc_id="shop", text=text, seq=i)
              for i, (cid, text) in enumerate(CHUNKS.items())]
    return Index(Path("mem"), {}, [Document(doc_id="shop", dropped=dropped or {})], chunks,
                 np.zeros((len(chunks), 0), np.float32))


def label(name: str) -> GoldEvidence:
    chunk_id, claim, terms = LABELS[name]
    return GoldEvidence(chunk_id=chunk_id, doc_id="shop", support_claim=claim,
                        required_terms=terms)


@pytest.mark.parametrize("name", list(LABELS))
def test_each_state_on_hand_made_chunks(name: str) -> None:
    ev = anchor_label(label(name), store())
    assert ev.status == name, ev
    expected = {
        "ok": ["shop::3"],
        "also_in": ["shop::1", "shop::2"],  # both hold the sentence: both are gold
        "reanchored": ["shop::2"],
        "split": ["shop::4", "shop::5"],
        "terms_only": ["shop::6"],
        "unanchored": [],
    }[name]
    assert ev.chunk_ids == expected
    assert ev.split == (name == "split")
    assert ev.alternatives == (name == "also_in")
    if name == "terms_only":
        assert "paraphrase" in ev.reason and "shop::6" in ev.reason
    if name == "reanchored":
        assert ev.reason == "chunk id not in the index; re-anchored by support_claim"


def test_unanchored_lists_the_nearest_chunks_with_their_similarity() -> None:
    ev = anchor_label(label("unanchored"), store())
    # "Returns are accepted within 14 days of delivery" vs chunk 1's "... within 30 days of
    # delivery": every bigram but "14" and its neighbours stands there.
    assert ev.candidates[0] == "shop::1"
    assert len(ev.candidates) == len(ev.similarity) <= 3
    assert 0.85 < ev.similarity[0] < 1.0
    assert ev.similarity == sorted(ev.similarity, reverse=True)
    assert "nearest chunks" in ev.reason


def test_lost_in_parsing_when_the_loader_dropped_content() -> None:
    lost = GoldEvidence(chunk_id="shop::3", doc_id="shop",
                        support_claim="Store credit is paid out in cash")
    ev = anchor_label(lost, store(dropped={"tables": 2}))
    assert ev.status == "lost_in_parsing"
    assert ev.chunk_ids == ["shop::3"]  # the labelled chunk is kept
    assert ev.reason == "support_claim is in no chunk; the loader dropped 2 tables of shop"
    assert anchor_label(lost, store()).status == "unanchored"  # nothing dropped: nowhere


def test_holders_in_another_document_are_candidates_not_gold() -> None:
    chunks = [Chunk(chunk_id="a::1", doc_id="a", text="Refunds go to the original card."),
              Chunk(chunk_id="b::1", doc_id="b", text="Refunds go to the original card.")]
    index = Index(Path("mem"), {}, [Document(doc_id="a"), Document(doc_id="b")], chunks,
                  np.zeros((2, 0), np.float32))
    ev = anchor_label(GoldEvidence(chunk_id="a::1", doc_id="a",
                                   support_claim="refunds go to the original card"), index)
    assert (ev.status, ev.chunk_ids, ev.candidates) == ("ok", ["a::1"], ["b::1"])
    # a doc_id that names the other document does not move a label its chunk still holds
    ev = anchor_label(GoldEvidence(chunk_id="a::1", doc_id="b",
                                   support_claim="refunds go to the original card"), index)
    assert (ev.status, ev.chunk_ids, ev.candidates) == ("ok", ["a::1"], ["b::1"])


def two_articles() -> Index:
    """Paragraph ``lamps-p001`` (400/80 windows of a SQuAD paragraph) cuts its sentence in
    two; another article, ``coast-p004``, quotes the sentence whole in one chunk."""
    sentence = "Later keepers used oil lamps with polished reflectors."
    chunks = [Chunk(chunk_id="coast-p004::chunk-001", doc_id="coast-p004", seq=1,
                    text="A guide to the coast. " + sentence),
              Chunk(chunk_id="lamps-p001::chunk-001", doc_id="lamps-p001", seq=1,
                    text="The first towers burned wood. Later keepers used oil",
                    char_span=(0, 52)),
              Chunk(chunk_id="lamps-p001::chunk-002", doc_id="lamps-p001", seq=2,
                    text="used oil lamps with polished reflectors.", char_span=(44, 84))]
    docs = [Document(doc_id="coast-p004"), Document(doc_id="lamps-p001")]
    return Index(Path("mem"), {}, docs, chunks, np.zeros((3, 0), np.float32))


def test_a_claim_across_two_chunks_of_its_paragraph_stays_there() -> None:
    # Before: the other article's single chunk won ("reanchored" to coast-p004).
    claim = "Later keepers used oil lamps with polished reflectors."
    ev = anchor_label(GoldEvidence(chunk_id="lamps-p001::chunk-001", doc_id="lamps-p001",
                                   support_claim=claim), two_articles())
    assert (ev.status, ev.chunk_ids, ev.split) == (
        "split", ["lamps-p001::chunk-001", "lamps-p001::chunk-002"], True)
    assert ev.reason == ("the support_claim spans two adjacent chunks, no chunk holds it "
                         "alone; 1 chunk(s) of other documents hold it alone (candidates, "
                         "not gold)")
    assert "coast-p004::chunk-001" in ev.candidates
    # With no document to go by, the one chunk holding it wins, as before.
    ev = anchor_label(GoldEvidence(chunk_id="gone::chunk-009", support_claim=claim),
                      two_articles())
    assert (ev.status, ev.chunk_ids) == ("reanchored", ["coast-p004::chunk-001"])


def test_a_verbatim_claim_over_three_chunks_is_split_not_a_paraphrase() -> None:
    # A list of 3 x 30 characters cut by 40/10 windows: no pair holds it, the three do.
    text = "Harbours: Dover, Calais, Ostend, Bruges, Antwerp, Rotterdam, Hamburg, Bremen."
    spans = [(0, 40), (30, 70), (60, len(text))]
    chunks = [Chunk(chunk_id=f"ports::chunk-00{i + 1}", doc_id="ports", seq=i + 1,
                    text=text[a:b], char_span=(a, b)) for i, (a, b) in enumerate(spans)]
    index = Index(Path("mem"), {}, [Document(doc_id="ports")], chunks,
                  np.zeros((3, 0), np.float32))
    ev = anchor_label(GoldEvidence(chunk_id="ports::chunk-001", doc_id="ports",
                                   support_claim=text, required_terms=["Dover"]), index)
    assert (ev.status, ev.chunk_ids) == ("split", [c.chunk_id for c in chunks])
    assert ev.reason == "the support_claim spans 3 adjacent chunks, no chunk holds it alone"
    # Retrieval finds the label only when every chunk of the run is retrieved.
    gold = anchor_gold([Question(question_id="q", question="Which?", answerable=True)],
                       {"q": GoldRecord(question_id="q", gold_evidence=[ev.label])}, index)
    assert len(gold["q"].grades) == 3 and gold["q"].alternatives == {}


# --- a label held by several chunks: one relevant item ----------------------------------


def test_alternatives_count_the_label_once() -> None:
    gold = {"A1": 1, "A2": 1, "B": 1}
    same = {"A2": "A1"}  # A1 and A2 both hold label A
    row = retrieval_scores(["A2", "x", "A1", "B"], gold, ks=[1, 4], alternatives=same)
    # judged as [A, -, -, B]: A2 finds label A at rank 1, A1 later is a repeat (not relevant)
    assert row["num_gold"] == 2
    assert row["hit_at_1"] == 1 and row["recall_at_1"] == 1 / 2 and row["mrr_at_1"] == 1.0
    assert row["recall_at_4"] == 1.0 and row["precision_at_4"] == 2 / 4
    idcg = 1 + 1 / np.log2(3)
    assert row["ndcg_at_4"] == pytest.approx((1 + 1 / np.log2(5)) / idcg)
    # without the policy, three relevant chunks: recall would be 2/3 at 1 found label of 2
    plain = retrieval_scores(["A2", "x", "A1", "B"], gold, ks=[1, 4])
    assert plain["num_gold"] == 3 and plain["recall_at_4"] == 1.0


def test_alternatives_agree_with_pytrec_eval_through_the_export() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    gold = {"A1": 2, "A2": 2, "B": 1, "C1": 1, "C2": 1}
    same = {"A2": "A1", "C2": "C1"}
    ranked = ["C2", "A1", "x", "A2", "C1", "B", "y"]
    row = retrieval_scores(ranked, gold, ks=[3, 7], alternatives=same)
    ids = _as_judged(ranked, same)
    assert ids == ["C1", "A1", "x", "A2", "C1%23repeat", "B", "y"]
    run = {"q": {c: float(len(ids) - i) for i, c in enumerate(ids)}}
    qrels = {"q": {"A1": 2, "B": 1, "C1": 1}}
    got = pytrec_eval.RelevanceEvaluator(qrels, {"recall.3", "P.3", "ndcg_cut.7", "map"}
                                         ).evaluate(run)["q"]
    assert row["recall_at_3"] == pytest.approx(got["recall_3"])
    assert row["precision_at_3"] == pytest.approx(got["P_3"])
    assert row["ndcg_at_7"] == pytest.approx(got["ndcg_cut_7"])
    assert row["map"] == pytest.approx(got["map"])


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_alternatives_agree_with_pytrec_eval_on_generated_rankings(data: st.DataObject) -> None:
    """Any gold with alternatives, any ranking: the run's values are trec_eval's on the
    export's qrels and ranking (an independent implementation)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ids = [f"c{i}" for i in range(8)]
    gold = data.draw(st.dictionaries(st.sampled_from(ids), st.integers(0, 3), min_size=1))
    relevant = [c for c in gold if gold[c] >= 1]  # alternatives group relevant chunks only
    same = {c: data.draw(st.sampled_from(relevant)) for c in relevant[1:]
            if data.draw(st.booleans())}
    same = {c: r for c, r in same.items() if r not in same and r != c}
    ranked = data.draw(st.lists(st.sampled_from([*ids, "x", "y"]), unique=True))
    row = retrieval_scores(ranked, gold, ks=[1, 3, 10], alternatives=same)
    items: dict[str, int] = {}
    for c, g in gold.items():
        items[same.get(c, c)] = max(items.get(same.get(c, c), g), g)
    if not any(g >= 1 for g in items.values()) or not ranked:
        return
    judged = _as_judged(ranked, same)
    run = {"q": {c: float(len(judged) - i) for i, c in enumerate(judged)}}
    got = pytrec_eval.RelevanceEvaluator({"q": items}, {"recall.1,3,10", "P.3", "map",
                                                        "ndcg_cut.10"}).evaluate(run)["q"]
    assert row["recall_at_3"] == pytest.approx(got["recall_3"])
    assert row["recall_at_10"] == pytest.approx(got["recall_10"])
    assert row["precision_at_3"] == pytest.approx(got["P_3"])
    assert row["map"] == pytest.approx(got["map"])
    assert row["ndcg_at_10"] == pytest.approx(got["ndcg_cut_10"])


def test_question_gold_merges_labels_sharing_a_chunk() -> None:
    q = Question(question_id="q", question="?", answerable=True)
    rec = GoldRecord(question_id="q", gold_evidence=[label("also_in"), label("reanchored")])
    qgold = anchor_gold([q], {"q": rec}, store())["q"]
    # label 0 is held by chunks 1 and 2, label 1 by chunk 2: one item, under chunk 1
    assert qgold.alternatives == {"shop::2": "shop::1"}


# --- the commands ----------------------------------------------------------------------


def write_set(folder: Path, names: list[str]) -> tuple[Path, Path, Path]:
    chunks = folder / "chunks.jsonl"
    chunks.write_text("".join(json.dumps({"chunk_id": c, "text": t}) + "\n"
                              for c, t in CHUNKS.items()), encoding="utf-8")
    questions = folder / "questions.jsonl"
    gold = folder / "gold.jsonl"
    qs = [{"question_id": n, "question": f"about {n}?", "answerable": True} for n in names]
    qs.append({"question_id": "none", "question": "budget?", "answerable": False})
    questions.write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
    rows = [{"question_id": n, "gold_evidence": [label(n).model_dump(exclude_defaults=True)]}
            for n in names]
    rows.append({"question_id": "none", "gold_evidence": []})
    gold.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return gold, questions, chunks


def args(cmd: str, gold: Path, questions: Path, chunks: Path, *more: str) -> list[str]:
    return ["gold", cmd, "--gold", str(gold), "--questions", str(questions),
            "--chunks", str(chunks), *more]


def test_audit_reports_every_label_and_exits_1_on_unusable_gold(tmp_path: Path) -> None:
    gold, questions, chunks = write_set(tmp_path, list(LABELS))
    report = tmp_path / "audit.json"
    result = runner.invoke(app, args("audit", gold, questions, chunks, "--format", "json",
                                     "--out", str(report)))
    assert result.exit_code == 1, result.output  # the unanchored label is unusable
    doc = json.loads(result.stdout)
    assert doc == json.loads(report.read_text(encoding="utf-8"))
    assert doc["labels"] == 6
    assert doc["states"] == {"ok": 1, "also_in": 1, "reanchored": 1, "terms_only": 1,
                             "split": 1, "lost_in_parsing": 0, "unanchored": 1}
    assert doc["unusable"] == [{"question_id": "unanchored", "problem":
                                "gold label shop::8 is in no chunk (chunk id not in the index; "
                                "no chunk holds the support_claim; the nearest chunks are its "
                                "candidates)"}]
    states = {m["question_id"]: m["status"] for m in doc["reanchored"] + doc["ok"]}
    assert states == {n: n for n in LABELS}
    near = next(m for m in doc["reanchored"] if m["status"] == "unanchored")
    assert near["candidates"][0] == "shop::1" and near["similarity"][0] > 0.85


def test_audit_table_and_exit_0_when_every_label_is_usable(tmp_path: Path) -> None:
    names = [n for n in LABELS if n != "unanchored"]
    gold, questions, chunks = write_set(tmp_path, names)
    result = runner.invoke(app, args("audit", gold, questions, chunks))
    assert result.exit_code == 0, result.output
    assert "| also_in | 0 | shop::1 | also_in | shop::1, shop::2 |" in result.stdout
    assert ("5 labels: 1 ok, 1 also_in, 1 reanchored, 1 terms_only, 1 split; every "
            "answerable question has usable gold") in result.stdout


def test_audit_needs_exactly_one_evidence_source(tmp_path: Path) -> None:
    gold, questions, chunks = write_set(tmp_path, ["ok"])
    result = runner.invoke(app, ["gold", "audit", "--gold", str(gold), "--questions",
                                 str(questions)])
    assert result.exit_code == 2 and "exactly one of them" in result.output
    gold.write_text('{"question_id": "ok", "gold_evidence": [{"chunk_id": 3}]}\n')
    result = runner.invoke(app, args("audit", gold, questions, chunks))
    assert result.exit_code == 2 and "gold.jsonl:1" in result.output


def test_fix_moves_labels_keeps_the_old_id_and_round_trips(tmp_path: Path) -> None:
    gold, questions, chunks = write_set(tmp_path, list(LABELS))
    before = gold.read_bytes()
    fixed = tmp_path / "fixed.jsonl"
    result = runner.invoke(app, args("fix", gold, questions, chunks, "--out", str(fixed)))
    assert result.exit_code == 0, result.output
    assert gold.read_bytes() == before  # never in place
    assert result.stdout.splitlines() == [
        "reanchored label 0: shop::7 → shop::2 (reanchored: chunk id not in the index; "
        "re-anchored by support_claim)",
        "terms_only label 0: shop::9 → shop::6 (terms_only: the support_claim stands in no "
        "chunk and no run of adjacent chunks, but every required_terms item stands in "
        "shop::6: the claim is worded unlike the text (a paraphrase?); review the claim)"]
    rows = {r["question_id"]: r for r in map(json.loads, fixed.read_text().splitlines())}
    moved = rows["reanchored"]["gold_evidence"][0]
    assert (moved["chunk_id"], moved["previous_chunk_id"], moved["doc_id"]) == (
        "shop::2", "shop::7", "shop")
    assert rows["terms_only"]["gold_evidence"][0]["previous_chunk_id"] == "shop::9"
    old = before.decode().splitlines()
    new = fixed.read_text().splitlines()
    assert [a == b for a, b in zip(old, new, strict=True)] == [
        True, True, False, True, False, True, True]  # unchanged lines byte for byte
    again = tmp_path / "again.jsonl"
    result = runner.invoke(app, args("fix", fixed, questions, chunks, "--out", str(again)))
    assert result.exit_code == 0 and result.stdout == ""
    assert again.read_bytes() == fixed.read_bytes()  # fixing a fixed file changes nothing
    audit = runner.invoke(app, args("audit", fixed, questions, chunks, "--format", "json"))
    states = json.loads(audit.stdout)["states"]
    assert states["reanchored"] == 0 and states["ok"] == 2 and states["terms_only"] == 1


def test_fix_refuses_to_write_over_its_input(tmp_path: Path) -> None:
    gold, questions, chunks = write_set(tmp_path, ["reanchored"])
    before = gold.read_bytes()
    result = runner.invoke(app, args("fix", gold, questions, chunks, "--out", str(gold)))
    assert result.exit_code == 2 and "never change their input" in result.output
    assert gold.read_bytes() == before
    result = runner.invoke(app, args("audit", gold, questions, chunks, "--out", str(gold)))
    assert result.exit_code == 2 and gold.read_bytes() == before


def test_fixed_gold_reads_back_with_previous_chunk_id(tmp_path: Path) -> None:
    from ragassay.gold import read_gold

    gold, questions, chunks = write_set(tmp_path, ["reanchored"])
    fixed = tmp_path / "fixed.jsonl"
    runner.invoke(app, args("fix", gold, questions, chunks, "--out", str(fixed)))
    rec = read_gold(fixed)[0]
    assert rec.gold_evidence[0].previous_chunk_id == "shop::7"
    assert len(read_questions(questions)) == 2


# --- the same audit in every run's summary.md and report.html ---------------------------


def test_run_summary_and_report_carry_the_audit(tmp_path: Path) -> None:
    names = [n for n in LABELS if n != "unanchored"]
    gold, questions, chunks = write_set(tmp_path, names)
    preds = tmp_path / "predictions.jsonl"
    declined = {"text": "I don't know", "status": "abstained"}
    cites_2 = {"text": "Refunds go to the original card [shop::2].", "status": "supported"}
    answers = {n: ([{"chunk_id": "shop::2"}, {"chunk_id": "shop::1"}], declined)
               for n in [*names, "none"]}
    # the also_in label's two chunks: both in the context, one cited, which cites the label
    answers["also_in"] = ([{"chunk_id": "shop::2"}, {"chunk_id": "shop::1"}], cites_2)
    # ... and a question with the same label that retrieves only one of them: found
    answers["also_in_b"] = ([{"chunk_id": "shop::2"}, {"chunk_id": "shop::3"}], cites_2)
    with questions.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"question_id": "also_in_b", "question": "?", "answerable": True})
                + "\n")
    with gold.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"question_id": "also_in_b", "gold_evidence": [
            label("also_in").model_dump(exclude_defaults=True)]}) + "\n")
    preds.write_text("".join(json.dumps({"question_id": n, "retrieved": hits, "answer": a})
                             + "\n" for n, (hits, a) in answers.items()), encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text("chunks_path: chunks.jsonl\npredictions_path: predictions.jsonl\n"
                      "questions_path: questions.jsonl\ngold_evidence_path: gold.jsonl\n"
                      "output_root: runs\npipeline: {name: naive_baseline, top_k: 2}\n",
                      encoding="utf-8")
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "r", "-q"])
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "r"
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    audit = runner.invoke(app, args("audit", gold, questions, chunks, "--format", "json"))
    doc = json.loads(audit.stdout)
    assert metrics["gold"] == {k: doc[k] for k in ("labels", "states", "unusable",
                                                   "reanchored")}
    line = ("6 labels: 1 ok, 2 also_in, 1 reanchored, 1 terms_only, 1 split; every "
            "answerable question has usable gold")
    summary = (run / "summary.md").read_text(encoding="utf-8")
    assert "## Gold labels checked against the index\n\n" + line in summary
    assert "| also_in | 0 | shop::1 | also_in | shop::1, shop::2 |" in summary
    page = (run / "report.html").read_text(encoding="utf-8")
    assert f"<p>{line}</p>" in page
    assert '<td>terms_only</td>' in page
    # the also_in question retrieved both of its chunks: one label found, recall 1 at k=2
    rows = {json.loads(r)["question_id"]: json.loads(r)
            for r in (run / "retrieved_chunks.jsonl").read_text().splitlines()}
    also = rows["also_in"]
    assert also["gold_alternatives"] == {"shop::2": "shop::1"}
    assert also["metrics"]["num_gold"] == 1 and also["metrics"]["precision_at_2"] == 0.5
    assert [h["gold"] for h in also["retrieved"]] == [True, True]
    one = rows["also_in_b"]["metrics"]
    assert one["recall_at_2"] == 1.0 and one["hit_at_2"] == 1 and one["rank"] == 1
    failures = {json.loads(r)["question_id"]: json.loads(r)["failure_types"]
                for r in (run / "failure_cases.jsonl").read_text().splitlines()}
    for qid in ("also_in", "also_in_b"):  # one label cited or found: nothing is missing
        assert "citation_failure.insufficient_citation" not in failures.get(qid, [])
        assert "retrieval_failure.multi_chunk_evidence_missing" not in failures.get(qid, [])
