"""`ragassay gold audit` and `ragassay gold fix`: the state of every gold label, and the
repaired labels written to a new file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import GATE_FAILED
from . import consoles
from .common import CliGroup, Format, FormatOpt, literal, run_guarded
from .output import print_json, show_table

if TYPE_CHECKING:
    from ..gold import QuestionGold
    from ..schema import Question

app = typer.Typer(no_args_is_help=True, cls=CliGroup,
                  help="Check gold labels against an index or chunk file, and repair them.")

GoldOpt = Annotated[Path, typer.Option("--gold", help="Gold evidence JSONL.")]
QuestionsOpt = Annotated[Path, typer.Option("--questions", help="Questions JSONL.")]
IndexOpt = Annotated[Path | None, typer.Option(
    "--index", help="An index folder (give this or --chunks).")]
ChunksOpt = Annotated[Path | None, typer.Option(
    "--chunks", help="A chunk file, chunks.jsonl (give this or --index).")]


def _anchored(gold_path: Path, questions_path: Path, index_dir: Path | None,
              chunks_path: Path | None) -> tuple[list[Question], dict[str, QuestionGold], Any]:
    """Questions, their anchored gold and the store, read as a run reads them."""
    from ..anchor import anchor_gold
    from ..errors import InputError
    from ..gold import load_gold, read_questions

    if (index_dir is None) == (chunks_path is None):
        raise InputError("--index", "give the evidence as --index DIR or --chunks FILE, "
                         "exactly one of them")
    questions = read_questions(questions_path)
    gold = load_gold(gold_path, questions)
    if index_dir is not None:
        from ..index import load_index

        store = load_index(index_dir)
    else:
        from ..store import read_chunks

        assert chunks_path is not None
        store = read_chunks(chunks_path)
    return questions, anchor_gold(questions, gold, store), store


def audit(gold_path: GoldOpt, questions_path: QuestionsOpt, index_dir: IndexOpt = None,
          chunks_path: ChunksOpt = None,
          out_file: Annotated[Path | None, typer.Option(
              "--out", help="Also write the JSON report to this file.")] = None,
          output_format: FormatOpt = Format.text) -> None:
    """The state of every gold label (ok, also_in, reanchored, terms_only, split,
    lost_in_parsing, unanchored) with its evidence.

    Exit 1 when an answerable question's gold is unusable (an unanchored label, a label lost
    with no chunk left, no gold record, or `gold_evidence: []`), 2 on bad input, else 0.
    With --format json, stdout is the report (the document --out writes)."""
    from ..atomic import write_text
    from ..goldaudit import gold_audit
    from ..jsonio import json_text
    from ..report.summary import GOLD_HEADER, GOLD_TITLE, gold_line, gold_rows
    from ..targets import check_file_target

    if out_file is not None:
        run_guarded(lambda: _not_an_input(out_file, gold_path, questions_path))
        run_guarded(lambda: check_file_target(out_file, "--out"))
    questions, anchored, _ = run_guarded(lambda: _anchored(gold_path, questions_path, index_dir,
                                                      chunks_path))
    report = {"gold_path": str(gold_path), "questions_path": str(questions_path),
              "evidence": str(index_dir if index_dir is not None else chunks_path),
              **gold_audit(questions, anchored)}
    if out_file is not None:
        run_guarded(lambda: write_text(out_file, json_text(report)))
    if output_format is Format.json:
        print_json(report)
    else:
        labels = sorted([*report["reanchored"], *report["ok"]],
                        key=lambda m: (_order(questions)[m["question_id"]], m["label"]))
        show_table(GOLD_TITLE, GOLD_HEADER, gold_rows(labels),
               left=["labelled chunk", "state", "gold now", "evidence"])
        consoles.out.print(literal(gold_line(report)), soft_wrap=True, highlight=False)
    if report["unusable"]:
        raise typer.Exit(GATE_FAILED)


def _not_an_input(out_file: Path, *inputs: Path) -> None:
    """Refuse an ``--out`` that names an input file: the gold commands never change their
    inputs."""
    from ..errors import InputError

    for path in inputs:
        if out_file.resolve() == path.resolve() or (
                out_file.exists() and path.exists() and out_file.samefile(path)):
            raise InputError(out_file, f"--out is the input file {path}; write to a new file "
                             "(the gold commands never change their input)", field="--out")


def _order(questions: list[Question]) -> dict[str, int]:
    return {q.question_id: i for i, q in enumerate(questions)}


def fix(gold_path: GoldOpt, questions_path: QuestionsOpt,
        out_file: Annotated[Path, typer.Option(
            "--out", help="The repaired gold JSONL (a new file; never the input).")],
        index_dir: IndexOpt = None, chunks_path: ChunksOpt = None) -> None:
    """Write the gold with each re-anchored label moved to where its evidence is now
    (the old id kept in `previous_chunk_id`), and print what changed.

    Labels that need a person (lost_in_parsing, unanchored) are kept as they are and named
    on stderr; `ragassay gold audit` lists their nearest chunks. Fixing a fixed file
    changes nothing."""
    from ..atomic import write_text
    from ..goldaudit import fixed_gold_text, label_fixes
    from ..targets import check_file_target

    run_guarded(lambda: _not_an_input(out_file, gold_path, questions_path))
    run_guarded(lambda: check_file_target(out_file, "--out"))
    questions, anchored, store = run_guarded(lambda: _anchored(gold_path, questions_path,
                                                          index_dir, chunks_path))
    fixes = label_fixes(questions, anchored)
    run_guarded(lambda: write_text(out_file, fixed_gold_text(gold_path, fixes, store)))
    for f in fixes:
        consoles.out.print(literal(f.line()), soft_wrap=True, highlight=False)
    left = [(qid, i, ev) for qid, g in anchored.items() for i, ev in enumerate(g.evidence)
            if ev.status in ("lost_in_parsing", "unanchored")]
    for qid, i, ev in left:
        consoles.err.print(f"kept: {literal(qid)} label {i} ({ev.status}): {literal(ev.reason)}",
                           soft_wrap=True, highlight=False)
    consoles.err.print(f"{len(fixes)} label(s) moved, {len(left)} left for a person → "
                       f"{literal(str(out_file))}")


app.command()(audit)
app.command()(fix)
