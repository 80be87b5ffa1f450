"""`ragassay generate` (a verified test set from documents) and `ragassay generate apply`
(a person's review decisions → the reviewed set)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..errors import NOT_MEASURED, InputError
from . import consoles
from .common import (
    CliCommand,
    CliGroup,
    ForceOpt,
    ProgressOpt,
    progress_on,
    run_guarded,
    with_progress,
)
from .output import show_table

app = typer.Typer(cls=CliGroup, invoke_without_command=True,
                  help="Generate a test set (questions, verified gold, configs) from your "
                       "documents with an LLM, then review it in generation.html.")


def _command() -> str:
    return "ragassay " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def _endpoint(config: Path | None, base_url: str | None, model: str,
              api_key_env: str | None, cache_dir: Path | None, no_cache: bool,
              concurrency: int | None, max_tokens: int) -> Any:
    """The endpoint: the config's ``judge`` section, else its ``answerer`` (kind llm), else
    ``--base-url``/``--model``; the cache as the options say."""
    from ..endpoint import EndpointConfig

    if config is not None:
        from ..config import load_config

        cfg = load_config(config)
        if cfg.judge is not None:
            ep = cfg.judge
        elif cfg.answerer.kind == "llm":
            ep = cfg.answerer.endpoint()
        else:
            raise InputError(config, "has no judge section and no answerer of kind llm: "
                             "nothing to generate with", field="judge")
    elif base_url is not None:
        try:
            ep = EndpointConfig(base_url=base_url, model=model, api_key_env=api_key_env)
        except ValueError as exc:
            raise InputError("--base-url", str(exc).splitlines()[-1].strip()) from None
    else:
        raise InputError("--base-url", "give the model's endpoint as --base-url URL (e.g. "
                         "http://127.0.0.1:8080/v1 of `ragassay serve-local`) or --config FILE")
    update: dict[str, Any] = {"max_tokens": max_tokens}
    if concurrency is not None:
        update["concurrency"] = concurrency
    if no_cache:
        update["cache_dir"] = None
    elif cache_dir is not None or ep.cache_dir is None:
        update["cache_dir"] = cache_dir or Path(".cache/llm")
    return ep.model_copy(update=update)


@app.callback()
def generate_cmd(
        ctx: typer.Context,
        source: Annotated[Path | None, typer.Option(
            "--source", help="A folder of documents (read as `ragassay index` reads it) or "
                             "an index folder.")] = None,
        out: Annotated[Path | None, typer.Option(
            "--out", help="The set's folder (new, or replaced with --force).")] = None,
        n: Annotated[int, typer.Option("--n", min=1, help="Items to keep.")] = 20,
        seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
        kinds: Annotated[str | None, typer.Option(
            help="Kinds and shares, e.g. 'factoid,numeric' or 'factoid=0.6,unanswerable=0.4' "
                 "(default: factoid 0.3, numeric 0.25, two_chunk/unanswerable/distractor "
                 "0.15 each).")] = None,
        config: Annotated[Path | None, typer.Option(
            "--config", "-c", help="An evaluation config whose judge (else llm answerer) "
                                   "section is the endpoint.")] = None,
        base_url: Annotated[str | None, typer.Option(
            help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1.")] = None,
        model: Annotated[str, typer.Option(help="Model name sent to --base-url.")] = "local",
        api_key_env: Annotated[str | None, typer.Option(
            help="Environment variable holding the API key (never the key itself).")] = None,
        cache_dir: Annotated[Path | None, typer.Option(
            help="Reply cache (default: the config's cache_dir, else .cache/llm): a rerun "
                 "with the same seed, model and chunks makes no call.")] = None,
        no_cache: Annotated[bool, typer.Option("--no-cache", help="No reply cache.")] = False,
        concurrency: Annotated[int | None, typer.Option(
            min=1, help="Parallel calls (default: the server's slots, else 1).")] = None,
        max_tokens: Annotated[int, typer.Option(min=16, help="Tokens per reply.")] = 320,
        chunk_size: Annotated[int, typer.Option(
            help="Chunk length of a documents folder (that of `ragassay index`).")] = 400,
        overlap: Annotated[int, typer.Option(help="Chunk overlap.")] = 80,
        oversample: Annotated[int, typer.Option(
            min=1, help="Candidates tried at most, per item asked.")] = 4,
        structured: Annotated[bool, typer.Option(
            "--structured/--no-structured",
            help="Ask for JSON-schema output (response_format).")] = True,
        force: ForceOpt = False, progress: ProgressOpt = None) -> None:
    """Generate `--n` items from `--source`; every kept label verified `ok`. Writes
    questions.jsonl, gold.jsonl, config.yaml (+ bm25/hybrid), index/, generation.json and
    generation.html. Exit 3 (set still written) when fewer than `--n` were kept."""
    if ctx.invoked_subcommand is not None:
        return
    from ..endpoint import OpenAICompatClient, check_endpoint
    from ..generate import generate_set, parse_kinds
    from ..progress import bar

    def go() -> Any:
        if source is None or out is None:
            raise InputError("--source" if source is None else "--out", "is required: "
                             "ragassay generate --source DOCS --out SET --base-url URL")
        if out.exists() and not force:
            raise InputError(out, "already exists; pass --force to replace it")
        mix = parse_kinds(kinds)
        ep = _endpoint(config, base_url, model, api_key_env, cache_dir, no_cache,
                       concurrency, max_tokens)
        check_endpoint(ep, what="endpoint", path=config or "--base-url")
        with OpenAICompatClient(ep) as client, bar("generating (calls)", None) as stage:
            return generate_set(source, client, out, n=n, seed=seed, kinds=mix,
                                chunk_size=chunk_size, overlap=overlap, oversample=oversample,
                                structured=structured, force=force, command=_command(),
                                progress=stage.advance, index_progress=progress_on(progress))

    gen = with_progress(progress, go)
    _summary(gen, out)
    if gen.short:
        consoles.err.print(f"[yellow]kept {len(gen.kept)} of {n} items asked[/] "
                      f"({escape(gen.stopped or '')}); the set is written: review it, or "
                      "rerun with a larger --oversample, other --kinds or a stronger model")
        raise typer.Exit(NOT_MEASURED)


def _summary(gen: Any, out: Path | None) -> None:
    from ..generate.engine import drop_counts

    kinds = [(k, gen.quotas[k], sum(r.candidate.kind == k for r in gen.kept))
             for k in gen.quotas]
    show_table("kinds", ("kind", "asked", "kept"), kinds, left=("kind",))
    drops = [(k, v) for k, v in drop_counts(gen.records).items() if v]
    if drops:
        show_table("dropped", ("reason", "candidates"), drops, left=("reason",))
    u = gen.usage
    cost = "" if u.cost is None else f", cost {u.cost:.4f}"
    consoles.err.print(f"kept {len(gen.kept)} of {gen.options.n} from {len(gen.records)} "
                  f"candidates; {u.calls} calls ({u.cached} cached), "
                  f"{u.prompt_tokens + u.completion_tokens} tokens{cost} → {escape(str(out))}")
    if gen.kept:
        consoles.err.print(f"next: open {escape(str(out))}/generation.html, then `ragassay run -c "
                      f"{escape(str(out))}/config.yaml`")


@app.command("apply", cls=CliCommand)
def apply_cmd(
        decisions: Annotated[Path, typer.Argument(
            help="The decisions file the review page downloads.")],
        out: Annotated[Path, typer.Option("--out", help="The reviewed set's new folder.")],
        set_dir: Annotated[Path, typer.Option(
            "--set", help="The generated set the decisions were made for.")],
        keep_undecided: Annotated[bool, typer.Option(
            "--keep-undecided", help="Keep items without a decision (default: left out).")
        ] = False,
        force: ForceOpt = False) -> None:
    """Write the reviewed set to a new folder: accepted and edited items kept, rejected ones
    listed (review.json)."""
    from ..generate import apply_decisions

    result = run_guarded(lambda: apply_decisions(decisions, set_dir, out, command=_command(),
                                            keep_undecided=keep_undecided, force=force))
    consoles.err.print(f"kept {result.kept} items ({len(result.accepted)} accepted, "
                  f"{len(result.edited)} edited); left out {len(result.rejected)} rejected and "
                  f"{len(result.undecided)} undecided → {escape(str(out))}")
    for qid in result.rejected:
        consoles.err.print(f"rejected {escape(qid)}")
