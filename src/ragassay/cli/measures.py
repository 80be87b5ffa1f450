"""Commands about measures: `ragassay metrics`, `ragassay trec-eval`, `ragassay judge-check`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import cli
from ..errors import InputError
from .common import ConfigOpt, _guard
from .output import _table


def metrics_cmd(list_: Annotated[bool, typer.Option("--list", help="List the measures.")] = True
                ) -> None:
    """Every measure: its canonical name (`name_at_k` with a cutoff), group, direction,
    trec_eval name and formula. Retrieval measures also work in `ragassay trec-eval`."""
    from ..metrics import list_measures

    header = ["name", "group", "better", "cutoff", "trec_eval", "formula"]
    _table("measures (name_at_k; also name@k, name.k)", header, (
        [info.name, info.group, "higher" if info.higher_is_better else "lower", info.cutoff,
         info.trec_eval or "—", info.formula] for info in list_measures(None)), left=header)


def trec_eval(qrels: Annotated[Path, typer.Argument(help="TREC qrels: qid 0 docid grade.")],
              run_file: Annotated[Path, typer.Argument(help="TREC run: qid Q0 docid rank score "
                                                            "tag.")],
              measure: Annotated[list[str], typer.Option(
                  "--measure", "-m", help="e.g. ndcg_cut.5, P.5, recip_rank, map, mrr@10.")],
              per_query: Annotated[bool, typer.Option("-q", help="Per-query lines too.")] = False,
              complete: Annotated[bool, typer.Option(
                  "-c", help="Score queries missing from the run as 0 (trec_eval -c).")] = False,
              ) -> None:
    """trec_eval-compatible evaluation of TREC files, printed in trec_eval's layout."""
    from ..metrics import evaluate, parse_measures
    from ..metrics.trec import format_results, read_qrels, read_run

    def go() -> str:
        try:
            measures = parse_measures(measure)
        except ValueError as exc:
            raise InputError("-m", str(exc)) from None
        q, r = read_qrels(qrels), read_run(run_file)
        res = evaluate(q, r, measures, missing_queries="zero" if complete else "skip")
        return format_results(res, per_query=per_query)

    sys.stdout.write(_guard(go))


def judge_check_cmd(labelled: Annotated[Path, typer.Argument(
                        help="JSONL of {id, claim, sources: [text], label: yes|no}.")],
                    config: ConfigOpt) -> None:
    """Measure the config's LLM judge against human labels: accuracy and Cohen's kappa."""
    from ..config import check_endpoints, load_config
    from ..endpoint import OpenAICompatClient
    from ..judge import Judge, judge_check

    def go() -> dict[str, Any]:
        cfg = load_config(config)
        if cfg.judge is None:
            raise InputError(config, "no judge configured", field="judge")
        check_endpoints(cfg, sections=("judge",))
        with OpenAICompatClient(cfg.judge) as client:
            return judge_check(labelled, Judge(client))

    res = _guard(go)
    acc = "—" if res["accuracy"] is None else f"{res['accuracy']:.3f}"
    kappa = "—" if res["cohen_kappa"] is None else f"{res['cohen_kappa']:.3f}"
    cli.out.print(f"judge vs labels: n={res['n']} measured={res['measured']} accuracy={acc} "
              f"kappa={kappa} confusion={res['confusion']} not measured={res['not_measured']}",
              highlight=False, soft_wrap=True)
    if res["disagreements"]:
        cli.out.print("disagreements: " + ", ".join(res["disagreements"]), soft_wrap=True)
