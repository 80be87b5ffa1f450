"""Commands about measures: `ragassay metrics`, `ragassay trec-eval`, `ragassay judge-check`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError
from . import consoles
from .common import ConfigOpt, run_guarded
from .output import show_table


def metrics_cmd(list_: Annotated[bool, typer.Option("--list", help="List the measures.")] = True
                ) -> None:
    """Every measure: its canonical name (`name_at_k` with a cutoff), group, direction,
    trec_eval name and formula. Retrieval measures also work in `ragassay trec-eval`."""
    from ..metrics import list_measures

    header = ["name", "group", "better", "cutoff", "trec_eval", "formula"]
    show_table("measures (name_at_k; also name@k, name.k)", header, (
        [info.name, info.group, "higher" if info.higher_is_better else "lower", info.cutoff,
         info.trec_eval or "—", info.formula] for info in list_measures(None)), left=header)



def trec_eval(ctx: typer.Context) -> None:
    """trec_eval-compatible evaluation of TREC files, printed in trec_eval's layout
    (`ragassay trec-eval --help` lists trec_eval's options it takes)."""
    from ..trec_eval_cli import trec_eval_main

    code = trec_eval_main(ctx.args)
    if code:
        raise typer.Exit(code)


# The options are trec_eval's letters, parsed by ragassay.trec_eval_cli (which the console script
# runs without importing typer): typer passes the arguments through untouched.
TREC_EVAL_SETTINGS: dict[str, Any] = {
    "context_settings": {"allow_extra_args": True, "ignore_unknown_options": True,
                         "allow_interspersed_args": False},
    "add_help_option": False,
}


def judge_check_cmd(labelled: Annotated[Path, typer.Argument(
                        help="JSONL of {id, claim, sources: [text], label: yes|no|entailed|"
                             "contradicted|unsupported} (docs/claims.md).")],
                    config: ConfigOpt,
                    rejudge: Annotated[int, typer.Option(
                        min=0, help="Judge every item N more times (other seeds, sources "
                                    "reordered) and report the flip rate.")] = 0,
                    as_json: Annotated[bool, typer.Option(
                        "--json", help="Print the report as JSON.")] = False) -> None:
    """Measure the config's LLM judge against human labels: accuracy, Cohen's kappa with
    its CI, the confusion matrix, the unparsable share and (with --rejudge) the flip rate.
    Exit 3 when some items were not measured (the reason of the first on stderr)."""
    from ..config import check_endpoints, load_config
    from ..endpoint import OpenAICompatClient
    from ..errors import NOT_MEASURED
    from ..judge import Judge
    from ..judgecheck import judge_check

    def go() -> dict[str, Any]:
        cfg = load_config(config)
        if cfg.judge is None:
            raise InputError(config, "no judge configured", field="judge")
        check_endpoints(cfg, sections=("judge",))
        with OpenAICompatClient(cfg.judge) as client:
            return judge_check(labelled, Judge(client), rejudge=rejudge)

    res = run_guarded(go)
    if as_json:
        import json

        consoles.out.print(json.dumps(res, ensure_ascii=False, indent=2), highlight=False,
                      soft_wrap=True)
    else:
        def f(v: float | None) -> str:
            return "—" if v is None else f"{v:.3f}"

        low, high = res["kappa_ci"]
        ci = "" if low is None else f" [{low:.3f}, {high:.3f}]"
        consoles.out.print(f"judge vs labels: n={res['n']} measured={res['measured']} "
                      f"accuracy={f(res['accuracy'])} kappa={f(res['cohen_kappa'])}{ci} "
                      f"confusion={res['confusion']} not measured={res['not_measured']} "
                      f"unparsable={f(res['unparsable_share'])}",
                      highlight=False, soft_wrap=True)
        if res["confusion3"] is not None:
            consoles.out.print(f"judge × label: {res['confusion3']}", highlight=False,
                          soft_wrap=True)
        if rejudge:
            consoles.out.print(f"flip rate over {rejudge} rejudges: {f(res['flip_rate'])} "
                          f"(items that flipped: {len(res['flips'])})", highlight=False)
        if res["disagreements"]:
            consoles.out.print("disagreements: " + ", ".join(res["disagreements"]), soft_wrap=True)
    if res["not_measured"]:
        first = res["not_measured_ids"][0]
        consoles.err.print(f"error: {res['not_measured']} of {res['n']} items not measured, e.g. "
                      f"{first}: {res['not_measured_reasons'][first]}", highlight=False,
                      soft_wrap=True, markup=False)
        raise typer.Exit(NOT_MEASURED)
