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



def trec_eval(qrels: Annotated[Path, typer.Argument(
                  help="TREC qrels: qid 0 docid grade ('-': standard input).")],
              run_file: Annotated[Path, typer.Argument(
                  help="TREC run: qid Q0 docid rank score tag ('-': standard input).")],
              measure: Annotated[list[str] | None, typer.Option(
                  "--measure", "-m", help="trec_eval measure: map, Rprec, recip_rank, P, recall, "
                  "ndcg, ndcg_cut, map_cut, success (a family alone takes trec_eval's default "
                  "cutoffs; P.5,10 lists them), num_q, num_ret, num_rel, num_rel_ret, official "
                  "(the default: trec_eval's set without runid, gm_map, bpref, "
                  "iprec_at_recall, which ragassay does not compute); also mrr@10, ndcg@5.")
                  ] = None,
              per_query: Annotated[bool, typer.Option("-q", help="Per-query lines too.")] = False,
              complete: Annotated[bool, typer.Option(
                  "-c", help="Average over every judged query, those missing from the run "
                  "counting 0 (trec_eval -c).")] = False,
              no_summary: Annotated[bool, typer.Option(
                  "-n", help="No 'all' lines (trec_eval -n).")] = False,
              level: Annotated[int, typer.Option(
                  "-l", help="Relevance level: grade >= N is relevant (>= 1; nDCG keeps "
                  "every positive grade as gain, as trec_eval).")] = 1,
              max_docs: Annotated[int | None, typer.Option(
                  "-M", help="Evaluate only each query's top N documents.")] = None,
              judged_only: Annotated[bool, typer.Option(
                  "-J", help="Drop unjudged documents before evaluating (trec_eval -J).")
                  ] = False,
              n_docs: Annotated[str | None, typer.Option("-N", hidden=True)] = None,
              debug: Annotated[str | None, typer.Option("-D", hidden=True)] = None,
              rel_format: Annotated[str | None, typer.Option("-R", hidden=True)] = None,
              results_format: Annotated[str | None, typer.Option("-T", hidden=True)] = None,
              zscore: Annotated[str | None, typer.Option("-Z", hidden=True)] = None,
              old_format: Annotated[bool, typer.Option("-o", hidden=True)] = False,
              version: Annotated[bool, typer.Option("-v", hidden=True)] = False,
              ) -> None:
    """trec_eval-compatible evaluation of TREC files, printed in trec_eval's layout.

    Not supported (an error names them): trec_eval -N, -D, -R, -T, -Z, -o, -v and the
    measures runid, gm_map, bpref, iprec_at_recall, infAP and the other non-ranked and
    preference measures."""
    from ..metrics.trec import read_qrels, read_run, trec_eval_measures, trec_eval_text

    unsupported = {"-N (Number_docs_in_coll)": n_docs, "-D (Debug_level)": debug,
                   "-R (Rel_info_format)": rel_format, "-T (Results_format)": results_format,
                   "-Z (Zscore)": zscore, "-o (Output_old_results_format)": old_format or None,
                   "-v (version)": version or None}

    def go() -> str:
        for option, value in unsupported.items():
            if value is not None:
                raise InputError(option.split()[0], f"trec_eval option {option} is not "
                                 "supported by ragassay trec-eval")
        try:
            measures = trec_eval_measures(measure or [])
        except ValueError as exc:
            raise InputError("-m", str(exc)) from None
        if level < 1:
            raise InputError("-l", f"relevance level must be >= 1, got {level}")
        if max_docs is not None and max_docs < 1:
            raise InputError("-M", f"must be >= 1, got {max_docs}")
        q, r = read_qrels(qrels), read_run(run_file)
        try:
            return trec_eval_text(q, r, measures, per_query=per_query, complete=complete,
                                  summary=not no_summary, level=level, max_docs=max_docs,
                                  judged_only=judged_only)
        except ValueError as exc:
            raise InputError(run_file, str(exc)) from None

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
