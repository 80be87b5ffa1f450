"""``ragassay trec-eval``: a drop-in for trec_eval, parsed with :mod:`argparse`.

Users run trec_eval in loops over many runs, so its start-up matters: this module imports
only the standard library and, when it runs, numpy and the metrics it uses (no typer, rich
or pydantic). The console script (:mod:`ragassay.command`) calls :func:`trec_eval_main`
directly; the typer application registers ``trec-eval`` as a pass-through to it, so both
ways of calling it are the same code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .errors import BAD_INPUT, INTERNAL_ERROR, OK, InputError

TREC_EVAL_SUMMARY = "trec_eval-compatible evaluation of TREC files, printed in trec_eval's layout."
TREC_EVAL_HELP = f"""{TREC_EVAL_SUMMARY}

Not supported (an error names them): trec_eval -N, -D, -R, -T, -Z, -o, -v and the measures
runid, gm_map, bpref, iprec_at_recall, infAP and the other non-ranked and preference
measures. Exit codes: 0 ok, 2 bad input (the message names the file, line and field), 4
internal error."""

# trec_eval options ragassay does not implement: an error names them
_UNSUPPORTED = {"-N": "Number_docs_in_coll", "-D": "Debug_level", "-R": "Rel_info_format",
                "-T": "Results_format", "-Z": "Zscore", "-o": "Output_old_results_format",
                "-v": "version"}


def trec_eval_parser() -> argparse.ArgumentParser:
    """The options of ``ragassay trec-eval`` (trec_eval's letters)."""
    parser = argparse.ArgumentParser(
        prog="ragassay trec-eval", description=TREC_EVAL_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("qrels", help="TREC qrels: qid 0 docid grade ('-': standard input).")
    parser.add_argument("run_file", metavar="run",
                        help="TREC run: qid Q0 docid rank score tag ('-': standard input).")
    parser.add_argument(
        "-m", "--measure", action="append", default=[], metavar="MEASURE",
        help="trec_eval measure: map, Rprec, recip_rank, P, recall, ndcg, ndcg_cut, map_cut, "
             "success (a family alone takes trec_eval's default cutoffs; P.5,10 lists them), "
             "num_q, num_ret, num_rel, num_rel_ret, official (the default: trec_eval's set "
             "without runid, gm_map, bpref, iprec_at_recall, which ragassay does not "
             "compute); also mrr@10, ndcg@5. Repeatable.")
    parser.add_argument("-q", dest="per_query", action="store_true",
                        help="Per-query lines too.")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="Average over every judged query, those missing from the run "
                             "counting 0 (trec_eval -c).")
    parser.add_argument("-n", dest="no_summary", action="store_true",
                        help="No 'all' lines (trec_eval -n).")
    parser.add_argument("-l", dest="level", type=int, default=1, metavar="N",
                        help="Relevance level: grade >= N is relevant (>= 1; nDCG keeps every "
                             "positive grade as gain, as trec_eval). Default 1.")
    parser.add_argument("-M", dest="max_docs", type=int, default=None, metavar="N",
                        help="Evaluate only each query's top N documents.")
    parser.add_argument("-J", dest="judged_only", action="store_true",
                        help="Drop unjudged documents before evaluating (trec_eval -J).")
    for flag in ("-N", "-D", "-R", "-T", "-Z"):
        parser.add_argument(flag, dest=flag, default=None, help=argparse.SUPPRESS)
    for flag in ("-o", "-v"):
        parser.add_argument(flag, dest=flag, action="store_const", const="", default=None,
                            help=argparse.SUPPRESS)
    return parser


def trec_eval_main(argv: Sequence[str]) -> int:
    """Run ``ragassay trec-eval`` with these arguments: print trec_eval's output on stdout
    and return the exit code (2 with one ``error:`` line on stderr for bad input)."""
    args = trec_eval_parser().parse_args(list(argv))
    try:
        sys.stdout.write(_trec_eval_text(args))
        return OK
    except InputError as exc:
        _error(f"error: {exc}")
        return BAD_INPUT
    except Exception as exc:  # a bug of ours: say so, as every other command does
        if os.environ.get("RAGASSAY_DEBUG") == "1":
            import traceback

            sys.stderr.write(traceback.format_exc())
        _error(f"internal error: {type(exc).__name__}: {exc} (a bug in ragassay; rerun with "
               "--debug for the traceback)")
        return INTERNAL_ERROR


def _trec_eval_text(args: argparse.Namespace) -> str:
    for flag, name in _UNSUPPORTED.items():
        if getattr(args, flag) is not None:
            raise InputError(flag, f"trec_eval option {flag} ({name}) is not supported by "
                             "ragassay trec-eval")
    from .metrics.columns import read_table
    from .metrics.trec import trec_eval_measures, trec_eval_text

    try:
        measures = trec_eval_measures(args.measure)
    except ValueError as exc:
        raise InputError("-m", str(exc)) from None
    if args.level < 1:
        raise InputError("-l", f"relevance level must be >= 1, got {args.level}")
    if args.max_docs is not None and args.max_docs < 1:
        raise InputError("-M", f"must be >= 1, got {args.max_docs}")
    qrels, run = read_table(args.qrels, "qrels"), read_table(args.run_file, "run")
    try:
        return trec_eval_text(qrels, run, measures, per_query=args.per_query,
                              complete=args.complete, summary=not args.no_summary,
                              level=args.level, max_docs=args.max_docs,
                              judged_only=args.judged_only)
    except ValueError as exc:
        raise InputError(args.run_file, str(exc)) from None


def _error(message: str) -> None:
    if sys.stderr.isatty():
        head, _, rest = message.partition(":")
        message = f"\033[1;31m{head}:\033[0m{rest}"
    sys.stderr.write(message + "\n")
