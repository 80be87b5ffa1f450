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

    res = run_guarded(go)
    acc = "—" if res["accuracy"] is None else f"{res['accuracy']:.3f}"
    kappa = "—" if res["cohen_kappa"] is None else f"{res['cohen_kappa']:.3f}"
    consoles.out.print(f"judge vs labels: n={res['n']} measured={res['measured']} accuracy={acc} "
              f"kappa={kappa} confusion={res['confusion']} not measured={res['not_measured']}",
              highlight=False, soft_wrap=True)
    if res["disagreements"]:
        consoles.out.print("disagreements: " + ", ".join(res["disagreements"]), soft_wrap=True)
