"""`ragassay import squad|beir|trec|bidmate`: public sets → a folder `index` and `run` take."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from ..defaults import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP
from . import consoles
from .common import CliCommand, CliGroup, ForceOpt, literal, run_guarded
from .output import show_table

app = typer.Typer(help="Import a public QA or retrieval set as documents, questions, gold "
                       "and configs.", no_args_is_help=True, cls=CliGroup)

SizeOpt = Annotated[int, typer.Option(help="Chunk length the labels are placed for (that of "
                                      "`ragassay index --chunk-size`).")]
OverlapOpt = Annotated[int, typer.Option(help="Chunk overlap the labels are placed for.")]
OutOpt = Annotated[Path, typer.Option("--out", help="Folder of the imported set (new, or "
                                      "replaced with --force).")]


def _chunking(chunk_size: int, overlap: int) -> tuple[int, int]:
    from ..errors import InputError
    from ..ingest.chunking import check_chunking

    try:
        check_chunking(chunk_size, overlap)
    except ValueError as exc:
        raise InputError("--chunk-size/--overlap", str(exc)) from None
    return chunk_size, overlap


def _import(read: Callable[[], Any], out: Path, force: bool) -> None:
    from ..importers import write_set

    def go() -> Any:
        imported = read()  # the reader is called inside the guard: bad input exits 2
        command = "ragassay " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        write_set(imported, out, command=command, force=force)
        return imported

    imported = run_guarded(go)
    for s in imported.skipped:
        consoles.err.print(f"[yellow]skipped[/] {literal(s.question_id)}: {literal(s.reason)}")
    for note in imported.notes:
        consoles.err.print(f"[yellow]note:[/] {literal(note)}")
    if imported.mapping:
        show_table("config keys", ("key", "status", "ragassay", "note"),
               [(m["key"], m["status"], m["to"], m["note"]) for m in imported.mapping])
    c = imported.counts()
    consoles.err.print(f"imported {c['questions']} questions ({c['answerable']} answerable, "
                       f"{c['unanswerable']} unanswerable), {c['gold_labels']} gold labels, "
                       f"{c['documents']} documents → {literal(str(out))}"
                       + (f"; {c['skipped']} skipped" if c["skipped"] else ""))
    size, overlap = imported.chunking
    opts = ("" if (size, overlap) == (DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP)
            else f" --chunk-size {size} --overlap {overlap}")
    consoles.err.print(f"next: ragassay index --source {literal(str(out))}/documents --out "
                       f"{literal(str(out))}/index{opts} && ragassay run -c "
                       f"{literal(str(out))}/config.yaml")


@app.command(cls=CliCommand)
def squad(file: Annotated[Path, typer.Argument(help="A SQuAD v1/v2 or KorQuAD v1 JSON file.")],
          out: OutOpt,
          skip_bad: Annotated[bool, typer.Option(
              "--skip-bad", help="Leave out (and list) questions whose answer span does not "
                                 "match its context, instead of stopping.")] = False,
          chunk_size: SizeOpt = DEFAULT_CHUNK_SIZE, overlap: OverlapOpt = DEFAULT_OVERLAP,
          force: ForceOpt = False) -> None:
    """Paragraphs → documents, answers → must_contain, the answer's sentence → support_claim,
    is_impossible → unanswerable."""
    from ..importers import read_squad

    _import(lambda: read_squad(file, skip_bad=skip_bad,
                                    chunking=_chunking(chunk_size, overlap)), out, force)


@app.command(cls=CliCommand)
def beir(folder: Annotated[Path, typer.Argument(
             help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.")],
         out: OutOpt,
         split: Annotated[str, typer.Option(help="The qrels split to import.")] = "test",
         chunk_size: SizeOpt = DEFAULT_CHUNK_SIZE, overlap: OverlapOpt = DEFAULT_OVERLAP,
         force: ForceOpt = False) -> None:
    """Corpus → documents, judged queries → questions, each relevant document → a label
    placed by its lead sentence."""
    from ..importers import read_beir

    _import(lambda: read_beir(folder, split=split,
                                   chunking=_chunking(chunk_size, overlap)), out, force)


@app.command(cls=CliCommand)
def trec(qrels: Annotated[Path, typer.Option(help="TREC qrels: qid iteration docid grade.")],
         topics: Annotated[Path, typer.Option(help="TREC <top> topics, or qid<TAB>query.")],
         corpus: Annotated[Path, typer.Option(help="Corpus JSONL {_id|doc_id|docno, title?, "
                                                   "text}.")],
         out: OutOpt,
         field: Annotated[str, typer.Option(help="Topic field asked: title or desc.")] = "title",
         chunk_size: SizeOpt = DEFAULT_CHUNK_SIZE, overlap: OverlapOpt = DEFAULT_OVERLAP,
         force: ForceOpt = False) -> None:
    """TREC qrels + topics + a corpus JSONL, read like a BEIR folder."""
    from ..importers import read_trec

    _import(lambda: read_trec(qrels, topics, corpus, field=field,
                                   chunking=_chunking(chunk_size, overlap)), out, force)


@app.command(cls=CliCommand)
def bidmate(src: Annotated[Path, typer.Argument(help="The project's root folder.")],
            out: OutOpt,
            config: Annotated[Path | None, typer.Option(
                help="Its config, relative to SRC (default configs/eval/rag_quality_v1.yaml)."
            )] = None,
            force: ForceOpt = False) -> None:
    """The contract project's layout: sectioned JSON documents, questions, gold, config keys
    (each mapped or reported) and its index (schema_version 2) read as chunks."""
    from ..importers import read_bidmate

    _import(lambda: read_bidmate(src, config=config), out, force)
