"""`bench/scale.py`'s SQuAD-shaped set has the shape it claims, and imports as a public set."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from builders import ROOT

from ragassay.importers.squad import read_squad

sys.path.insert(0, str(ROOT / "bench"))
from scale import squad_file  # noqa: E402


def test_the_squad_shaped_set_is_shaped_like_squad(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    counts = squad_file(path, 300, 90, seed=3)
    assert counts["questions"] == 300 and counts["answerable"] == 150  # half unanswerable
    assert counts["chunks"] >= 90
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs = [p for a in data["data"] for p in a["paragraphs"]]
    assert len(paragraphs) == counts["paragraphs"]
    assert 500 <= statistics.mean(len(p["context"]) for p in paragraphs) <= 1200
    qas = [qa for p in paragraphs for qa in p["qas"]]
    answered = [qa for qa in qas if not qa["is_impossible"]]
    assert all(len(qa["answers"]) == 3 for qa in answered)  # three annotators each
    # the annotators do not always agree word for word
    assert any(len({a["text"] for a in qa["answers"]}) > 1 for qa in answered)
    # every span is where its offset says (the importer refuses anything else)
    imported = read_squad(path)
    assert len(imported.questions) == 300 and not imported.skipped
    titles = {a["title"].split()[0] for a in data["data"]}
    # the article's topic names its documents and stands in its answers, as in SQuAD
    assert any(t.lower() in json.dumps(q.must_contain).lower() for q in imported.questions
               for t in titles)
