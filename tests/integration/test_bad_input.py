"""The bad-input promise, case by case.

Every command reports bad input as ONE line on stderr naming the file, the line (where there
is one) and the field, and exits 2; never exit 4 (internal error), never a traceback. A failed
command leaves every existing file as it was (same files, same bytes) and no hidden temporary
(``.NAME.tmp-*``) behind.

Each case copies ``examples/shop_faq_de`` into ``tmp_path``, breaks one thing and says where the
message must point. A case that does not keep the promise is marked ``case(xfail=...)`` with
what happens instead, so the list of what to fix is this file.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from builders import ROOT
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.termsafe import UNSAFE

EXAMPLE = ROOT / "examples" / "shop_faq_de"
runner = CliRunner()


@dataclass
class Expect:
    """Where the message must point: ``where`` is the file name (or the option, ``--k``)."""

    where: str
    line: int | None = None
    field: str | None = None
    also: list[str] = dataclasses.field(default_factory=list)  # more text the message must hold


class W:
    """A workspace: a copy of the example and an output root, both under ``tmp_path``."""

    def __init__(self, tmp: Path, mp: pytest.MonkeyPatch | None = None) -> None:
        self.tmp = tmp
        self.mp = mp
        self.ex = tmp / "ex"
        shutil.copytree(EXAMPLE, self.ex)
        self.cfg = self.ex / "config.yaml"
        self.runs = tmp / "runs"

    # --- inputs --------------------------------------------------------------------------

    def rows(self, name: str) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (self.ex / name).read_text("utf-8").splitlines() if x]

    def set_line(self, name: str, n: int, text: str | bytes) -> None:
        """Replace line ``n`` (1-based) of an example file with raw text."""
        lines = (self.ex / name).read_bytes().splitlines()
        lines[n - 1] = text.encode("utf-8") if isinstance(text, str) else text
        (self.ex / name).write_bytes(b"\n".join(lines) + b"\n")

    def edit(self, name: str, n: int, fn: Callable[[dict[str, Any]], None]) -> None:
        """Change the record on line ``n`` in place."""
        row = self.rows(name)[n - 1]
        fn(row)
        self.set_line(name, n, json.dumps(row, ensure_ascii=False))

    def append(self, name: str, record: dict[str, Any]) -> int:
        """Append a record; its line number."""
        path = self.ex / name
        text = path.read_text("utf-8")
        path.write_text(text + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
        return len(text.splitlines()) + 1

    def cfg_replace(self, old: str, new: str) -> int:
        """Replace text in the config; the 1-based line where ``new`` starts."""
        text = self.cfg.read_text("utf-8")
        assert old in text, old
        text = text.replace(old, new, 1)
        self.cfg.write_text(text, encoding="utf-8")
        return text[: text.index(new)].count("\n") + 1

    def cfg_append(self, text: str) -> int:
        """Append YAML to the config; the 1-based line of its first line."""
        before = self.cfg.read_text("utf-8")
        self.cfg.write_text(before + text, encoding="utf-8")
        return before.count("\n") + 1

    def fail_writes(self, code: int) -> None:
        """Every file ragassay creates fails as the operating system would fail it with
        ``code`` (a full disk, a read-only or unwritable folder): the error is the kernel's,
        the message and exit code are ragassay's."""
        import contextlib

        import ragassay.atomic

        @contextlib.contextmanager
        def refuse(path: Path) -> Any:
            raise OSError(code, os.strerror(code), str(path))
            yield  # a generator, as the function it replaces

        assert self.mp is not None
        self.mp.setattr(ragassay.atomic, "_open_new", refuse)

    def hide_package(self, name: str) -> None:
        """Make ``import name`` fail, as where the package is not installed."""
        import sys

        from ragassay import tokens

        assert self.mp is not None
        self.mp.setitem(sys.modules, name, None)
        tokens._kiwi.cache_clear()
        self.mp.setattr(tokens, "_EOJEOL_TERMS", {})

    # --- commands ------------------------------------------------------------------------

    def run_args(self, *extra: str) -> list[str]:
        return ["run", "-c", str(self.cfg), "--output-root", str(self.runs), "-q",
                "--run-id", "r", *extra]

    def run_dir(self, run_id: str = "good") -> Path:
        """A valid run folder of the example."""
        res = runner.invoke(app, ["run", "-c", str(self.cfg), "--output-root", str(self.runs),
                                  "-q", "--run-id", run_id])
        assert res.exit_code == 0, res.output
        return self.runs / run_id

    def index(self, src: Path | None = None) -> tuple[Path, Path]:
        """A source folder and a valid index built from it."""
        src = src or self.tmp / "docs"
        src.mkdir(exist_ok=True)
        (src / "versand.md").write_text("# Versand\nDer Versand kostet 4,90 €.\n" * 5, "utf-8")
        out = self.tmp / "index"
        res = runner.invoke(app, ["index", "--source", str(src), "--out", str(out), "-q"])
        assert res.exit_code == 0, res.output
        return src, out


Case = Callable[[W], tuple[list[str], Expect]]
CASES: list[Any] = []


def case(*, xfail: str | None = None) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
        CASES.append(pytest.param(fn, id=fn.__name__.removeprefix("c_"), marks=marks))
        return fn
    return register


# --- questions.jsonl -----------------------------------------------------------------------


@case()
def c_questions_malformed_json(w: W) -> tuple[list[str], Expect]:
    w.set_line("questions.jsonl", 3, '{"question_id": "de03", "question": ')
    return w.run_args(), Expect("questions.jsonl", 3)


@case()
def c_questions_non_utf8(w: W) -> tuple[list[str], Expect]:
    w.set_line("questions.jsonl", 2, b'{"question_id": "de02", "question": "Gr\xfc\xdfe?", '
               b'"answerable": true}')
    return w.run_args(), Expect("questions.jsonl", 2)


@case()
def c_questions_blank_only(w: W) -> tuple[list[str], Expect]:
    # gold and predictions emptied too, so that the questions file is the only problem
    for name in ("questions.jsonl", "gold.jsonl", "predictions.jsonl"):
        (w.ex / name).write_text("\n   \n\n", encoding="utf-8")
    return w.run_args(), Expect("questions.jsonl")


@case()
def c_questions_missing_question(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 4, lambda r: r.pop("question"))
    return w.run_args(), Expect("questions.jsonl", 4, "question")


@case()
def c_questions_missing_question_id(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 1, lambda r: r.pop("question_id"))
    return w.run_args(), Expect("questions.jsonl", 1, "question_id")


@case()
def c_questions_answerable_yes(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 5, lambda r: r.update(answerable="yes"))
    return w.run_args(), Expect("questions.jsonl", 5, "answerable")


@case()
def c_questions_empty_question(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 2, lambda r: r.update(question=""))
    return w.run_args(), Expect("questions.jsonl", 2, "question")


@case()
def c_questions_expected_terms_number(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 3, lambda r: r.update(expected_terms=42))
    return w.run_args(), Expect("questions.jsonl", 3, "expected_terms")


@case()
def c_questions_line_not_an_object(w: W) -> tuple[list[str], Expect]:
    w.set_line("questions.jsonl", 7, '["de07", "Frage?"]')
    return w.run_args(), Expect("questions.jsonl", 7)


@case()
def c_questions_duplicate_id(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 6, lambda r: r.update(question_id="de01"))
    return w.run_args(), Expect("questions.jsonl", 6, "question_id")


# --- gold.jsonl ----------------------------------------------------------------------------


@case()
def c_gold_malformed_json(w: W) -> tuple[list[str], Expect]:
    w.set_line("gold.jsonl", 4, '{"question_id": "de04", "gold_evidence": [')
    return w.run_args(), Expect("gold.jsonl", 4)


@case()
def c_gold_non_utf8(w: W) -> tuple[list[str], Expect]:
    w.set_line("gold.jsonl", 2, b'{"question_id": "de02", "gold_evidence": [{"chunk_id": '
               b'"versand-2", "support_claim": "Liefer\xe4"}]}')
    return w.run_args(), Expect("gold.jsonl", 2)


@case()
def c_gold_duplicate_question_id(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 3, lambda r: r.update(question_id="de02"))
    return w.run_args(), Expect("gold.jsonl", 3, "question_id")


@case()
def c_gold_unknown_question(w: W) -> tuple[list[str], Expect]:
    n = w.append("gold.jsonl", {"question_id": "de99", "gold_evidence": [
        {"chunk_id": "versand-1"}]})
    return w.run_args(), Expect("gold.jsonl", n, "question_id")


@case()
def c_gold_for_unanswerable_question(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 9, lambda r: r.update(gold_evidence=[{"chunk_id": "versand-3"}]))
    return w.run_args(), Expect("gold.jsonl", 9, "gold_evidence")


@case()
def c_gold_label_without_chunk_id(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 1, lambda r: r["gold_evidence"][0].pop("chunk_id"))
    return w.run_args(), Expect("gold.jsonl", 1, "gold_evidence.0.chunk_id")


@case()
def c_gold_grade_not_an_int(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 2, lambda r: r["gold_evidence"][0].update(grade="high"))
    return w.run_args(), Expect("gold.jsonl", 2, "gold_evidence.0.grade")


@case()
def c_gold_evidence_not_a_list(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 5, lambda r: r.update(gold_evidence="erstattung-1"))
    return w.run_args(), Expect("gold.jsonl", 5, "gold_evidence")


# --- predictions.jsonl ---------------------------------------------------------------------


@case()
def c_predictions_malformed_json(w: W) -> tuple[list[str], Expect]:
    w.set_line("predictions.jsonl", 2, '{"question_id": "de02", "retrieved": [{"chunk_id": ')
    return w.run_args(), Expect("predictions.jsonl", 2)


@case()
def c_predictions_truncated_last_line(w: W) -> tuple[list[str], Expect]:
    path = w.ex / "predictions.jsonl"
    path.write_bytes(path.read_bytes()[:-40])
    return w.run_args(), Expect("predictions.jsonl", 10)


@case()
def c_predictions_duplicate_question_id(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 4, lambda r: r.update(question_id="de03"))
    return w.run_args(), Expect("predictions.jsonl", 4, "question_id")


@case()
def c_predictions_unknown_question(w: W) -> tuple[list[str], Expect]:
    n = w.append("predictions.jsonl", {"question_id": "de42", "retrieved": [],
                                                "answer": {"text": "", "status": "abstained"}})
    return w.run_args(), Expect("predictions.jsonl", n, "question_id")


@case()
def c_predictions_unknown_citation(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 1,
           lambda r: r["answer"].update(citations=[{"chunk_id": "versand-99"}]))
    return w.run_args(), Expect("predictions.jsonl", 1, "answer.citations.0.chunk_id")


@case()
def c_predictions_unknown_inline_citation(w: W) -> tuple[list[str], Expect]:
    """An inline marker with a typo (``[versand-99]``; ``versand-1`` … exist) is refused
    like the same typo in ``citations`` (it was dropped silently)."""
    w.edit("predictions.jsonl", 2, lambda r: r["answer"].update(
        text="Innerhalb Deutschlands dauert die Lieferung 2–3 Werktage [versand-99]."))
    return w.run_args(), Expect("predictions.jsonl", 2, "answer.text",
                                also=["citation of unknown chunk 'versand-99'"])


@case()
def c_predictions_unknown_retrieved_chunk(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 2, lambda r: r["retrieved"][1].update(chunk_id="nope-1"))
    return w.run_args(), Expect("predictions.jsonl", 2, "retrieved.1.chunk_id")


@case()
def c_predictions_bad_status(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 3, lambda r: r["answer"].update(status="unsure"))
    return w.run_args(), Expect("predictions.jsonl", 3, "answer.status")


@case()
def c_predictions_score_nan(w: W) -> tuple[list[str], Expect]:
    w.set_line("predictions.jsonl", 1, '{"question_id": "de01", "retrieved": [{"chunk_id": '
               '"versand-1", "score": NaN}], "answer": {"text": "4,90 €", "status": '
               '"supported"}}')
    return w.run_args(), Expect("predictions.jsonl", 1, "retrieved.0.score")


@case()
def c_predictions_score_infinity(w: W) -> tuple[list[str], Expect]:
    w.set_line("predictions.jsonl", 1, '{"question_id": "de01", "retrieved": [{"chunk_id": '
               '"versand-1", "score": 0.9}, {"chunk_id": "versand-2", "score": Infinity}], '
               '"answer": {"text": "4,90 €", "status": "supported"}}')
    return w.run_args(), Expect("predictions.jsonl", 1, "retrieved.1.score")


@case()
def c_predictions_score_minus_infinity(w: W) -> tuple[list[str], Expect]:
    w.set_line("predictions.jsonl", 1, '{"question_id": "de01", "retrieved": [{"chunk_id": '
               '"versand-1", "score": -Infinity}], "answer": {"text": "4,90 €", "status": '
               '"supported"}}')
    return w.run_args(), Expect("predictions.jsonl", 1, "retrieved.0.score")


@case()
def c_predictions_score_string(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 5, lambda r: r["retrieved"][0].update(score="high"))
    return w.run_args(), Expect("predictions.jsonl", 5, "retrieved.0.score")


@case()
def c_predictions_retrieved_not_a_list(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 6, lambda r: r.update(retrieved="zahlung-1"))
    return w.run_args(), Expect("predictions.jsonl", 6, "retrieved")


@case()
def c_predictions_usage_tokens_string(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 7, lambda r: r["usage"].update(prompt_tokens="many"))
    return w.run_args(), Expect("predictions.jsonl", 7, "usage.prompt_tokens")


@case()
def c_predictions_latency_string(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 8, lambda r: r.update(latency_ms="fast"))
    return w.run_args(), Expect("predictions.jsonl", 8, "latency_ms")


@case()
def c_predictions_option_missing_file(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--predictions", str(w.tmp / "nowhere.jsonl")), Expect("nowhere.jsonl")


# --- chunks.jsonl --------------------------------------------------------------------------


@case()
def c_chunks_duplicate_chunk_id(w: W) -> tuple[list[str], Expect]:
    w.edit("chunks.jsonl", 3, lambda r: r.update(chunk_id="versand-1"))
    return w.run_args(), Expect("chunks.jsonl", 3, "chunk_id")


@case()
def c_chunks_missing_text(w: W) -> tuple[list[str], Expect]:
    w.edit("chunks.jsonl", 2, lambda r: r.pop("text"))
    return w.run_args(), Expect("chunks.jsonl", 2, "text")


@case()
def c_chunks_malformed_json(w: W) -> tuple[list[str], Expect]:
    w.set_line("chunks.jsonl", 5, '{"chunk_id": "rückgabe-2", "text": "Für')
    return w.run_args(), Expect("chunks.jsonl", 5)


@case()
def c_chunks_option_missing_file(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--chunks", str(w.tmp / "nochunks.jsonl")), Expect("nochunks.jsonl")


# --- config.yaml ---------------------------------------------------------------------------


@case()
def c_config_unknown_key(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("seed: 7", "seeed: 7")
    return w.run_args(), Expect("config.yaml", n, "seeed")


@case()
def c_config_unknown_pipeline_key(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("  top_k: 3", "  topk: 3")
    return w.run_args(), Expect("config.yaml", n, "pipeline.topk")


@case()
def c_config_rerank_true(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("  top_k: 3", "  top_k: 3\n  rerank: true")
    return w.run_args(), Expect("config.yaml", n + 1, "pipeline.rerank")


@case()
def c_config_unknown_pipeline_name(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("name: naive_baseline", "name: naive_baselin")
    return w.run_args(), Expect("config.yaml", n, "pipeline.name")


@case()
def c_config_overlap_not_below_chunk_size(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_append("index:\n  chunk_size: 100\n  overlap: 100\n")
    return w.run_args(), Expect("config.yaml", n + 2, "index.overlap")


@case()
def c_config_unknown_retrieval_metric(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("retrieval: [hit_at_1,", "retrieval: [hti_at_1,")
    return w.run_args(), Expect("config.yaml", n, "metrics.retrieval.0",
                                ["did you mean", "hit_at_1"])


@case()
def c_config_unknown_answer_metric(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("answer: [groundedness,", "answer: [groundednes,")
    return w.run_args(), Expect("config.yaml", n, "metrics.answer.0",
                                ["did you mean", "groundedness"])


@case()
def c_config_top_k_zero(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("top_k: 3", "top_k: 0")
    return w.run_args(), Expect("config.yaml", n, "pipeline.top_k")


@case()
def c_config_top_k_not_a_number(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("top_k: 3", "top_k: three")
    return w.run_args(), Expect("config.yaml", n, "pipeline.top_k")


@case()
def c_config_bootstrap_resamples_too_few(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("metrics:\n", "metrics:\n  bootstrap_resamples: 10\n")
    return w.run_args(), Expect("config.yaml", n + 1, "metrics.bootstrap_resamples")


@case()
def c_config_yaml_syntax_error(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("seed: 7", "seed: 7: 8")
    return w.run_args(), Expect("config.yaml", n)


@case()
def c_config_not_a_mapping(w: W) -> tuple[list[str], Expect]:
    w.cfg.write_text("- questions.jsonl\n- gold.jsonl\n", encoding="utf-8")
    return w.run_args(), Expect("config.yaml")


@case()
def c_config_non_utf8(w: W) -> tuple[list[str], Expect]:
    w.cfg.write_bytes(w.cfg.read_bytes().replace(b"seed: 7", b"seed: 7 # \xff"))
    return w.run_args(), Expect("config.yaml")


@case()
def c_config_file_missing(w: W) -> tuple[list[str], Expect]:
    return (["run", "-c", str(w.ex / "nothere.yaml"), "--output-root", str(w.runs), "-q"],
            Expect("nothere.yaml"))


@case()
def c_config_questions_path_missing(w: W) -> tuple[list[str], Expect]:
    w.cfg_replace("questions_path: questions.jsonl", "questions_path: fragen.jsonl")
    return w.run_args(), Expect("fragen.jsonl")


@case()
def c_config_gold_path_missing(w: W) -> tuple[list[str], Expect]:
    w.cfg_replace("gold_evidence_path: gold.jsonl", "gold_evidence_path: gold2.jsonl")
    return w.run_args(), Expect("gold2.jsonl")


@case()
def c_config_predictions_path_missing(w: W) -> tuple[list[str], Expect]:
    w.cfg_replace("predictions_path: predictions.jsonl", "predictions_path: preds.jsonl")
    return w.run_args(), Expect("preds.jsonl")


@case()
def c_config_chunks_without_predictions(w: W) -> tuple[list[str], Expect]:
    w.cfg_replace("predictions_path: predictions.jsonl\n", "")
    n = w.cfg.read_text("utf-8").splitlines().index("chunks_path: chunks.jsonl") + 1
    return w.run_args(), Expect("config.yaml", n, "chunks_path")


@case()
def c_config_index_dir_not_an_index(w: W) -> tuple[list[str], Expect]:
    (w.tmp / "emptyindex").mkdir()
    w.cfg_replace("chunks_path: chunks.jsonl", f"index_dir: {w.tmp / 'emptyindex'}")
    return w.run_args(), Expect("index.json")


# --- run options ---------------------------------------------------------------------------


@case()
def c_run_k_zero(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--k", "0"), Expect("--k")


@case()
def c_run_id_empty(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", ""), Expect("--run-id")


@case()
def c_run_id_with_slash(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", "a/b"), Expect("--run-id")


@case()
def c_run_id_with_dotdot(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", ".."), Expect("--run-id")


@case()
def c_run_id_with_newline(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", "a\nb"), Expect("--run-id")


@case()
def c_run_id_200_chars(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", "x" * 200), Expect("--run-id")


@case()
def c_run_id_reused_without_force(w: W) -> tuple[list[str], Expect]:
    w.run_dir("r")  # the folder the snapshot must find unchanged
    return w.run_args(), Expect("r", also=["--force"])


@case()
def c_run_force_over_existing_with_bad_input(w: W) -> tuple[list[str], Expect]:
    w.run_dir("r")
    w.edit("predictions.jsonl", 2, lambda r: r["answer"].update(status="maybe"))
    return w.run_args("--force"), Expect("predictions.jsonl", 2, "answer.status")


# --- sweep ---------------------------------------------------------------------------------


def sweep_args(w: W, *extra: str) -> list[str]:
    return ["sweep", "-c", str(w.cfg), "--sweep-id", "sw", "--output-root", str(w.runs), *extra]


@case()
def c_sweep_k_reversed(w: W) -> tuple[list[str], Expect]:
    return sweep_args(w, "--k", "3..1"), Expect("--k")


@case()
def c_sweep_k_zero(w: W) -> tuple[list[str], Expect]:
    return sweep_args(w, "--k", "0..2"), Expect("--k")


@case()
def c_sweep_k_words(w: W) -> tuple[list[str], Expect]:
    return sweep_args(w, "--k", "one..three"), Expect("--k")


@case()
def c_sweep_threshold_abc(w: W) -> tuple[list[str], Expect]:
    return sweep_args(w, "--k", "1..3", "--threshold", "abc"), Expect("--threshold")


@case()
def c_sweep_threshold_nan(w: W) -> tuple[list[str], Expect]:
    return sweep_args(w, "--k", "1..3", "--threshold", "nan"), Expect("--threshold")


@case()
def c_sweep_id_with_slash(w: W) -> tuple[list[str], Expect]:
    return (["sweep", "-c", str(w.cfg), "--k", "1..3", "--sweep-id", "a/b", "--output-root",
             str(w.runs)], Expect("--sweep-id"))


@case()
def c_sweep_id_reused_without_force(w: W) -> tuple[list[str], Expect]:
    res = runner.invoke(app, sweep_args(w, "--k", "1..3"))
    assert res.exit_code == 0, res.output
    return sweep_args(w, "--k", "1..2"), Expect("sw", also=["--force"])


@case()
def c_sweep_bad_predictions(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 4, lambda r: r["retrieved"][0].update(chunk_id="ghost"))
    return sweep_args(w, "--k", "1..3"), Expect("predictions.jsonl", 4, "retrieved.0.chunk_id")


# --- gate ----------------------------------------------------------------------------------


@case()
def c_gate_bar_without_operator(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    return ["gate", str(run), "--bar", "hit_at_3 0.8"], Expect("--bar")


@case()
def c_gate_bar_unknown_metric(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    return (["gate", str(run), "--bar", "hti_at_3>=0.8"],
            Expect("--bar", also=["did you mean", "hit_at_3"]))


@case()
def c_gate_bar_value_not_a_number(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    return ["gate", str(run), "--bar", "hit_at_3>=high"], Expect("--bar")


@case()
def c_gate_bar_bad_with_junit_writes_nothing(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    return (["gate", str(run), "--bar", "hit_at_3=>0.8", "--junit", str(w.tmp / "j.xml")],
            Expect("--bar"))


@case()
def c_gate_config_allow_missing_negative(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    n = w.cfg_replace('  hit_at_3: ">= 0.8"', '  allow_missing: -1\n  hit_at_3: ">= 0.8"')
    return (["gate", str(run), "-c", str(w.cfg)],
            Expect("config.yaml", n, "gate.allow_missing"))


@case()
def c_gate_config_unknown_metric(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    n = w.cfg_replace('  hit_at_3: ">= 0.8"', '  hti_at_3: ">= 0.8"')
    return (["gate", str(run), "-c", str(w.cfg)],
            Expect("config.yaml", n, "gate.hti_at_3", ["did you mean", "hit_at_3"]))


@case()
def c_gate_config_bar_without_operator(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    n = w.cfg_replace('  hit_at_3: ">= 0.8"', '  hit_at_3: "0.8"')
    return (["gate", str(run), "-c", str(w.cfg)], Expect("config.yaml", n, "gate.hit_at_3"))


@case()
def c_gate_not_a_run_folder(w: W) -> tuple[list[str], Expect]:
    return ["gate", str(w.ex), "--bar", "hit_at_3>=0.8"], Expect("metrics.json")


@case()
def c_gate_folder_does_not_exist(w: W) -> tuple[list[str], Expect]:
    return ["gate", str(w.tmp / "norun"), "--bar", "hit_at_3>=0.8"], Expect("norun")


@case()
def c_gate_answers_truncated_line(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    path = run / "answers.jsonl"
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join(lines[:4] + [lines[4][: len(lines[4]) // 2]]) + b"\n")
    return ["gate", str(run), "--bar", "hit_at_3>=0.8"], Expect("answers.jsonl", 5)


@case()
def c_gate_answers_malformed_line(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    path = run / "answers.jsonl"
    lines = path.read_text("utf-8").splitlines()
    lines[2] = "{not json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["gate", str(run), "--bar", "hit_at_3>=0.8"], Expect("answers.jsonl", 3)


@case()
def c_gate_metrics_without_schema_version(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    data = json.loads((run / "metrics.json").read_text("utf-8"))
    del data["schema_version"]
    (run / "metrics.json").write_text(json.dumps(data), encoding="utf-8")
    return (["gate", str(run), "--bar", "hit_at_3>=0.8"],
            Expect("metrics.json", field="schema_version"))


@case()
def c_gate_metrics_malformed_json(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    text = (run / "metrics.json").read_text("utf-8")
    (run / "metrics.json").write_text(text[: len(text) // 2], encoding="utf-8")
    return ["gate", str(run), "--bar", "hit_at_3>=0.8"], Expect("metrics.json")


@case()
def c_gate_retrieved_duplicate_question(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    path = run / "retrieved_chunks.jsonl"
    lines = path.read_text("utf-8").splitlines()
    lines[1] = lines[0]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return (["gate", str(run), "--bar", "hit_at_3>=0.8"],
            Expect("retrieved_chunks.jsonl", 2, "question_id"))


@case()
def c_gate_answers_row_wrong_type(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    path = run / "answers.jsonl"
    rows = [json.loads(x) for x in path.read_text("utf-8").splitlines()]
    rows[3]["answerable"] = "yes"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return (["gate", str(run), "--bar", "hit_at_3>=0.8"],
            Expect("answers.jsonl", 4, "answerable"))


@case()
def c_gate_baseline_not_a_run_folder(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    return (["gate", str(run), "--bar", "hit_at_3>=0.8", "--baseline", str(w.ex)],
            Expect("metrics.json"))


# --- compare, report, export-trec ----------------------------------------------------------


@case()
def c_compare_unknown_metric(w: W) -> tuple[list[str], Expect]:
    a, b = w.run_dir("a"), w.run_dir("b")
    return (["compare", str(a), str(b), "-m", "hti_at_3"],
            Expect("hti_at_3", also=["did you mean", "hit_at_3"]))


@case()
def c_compare_broken_run(w: W) -> tuple[list[str], Expect]:
    a, b = w.run_dir("a"), w.run_dir("b")
    (b / "answers.jsonl").write_text('{"run_id": "b", "question_id": \n', encoding="utf-8")
    return ["compare", str(a), str(b)], Expect("answers.jsonl", 1)


@case()
def c_report_truncated_answers(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    path = run / "answers.jsonl"
    path.write_bytes(path.read_bytes()[:-30])
    return ["report", str(run)], Expect("answers.jsonl", 10)


@case()
def c_report_not_a_run_folder(w: W) -> tuple[list[str], Expect]:
    return ["report", str(w.ex)], Expect("metrics.json")


@case()
def c_export_trec_metrics_without_schema_version(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    data = json.loads((run / "metrics.json").read_text("utf-8"))
    del data["schema_version"]
    (run / "metrics.json").write_text(json.dumps(data), encoding="utf-8")
    return ["export-trec", str(run)], Expect("metrics.json", field="schema_version")


@case()
def c_export_trec_not_a_run_folder(w: W) -> tuple[list[str], Expect]:
    return ["export-trec", str(w.ex), "--out", str(w.tmp / "trec")], Expect("metrics.json")


# --- trec-eval -----------------------------------------------------------------------------


def trec_files(w: W, run_text: str | None = None, qrels_text: str | None = None
               ) -> tuple[str, str]:
    qrels, run = w.tmp / "qrels.trec", w.tmp / "run.trec"
    qrels.write_text(qrels_text or "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n", encoding="utf-8")
    run.write_text(run_text or "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d3 1 0.7 t\n",
                   encoding="utf-8")
    return str(qrels), str(run)


@case()
def c_trec_eval_bad_measure(w: W) -> tuple[list[str], Expect]:
    q, r = trec_files(w)
    return ["trec-eval", q, r, "-m", "ndcg_cutt.5"], Expect("-m")


@case()
def c_trec_eval_three_column_run_line(w: W) -> tuple[list[str], Expect]:
    q, r = trec_files(w, run_text="q1 Q0 d1 1 0.9 t\nq1 Q0 d2\n")
    return ["trec-eval", q, r, "-m", "map"], Expect("run.trec", 2)


@case()
def c_trec_eval_score_not_a_number(w: W) -> tuple[list[str], Expect]:
    q, r = trec_files(w, run_text="q1 Q0 d1 1 high t\n")
    return ["trec-eval", q, r, "-m", "map"], Expect("run.trec", 1, "score")


@case()
def c_trec_eval_qrels_grade_not_an_int(w: W) -> tuple[list[str], Expect]:
    q, r = trec_files(w, qrels_text="q1 0 d1 1\nq1 0 d2 yes\n")
    return ["trec-eval", q, r, "-m", "map"], Expect("qrels.trec", 2, "grade")


@case()
def c_trec_eval_missing_run_file(w: W) -> tuple[list[str], Expect]:
    q, _ = trec_files(w)
    return ["trec-eval", q, str(w.tmp / "none.trec"), "-m", "map"], Expect("none.trec")


# --- index ---------------------------------------------------------------------------------


def index_args(w: W, src: Path, *extra: str) -> list[str]:
    return ["index", "--source", str(src), "--out", str(w.tmp / "index"), "-q", *extra]


@case()
def c_index_chunk_size_zero(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    return index_args(w, src, "--chunk-size", "0"), Expect("--chunk-size")


@case()
def c_index_overlap_not_below_chunk_size(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    return index_args(w, src, "--chunk-size", "50", "--overlap", "60"), Expect("--overlap")


@case()
def c_index_negative_overlap(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    return index_args(w, src, "--overlap", "-1"), Expect("--overlap")


@case()
def c_index_unknown_embedder(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    return (index_args(w, src, "--embedder", "hashng"),
            Expect("--embedder", also=["did you mean", "hashing"]))


@case()
def c_index_source_missing(w: W) -> tuple[list[str], Expect]:
    w.index()
    return index_args(w, w.tmp / "nodocs"), Expect("nodocs")


@case()
def c_index_only_unsupported_files(w: W) -> tuple[list[str], Expect]:
    w.index()
    src = w.tmp / "odd"
    src.mkdir()
    (src / "notes.xyz").write_text("Versand 4,90 €", encoding="utf-8")
    return index_args(w, src), Expect("odd")


@case()
def c_index_non_utf8_text_file(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    (src / "latin1.txt").write_bytes("Rückgabe in 30 Tagen".encode("latin-1"))
    return index_args(w, src), Expect("latin1.txt")


@case()
def c_index_jsonl_document_malformed(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    (src / "docs.jsonl").write_text('{"doc_id": "a", "text": "eins"}\n{"doc_id": "b", "text"\n',
                                    encoding="utf-8")
    return index_args(w, src), Expect("docs.jsonl", 2)


@case()
def c_index_jsonl_document_without_text(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    (src / "docs.jsonl").write_text('{"doc_id": "a"}\n', encoding="utf-8")
    return index_args(w, src), Expect("docs.jsonl", 1, "text")


@case()
def c_index_duplicate_doc_id(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    (src / "Versand.txt").write_text("Noch ein Versand.", encoding="utf-8")
    return index_args(w, src), Expect("versand", field="doc_id")


@case()
def c_index_sectioned_json_bad_page(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    (src / "agb.json").write_text(json.dumps({"doc_id": "agb", "sections": [
        {"heading": "§1", "text": "Zahlung", "page": 0}]}), encoding="utf-8")
    return index_args(w, src), Expect("agb.json", field="sections.0.page")


# --- strict records: no coercion, no unknown keys ------------------------------------------


@case()
def c_questions_id_a_number(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 2, lambda r: r.update(question_id=12))
    return w.run_args(), Expect("questions.jsonl", 2, "question_id")


@case()
def c_questions_answerable_one(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 3, lambda r: r.update(answerable=1))
    return w.run_args(), Expect("questions.jsonl", 3, "answerable")


@case()
def c_questions_must_contain_item_a_number(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 1, lambda r: r.update(must_contain=[4.9]))
    return w.run_args(), Expect("questions.jsonl", 1, "must_contain.0")


@case()
def c_questions_unknown_key_misspelt(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 4, lambda r: r.update(must_contian=r.pop("must_contain")))
    return w.run_args(), Expect("questions.jsonl", 4, "must_contian",
                                ["unknown field 'must_contian'", "did you mean must_contain?"])


@case()
def c_questions_required_key_misspelt(w: W) -> tuple[list[str], Expect]:
    # named as a misspelling, not as a missing `question`
    w.edit("questions.jsonl", 5, lambda r: r.update(questoin=r.pop("question")))
    return w.run_args(), Expect("questions.jsonl", 5, "questoin", ["did you mean question?"])


@case()
def c_gold_grade_a_string(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 2, lambda r: r["gold_evidence"][0].update(grade="2"))
    return w.run_args(), Expect("gold.jsonl", 2, "gold_evidence.0.grade")


@case()
def c_gold_grade_a_fraction(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 3, lambda r: r["gold_evidence"][0].update(grade=2.5))
    return w.run_args(), Expect("gold.jsonl", 3, "gold_evidence.0.grade")


@case()
def c_gold_grade_true(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 3, lambda r: r["gold_evidence"][0].update(grade=True))
    return w.run_args(), Expect("gold.jsonl", 3, "gold_evidence.0.grade")


@case()
def c_gold_chunk_id_a_number(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 4, lambda r: r["gold_evidence"][0].update(chunk_id=7))
    return w.run_args(), Expect("gold.jsonl", 4, "gold_evidence.0.chunk_id")


@case()
def c_gold_doc_id_a_number(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 4, lambda r: r["gold_evidence"][0].update(doc_id=3))
    return w.run_args(), Expect("gold.jsonl", 4, "gold_evidence.0.doc_id")


@case()
def c_gold_page_span_zero(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 1, lambda r: r["gold_evidence"][0].update(page_span=[0, 1]))
    return w.run_args(), Expect("gold.jsonl", 1, "gold_evidence.0.page_span.0")


@case()
def c_gold_page_span_reversed(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 1, lambda r: r["gold_evidence"][0].update(page_span=[3, 1]))
    return w.run_args(), Expect("gold.jsonl", 1, "gold_evidence.0.page_span")


@case()
def c_gold_label_unknown_key(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 2, lambda r: r["gold_evidence"][0].update(grdae=2))
    return w.run_args(), Expect("gold.jsonl", 2, "gold_evidence.0.grdae",
                                ["did you mean grade?"])


@case()
def c_gold_record_unknown_key(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 6, lambda r: r.update(evidence=r.pop("gold_evidence")))
    return w.run_args(), Expect("gold.jsonl", 6, "evidence", ["did you mean gold_evidence?"])


@case()
def c_predictions_score_a_string_number(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 5, lambda r: r["retrieved"][1].update(score="0.9"))
    return w.run_args(), Expect("predictions.jsonl", 5, "retrieved.1.score")


@case()
def c_predictions_tokens_negative(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 7, lambda r: r["usage"].update(completion_tokens=-6))
    return w.run_args(), Expect("predictions.jsonl", 7, "usage.completion_tokens")


@case()
def c_predictions_tokens_a_fraction(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 7, lambda r: r["usage"].update(prompt_tokens=430.5))
    return w.run_args(), Expect("predictions.jsonl", 7, "usage.prompt_tokens")


@case()
def c_predictions_citation_page_zero(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 1, lambda r: r["answer"]["citations"][0].update(page=0))
    return w.run_args(), Expect("predictions.jsonl", 1, "answer.citations.0.page")


@case()
def c_predictions_latency_negative(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 8, lambda r: r.update(latency_ms=-1.0))
    return w.run_args(), Expect("predictions.jsonl", 8, "latency_ms")


@case()
def c_predictions_unknown_top_level_key(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 3, lambda r: r.update(retreived=r.pop("retrieved")))
    return w.run_args(), Expect("predictions.jsonl", 3, "retreived", ["did you mean retrieved?"])


@case()
def c_predictions_unknown_answer_key(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 2, lambda r: r["answer"].update(citation=[]))
    return w.run_args(), Expect("predictions.jsonl", 2, "answer.citation",
                                ["did you mean citations?"])


@case()
def c_predictions_unknown_retrieved_key(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 2, lambda r: r["retrieved"][2].update(scor=0.5))
    return w.run_args(), Expect("predictions.jsonl", 2, "retrieved.2.scor",
                                ["did you mean score?"])


@case()
def c_predictions_unknown_usage_key(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 7, lambda r: r["usage"].update(prompt_token=1))
    return w.run_args(), Expect("predictions.jsonl", 7, "usage.prompt_token",
                                ["did you mean prompt_tokens?"])


@case()
def c_chunks_chunk_id_a_number(w: W) -> tuple[list[str], Expect]:
    w.edit("chunks.jsonl", 4, lambda r: r.update(chunk_id=4))
    return w.run_args(), Expect("chunks.jsonl", 4, "chunk_id")


@case()
def c_chunks_page_span_strings(w: W) -> tuple[list[str], Expect]:
    w.edit("chunks.jsonl", 2, lambda r: r.update(page_span=["1", "1"]))
    return w.run_args(), Expect("chunks.jsonl", 2, "page_span.0")


@case()
def c_chunks_unknown_key(w: W) -> tuple[list[str], Expect]:
    w.edit("chunks.jsonl", 3, lambda r: r.update(page_spam=[1, 1]))
    return w.run_args(), Expect("chunks.jsonl", 3, "page_spam", ["did you mean page_span?"])


# --- file level: size of a line, YAML keys given twice ------------------------------------


@case()
def c_questions_line_longer_than_the_limit(w: W) -> tuple[list[str], Expect]:
    from ragassay.jsonio import MAX_LINE_BYTES

    w.edit("questions.jsonl", 6, lambda r: r.update(expected_answer="x" * MAX_LINE_BYTES))
    return w.run_args(), Expect("questions.jsonl", 6, also=["MiB"])


@case()
def c_config_duplicate_key(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("seed: 7", "seed: 7\nseed: 8") + 1
    return w.run_args(), Expect("config.yaml", n, "seed", ["duplicate key"])


@case()
def c_config_duplicate_nested_key(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("  top_k: 3", "  top_k: 3\n  top_k: 5") + 1
    return w.run_args(), Expect("config.yaml", n, "pipeline.top_k", ["duplicate key"])


@case()
def c_gate_config_duplicate_bar(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    n = w.cfg_append('  hit_at_3: ">= 0.5"\n')
    return (["gate", str(run), "-c", str(w.cfg)],
            Expect("config.yaml", n, "gate.hit_at_3", ["duplicate key"]))


@case()
def c_config_non_utf8_names_the_line(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("seed: 7", "seed: 7 # \xff")
    w.cfg.write_bytes(w.cfg.read_bytes().replace("\xff".encode(), b"\xff"))
    return w.run_args(), Expect("config.yaml", n, also=["byte"])


# --- index.json: chunk texts are checked against their hash --------------------------------


def _index_config(w: W, out: Path) -> None:
    w.cfg_replace("chunks_path: chunks.jsonl\npredictions_path: predictions.jsonl\n",
                  f"index_dir: {out}\n")


@case()
def c_index_chunk_text_edited(w: W) -> tuple[list[str], Expect]:
    _, out = w.index()
    data = json.loads((out / "index.json").read_text("utf-8"))
    data["chunks"][0]["text"] = data["chunks"][0]["text"].replace("4,90", "0,00")
    (out / "index.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    _index_config(w, out)
    return w.run_args(), Expect("index.json", field="chunks.0.text",
                                also=[data["chunks"][0]["chunk_id"]])


@case()
def c_index_chunk_without_text_hash(w: W) -> tuple[list[str], Expect]:
    _, out = w.index()
    data = json.loads((out / "index.json").read_text("utf-8"))
    del data["chunks"][0]["text_sha256"]
    (out / "index.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    _index_config(w, out)
    return w.run_args(), Expect("index.json", field="chunks.0.text_sha256")


@case()
def c_index_of_schema_version_1(w: W) -> tuple[list[str], Expect]:
    _, out = w.index()
    data = json.loads((out / "index.json").read_text("utf-8"))
    data["schema_version"] = 1
    for c in data["chunks"]:
        del c["text_sha256"]
    (out / "index.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    _index_config(w, out)
    return w.run_args(), Expect("index.json", field="schema_version",
                                also=["rebuild with `ragassay index`"])


@case()
def c_index_chunk_unknown_key(w: W) -> tuple[list[str], Expect]:
    _, out = w.index()
    data = json.loads((out / "index.json").read_text("utf-8"))
    data["chunks"][0]["pages"] = [1, 1]
    (out / "index.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    _index_config(w, out)
    return w.run_args(), Expect("index.json", field="chunks.0.pages")


# --- values that are not what they claim to be ---------------------------------------------


@case()
def c_config_seed_negative(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("seed: 7", "seed: -1")
    return w.run_args(), Expect("config.yaml", n, "seed")


@case()
def c_config_bootstrap_resamples_a_billion(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_replace("metrics:\n", "metrics:\n  bootstrap_resamples: 1000000000\n")
    return w.run_args(), Expect("config.yaml", n + 1, "metrics.bootstrap_resamples")


@case()
def c_predictions_json_key_given_twice(w: W) -> tuple[list[str], Expect]:
    line = (w.ex / "predictions.jsonl").read_text("utf-8").splitlines()[2]
    twice = '{"question_id": "de03", "question_id": "de04"'
    w.set_line("predictions.jsonl", 3, line.replace('{"question_id": "de03"', twice))
    return w.run_args(), Expect("predictions.jsonl", 3, "question_id", also=["twice"])


@case()
def c_questions_id_only_whitespace(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 5, lambda r: r.update(question_id=" \t "))
    return w.run_args(), Expect("questions.jsonl", 5, "question_id", also=["whitespace"])


@case()
def c_gold_chunk_id_only_whitespace(w: W) -> tuple[list[str], Expect]:
    w.edit("gold.jsonl", 2, lambda r: r["gold_evidence"][0].update(chunk_id="  "))
    return w.run_args(), Expect("gold.jsonl", 2, "gold_evidence.0.chunk_id")


@case()
def c_predictions_chunk_ranked_twice(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 1, lambda r: r["retrieved"].append(dict(r["retrieved"][0])))
    return w.run_args(), Expect("predictions.jsonl", 1, "retrieved",
                                also=["'versand-1' is ranked twice (at 1 and 6)"])


@case()
def c_predictions_latency_that_would_overflow(w: W) -> tuple[list[str], Expect]:
    w.edit("predictions.jsonl", 2, lambda r: r.update(latency_ms={"a": 1e308, "b": 1e308}))
    return w.run_args(), Expect("predictions.jsonl", 2, "latency_ms.a")


# --- a missing optional package: bad setup, with the line that installs it -----------------


def _bm25_config(w: W, text: str) -> None:
    src = w.tmp / "docs"
    src.mkdir()
    (src / "faq.md").write_text(text, "utf-8")
    _, out = w.index(src)
    _index_config(w, out)
    w.cfg_replace("name: naive_baseline", "name: bm25\n  retrieval_backend: bm25")


@case()
def c_bm25_korean_text_without_kiwipiepy(w: W) -> tuple[list[str], Expect]:
    _bm25_config(w, "# 배송\n배송은 3일 걸립니다. Versand 4,90 €.\n" * 5)
    w.hide_package("kiwipiepy")
    return w.run_args(), Expect("pipeline.name", also=["pip install 'kiwipiepy>=0.24'",
                                                       "pip install -e '.[bm25]'"])


@case()
def c_bm25_without_bm25s(w: W) -> tuple[list[str], Expect]:
    _bm25_config(w, "# Versand\nDer Versand kostet 4,90 €.\n" * 5)
    w.hide_package("bm25s")
    return w.run_args(), Expect("pipeline.name", also=["pip install 'bm25s>=0.3'"])


@case()
def c_ray_executor_without_ray(w: W) -> tuple[list[str], Expect]:
    w.hide_package("ray")
    return w.run_args("--executor", "ray"), Expect(
        "executor.kind", also=["pip install 'ray", "2.61", "the [ray] extra"])


# --- input bombs: refused by a documented limit (docs/formats.md, "Limits") ---------------

LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n"
    for a, b in zip("abcdefgh", "bcdefghi", strict=True))


@case()
def c_config_billion_laughs(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_append(LAUGHS)
    return w.run_args(), Expect("config.yaml", n + 5, also=["100,000 values"])  # at f


@case()
def c_config_recursive_alias(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_append("loop: &loop [1, *loop]\n")
    return w.run_args(), Expect("config.yaml", n, also=["recursive"])


@case()
def c_config_nested_5000_deep(w: W) -> tuple[list[str], Expect]:
    n = w.cfg_append("deep: " + "[" * 5000 + "]" * 5000 + "\n")
    return w.run_args(), Expect("config.yaml", n, also=["deeper than 64"])


@case()
def c_config_of_2_gib(w: W) -> tuple[list[str], Expect]:
    with w.cfg.open("r+b") as fh:  # sparse: no disk used
        fh.truncate(2 * 1024 ** 3)
    return w.run_args(), Expect("config.yaml", also=["2 GiB", "1 MiB"])


@case()
def c_questions_json_array_100000_deep(w: W) -> tuple[list[str], Expect]:
    w.set_line("questions.jsonl", 4, "[" * 100_000 + "]" * 100_000)
    return w.run_args(), Expect("questions.jsonl", 4, also=["deeper than 64"])


@case()
def c_predictions_metadata_100_deep(w: W) -> tuple[list[str], Expect]:
    deep: Any = {}
    for _ in range(100):
        deep = {"x": deep}
    w.edit("predictions.jsonl", 2, lambda r: r.update(metadata=deep))
    return w.run_args(), Expect("predictions.jsonl", 2, also=["deeper than 64"])


@case()
def c_index_json_document_100000_deep(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    (src / "deep.json").write_text('{"doc_id": "d", "sections": ' + "[" * 100_000
                                   + "]" * 100_000 + "}", "utf-8")
    return index_args(w, src), Expect("deep.json", also=["deeper than 64"])


@case()
def c_index_document_of_2_gib(w: W) -> tuple[list[str], Expect]:
    src, _ = w.index()
    with (src / "big.txt").open("wb") as fh:
        fh.truncate(2 * 1024 ** 3)
    return index_args(w, src), Expect("big.txt", also=["2 GiB", "256 MiB"])


# --- the user's environment: not a bug (exit 2, what to do) ---------------------------------


@case()
def c_env_disk_full(w: W) -> tuple[list[str], Expect]:
    w.fail_writes(errno.ENOSPC)
    return w.run_args(), Expect("runs", also=["no space left", "--output-root"])


@case()
def c_env_read_only_folder(w: W) -> tuple[list[str], Expect]:
    w.fail_writes(errno.EROFS)
    return w.run_args(), Expect("runs", also=["read-only", "--output-root"])


@case()
def c_env_permission_denied(w: W) -> tuple[list[str], Expect]:
    w.fail_writes(errno.EACCES)
    return w.run_args(), Expect("runs", also=["permission denied"])


@case()
def c_env_disk_full_writing_the_report(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    w.fail_writes(errno.ENOSPC)
    return ["report", str(run), "--out", str(w.tmp / "r.html")], Expect(
        "r.html", also=["no space left"])


@case()
def c_run_id_128_hangul_is_384_bytes(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", "가" * 128), Expect("--run-id", also=["384 bytes", "128"])


@case()
def c_gate_junit_is_a_folder(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    (w.tmp / "out").mkdir()
    return ["gate", str(run), "--bar", "hit_at_3>=0.1", "--junit", str(w.tmp / "out")], Expect(
        "--junit", also=["is a folder"])


@case()
def c_report_out_is_a_folder(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    (w.tmp / "out").mkdir()
    return ["report", str(run), "--out", str(w.tmp / "out")], Expect("--out", also=["folder"])


@case()
def c_compare_json_is_a_folder(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    (w.tmp / "out").mkdir()
    return ["compare", str(run), str(run), "--json", str(w.tmp / "out")], Expect(
        "--json", also=["folder"])


def gold_args(w: W, command: str, out: Path) -> list[str]:
    return ["gold", command, "--gold", str(w.ex / "gold.jsonl"), "--questions",
            str(w.ex / "questions.jsonl"), "--chunks", str(w.ex / "chunks.jsonl"),
            "--out", str(out)]


@case()
def c_gold_fix_out_is_a_folder(w: W) -> tuple[list[str], Expect]:
    (w.tmp / "out").mkdir()
    return gold_args(w, "fix", w.tmp / "out"), Expect("--out", also=["folder"])


@case()
def c_gold_audit_out_is_a_folder(w: W) -> tuple[list[str], Expect]:
    (w.tmp / "out").mkdir()
    return gold_args(w, "audit", w.tmp / "out"), Expect("--out", also=["folder"])


@case()
def c_export_trec_out_is_a_file(w: W) -> tuple[list[str], Expect]:
    run = w.run_dir()
    (w.tmp / "out").write_text("x", encoding="utf-8")
    return ["export-trec", str(run), "--out", str(w.tmp / "out")], Expect(
        "--out", also=["is a file"])


@case()
def c_output_root_under_a_file(w: W) -> tuple[list[str], Expect]:
    (w.tmp / "file").write_text("x", encoding="utf-8")
    return w.run_args("--output-root", str(w.tmp / "file" / "runs")), Expect(
        "file", also=["is a file"])


# --- terminal safety: what the user typed is printed inert, a run id must read as written --


@case()
def c_run_id_with_bidi_override(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", "run\u202etxt.exe"), Expect("--run-id", also=["U+202E"])


@case()
def c_run_id_with_bidi_isolate(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", "a\u2066b"), Expect("--run-id", also=["U+2066"])


@case()
def c_run_id_with_c1_control(w: W) -> tuple[list[str], Expect]:
    return w.run_args("--run-id", "a\x9b31mb"), Expect("--run-id", also=["U+009B"])


@case()
def c_escape_sequence_in_a_config_path(w: W) -> tuple[list[str], Expect]:
    return ["run", "-c", str(w.ex / "\x1b[2Jmissing\u202e.yaml"), "--output-root",
            str(w.runs), "-q"], Expect("missing", also=["not found"])


@case()
def c_escape_sequence_in_a_field_name(w: W) -> tuple[list[str], Expect]:
    w.edit("questions.jsonl", 2, lambda r: r.update({"\x1b]8;;http://x\x07topic": "x"}))
    return w.run_args(), Expect("questions.jsonl", 2, also=["topic"])


@case()
def c_bidi_control_in_a_question_id(w: W) -> tuple[list[str], Expect]:
    # ids are shown as Python literals: the control is spelt out, not obeyed
    for n in (1, 6):
        w.edit("questions.jsonl", n, lambda r: r.update(question_id="de\u202e01"))
    return w.run_args(), Expect("questions.jsonl", 6, "question_id", also=[r"'de\u202e01'"])


# --- the test ------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file's bytes; a file over 64 MiB (a sparse 2 GiB bomb) by its size and time."""
    def state(p: Path) -> bytes:
        st = p.stat()
        if st.st_size > 64 * 1024 * 1024:
            return f"{st.st_size} {st.st_mtime_ns}".encode()
        return p.read_bytes()

    return {p.relative_to(root).as_posix(): state(p)
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("make", CASES)
def test_bad_input(make: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = W(tmp_path, monkeypatch)
    args, want = make(w)
    before = snapshot(tmp_path)

    res = runner.invoke(app, args)

    stderr, output = res.stderr, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in output
    assert "internal error" not in output
    assert res.exit_code == 2, output
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, stderr
    message = lines[0]
    assert not UNSAFE.search(output), repr(output)  # no escape sequence, no bidi control
    assert want.where in message, message
    if want.line is not None:
        assert f"{want.where}:{want.line}" in message, message
    if want.field is not None:
        assert f"field '{want.field}'" in message, message
    for text in want.also:
        assert text in message, message
    after = snapshot(tmp_path)
    assert sorted(after) == sorted(before), "files added or removed"
    assert all(after[k] == before[k] for k in before), "files changed"
    leftovers = [p.name for p in tmp_path.rglob("*") if ".tmp-" in p.name]
    assert not leftovers, leftovers


def test_example_is_valid(tmp_path: Path) -> None:
    """The catalogue breaks a valid input set: unbroken, every command accepts it."""
    w = W(tmp_path)
    run = w.run_dir()
    assert runner.invoke(app, ["gate", str(run), "--bar", "hit_at_3>=0.1"]).exit_code == 0
    assert runner.invoke(app, ["report", str(run)]).exit_code == 0
    assert runner.invoke(app, sweep_args(w, "--k", "1..3", "--threshold", "0.2")).exit_code == 0


def test_inputs_with_a_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    """A UTF-8 BOM (as Windows editors write it) before questions, gold, predictions, chunks
    and config changes nothing: same scores as without."""
    plain, bom = W(tmp_path / "plain"), W(tmp_path / "bom")
    for name in ("questions.jsonl", "gold.jsonl", "predictions.jsonl", "chunks.jsonl",
                 "config.yaml"):
        path = bom.ex / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    a, b = plain.run_dir(), bom.run_dir()
    assert (a / "answers.jsonl").read_bytes() == (b / "answers.jsonl").read_bytes()


def test_metadata_objects_are_kept_not_refused(tmp_path: Path) -> None:
    """Documented allowance: a ``metadata`` object in a question, gold record or label,
    prediction or chunk line is carried along and not read."""
    w = W(tmp_path)
    for name in ("questions.jsonl", "gold.jsonl", "predictions.jsonl", "chunks.jsonl"):
        w.edit(name, 1, lambda r: r.update(metadata={"annotator": "jb", "batch": 3}))
    w.edit("gold.jsonl", 2, lambda r: r["gold_evidence"][0].update(metadata={"note": "x"}))
    w.run_dir()


def test_unsupported_file_next_to_documents_is_skipped(tmp_path: Path) -> None:
    """Documented: a file of another type is not bad input; it is listed in build.skipped."""
    w = W(tmp_path)
    src, out = w.index()
    (src / "notes.xyz").write_text("Versand 4,90 €", encoding="utf-8")
    res = runner.invoke(app, index_args(w, src))
    assert res.exit_code == 0, res.output
    meta = json.loads((out / "index.json").read_text("utf-8"))
    assert meta["build"]["skipped"] == ["notes.xyz"]
    from ragassay.index import load_index, skipped_note

    assert load_index(out).skipped == ["notes.xyz"]
    assert skipped_note(load_index(out).skipped) == (
        "skipped 1 file of an unsupported type: notes.xyz")


def test_the_catalogue_counts_its_cases() -> None:
    """The catalogue is the list of what to fix: 182 cases, none of them an expected
    failure any more (a new case is added with its count here; ``case(xfail=...)`` marks
    one that does not keep the promise yet, and this test fails until it is fixed)."""
    assert len(CASES) == 182
    assert [c.id for c in CASES if c.marks] == []
    inputs_doc = (ROOT / "docs" / "inputs.md").read_text(encoding="utf-8")
    assert f"drives {len(CASES)} such inputs" in inputs_doc  # the docs count them too
    assert len({c.id for c in CASES}) == len(CASES)
