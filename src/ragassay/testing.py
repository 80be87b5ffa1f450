"""The pytest plugin: a RAG evaluation as test items, and a helper for your own assertions.

``pytest --ragassay CONFIG [--ragassay-baseline RUN_DIR] [--ragassay-out DIR]`` evaluates the
config once per session and adds these items (node ids under ``ragassay::``):

- ``bar[recall_at_5 >= 0.8]``: one per bar of the config's ``gate:`` mapping, failing with
  the run's mean (``got 0.700``, and the baseline's mean when given);
- ``every_question_measured``: fails when more questions than ``gate.allow_missing``
  (default 0) have no result;
- with a baseline, ``regression[q07]``: one failing item per question that flipped from pass
  to fail (the checks that moved and the question), or ``no_regression`` when none did;
- with ``gate.junit_questions: strict``, ``question[q07]``: one item per question.

The items pass exactly when ``ragassay gate RUN --config CONFIG [--baseline RUN_DIR]``
passes. The ``ragassay_run`` fixture is the session's :class:`~ragassay.runfolder.RunResult`
(skipped without ``--ragassay``), and :func:`evaluate_config` runs a config from a test.

The plugin is registered through the ``pytest11`` entry point, so installing ragassay
enables it; without ``--ragassay`` it adds nothing and imports nothing beyond this module.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .gate import GateResult
    from .runfolder import RunResult

__all__ = ["evaluate_config"]

_COLLECTOR = "ragassay"


def evaluate_config(path: str | Path, *, run_id: str | None = None,
                    output_root: str | Path | None = None, **overrides: Any) -> RunResult:
    """Evaluate the config at ``path`` and write its run folder (the result's ``folder``).

    ``overrides`` are config keys, a double underscore for a nested one:
    ``evaluate_config("config.yaml", pipeline__top_k=5, predictions_path="new.jsonl")``
    (paths given here are relative to the working folder, as on the command line). The run
    folder goes to ``output_root`` (default: the config's) under ``run_id`` (default: a
    fresh ``pytest-<UTC time>`` id, never one already used there).
    """
    from .config import load_config
    from .run import run_evaluation

    cfg = load_config(path, {k.replace("__", "."): v for k, v in overrides.items()})
    root = Path(output_root if output_root is not None else cfg.output_root)
    return run_evaluation(cfg, run_id=run_id or _fresh_run_id(root), output_root=root)


def _fresh_run_id(root: Path) -> str:
    base = "pytest-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    run_id, n = base, 1
    while (root / run_id).exists():
        n += 1
        run_id = f"{base}-{n}"
    return run_id


# --- options and the session's evaluation ------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragassay", "RAG evaluation as test items (ragassay)")
    group.addoption("--ragassay", metavar="CONFIG", default=None,
                    help="Evaluate this ragassay config once and report its gate bars, "
                         "unmeasured questions and regressions as test items.")
    group.addoption("--ragassay-baseline", metavar="RUN_DIR", default=None,
                    help="A baseline run folder: each question that flips from pass to fail "
                         "is a failing item.")
    group.addoption("--ragassay-out", metavar="DIR", default=None,
                    help="Write the run folder under DIR (default: pytest's temporary folder).")


@dataclass
class _Session:
    """The session's evaluation, made once, when the ``ragassay`` items are collected."""

    config_path: Path
    baseline: Path | None
    out: Path | None
    run: RunResult | None = None
    gate: GateResult | None = None
    items: list[tuple[str, bool, str]] = field(default_factory=list)

    def evaluate(self, pytest_config: pytest.Config) -> None:
        from .config import locate
        from .errors import InputError

        try:
            self._evaluate(pytest_config)
        except InputError as exc:
            raise _RagassayError(str(locate(exc))) from None

    def _evaluate(self, pytest_config: pytest.Config) -> None:
        from .config import load_config
        from .gate import evaluate_gate, parse_gate_config
        from .run import run_evaluation
        from .runfolder import read_run_folder

        cfg = load_config(self.config_path)
        root = self.out if self.out is not None else _temp_root(pytest_config)
        self.run = run = run_evaluation(cfg, run_id=_fresh_run_id(root), output_root=root)
        options = parse_gate_config(cfg.gate, source=self.config_path,
                                    known_metrics=list(run.metrics.means()))
        base = read_run_folder(self.baseline) if self.baseline is not None else None
        not_measured = [q.question_id for q in run.questions if not q.measured]
        if options.bars or base is not None or options.junit_questions == "strict":
            self.gate = gate = evaluate_gate(run, options, baseline=base, run_dir=run.folder,
                                             baseline_dir=self.baseline)
            not_measured = gate.not_measured
        self.items = self._outcomes(not_measured, options.allow_missing)

    def _outcomes(self, not_measured: list[str], allow: int) -> list[tuple[str, bool, str]]:
        """(item name, passed, reason) for every item, in the gate's order."""
        out: list[tuple[str, bool, str]] = []
        gate = self.gate
        for r in gate.bars if gate is not None else []:
            reason = r.reason
            if r.baseline_value is not None:
                reason += f" (baseline {r.baseline_value:.3f})"
            out.append((f"bar[{r.bar}]", r.passed, reason))
        if not_measured:
            reason = (f"{len(not_measured)} not measured (allowed: {allow}): "
                      + ", ".join(not_measured))
        else:
            reason = "every question has a result"
        out.append(("every_question_measured", len(not_measured) <= allow, reason))
        if gate is not None and gate.baseline_id is not None:
            for f in gate.regressions:
                text = f" — {' '.join(f.question.split())}" if f.question else ""
                out.append((f"regression[{f.question_id}]", False,
                            f"{', '.join(f.checks)} pass→fail against "
                            f"baseline {gate.baseline_id}{text}"))
            if not gate.regressions:
                out.append(("no_regression", True,
                            f"no question flipped pass→fail against baseline {gate.baseline_id}"))
        if gate is not None and gate.options.junit_questions == "strict":
            for q in gate.run.questions:
                if not q.measured:
                    continue
                failed = ", ".join(q.checks.failed)
                out.append((f"question[{q.question_id}]", q.checks.passed,
                            f"failed {failed}" if failed else "passed"))
        return out


def _temp_root(config: pytest.Config) -> Path:
    factory = getattr(config, "_tmp_path_factory", None)  # pytest's basetemp, cleaned up
    if factory is not None:
        return Path(factory.mktemp("ragassay", numbered=True))
    return Path(tempfile.mkdtemp(prefix="ragassay-"))


_SESSION = pytest.StashKey[_Session]()


class _RagassayError(Exception):
    """Bad input to the evaluation: shown as its message, without a traceback."""


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("ragassay")
    if path is None:
        for opt in ("ragassay_baseline", "ragassay_out"):
            if config.getoption(opt) is not None:
                name = "--" + opt.replace("_", "-")
                raise pytest.UsageError(f"{name} needs --ragassay CONFIG")
        return
    here = config.invocation_params.dir

    def resolve(p: str | None) -> Path | None:
        return None if p is None else here / p

    cfg_path = resolve(path)
    assert cfg_path is not None
    if not cfg_path.is_file():
        raise pytest.UsageError(f"--ragassay: no config file {path!r}")
    config.stash[_SESSION] = _Session(cfg_path, resolve(config.getoption("ragassay_baseline")),
                                      resolve(config.getoption("ragassay_out")))


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    if _SESSION not in config.stash:
        return
    collector = RagassayCollector.from_parent(session, name=_COLLECTOR, nodeid=_COLLECTOR)
    report = collector.ihook.pytest_make_collect_report(collector=collector)
    session.ihook.pytest_collectreport(report=report)
    if report.passed:
        items.extend(i for i in report.result if isinstance(i, pytest.Item))


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(_SESSION, None)
    return None if state is None else f"ragassay: {state.config_path}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_SESSION, None)
    if state is None or state.run is None:
        return
    run = state.run
    terminalreporter.write_sep("-", "ragassay")
    terminalreporter.write_line(run.totals.line())
    terminalreporter.write_line(f"run {run.run_id} → {run.folder} (report.html, summary.md)")
    for note in run.metrics.notes:
        terminalreporter.write_line(f"note: {note}")


@pytest.fixture(scope="session")
def ragassay_run(request: pytest.FixtureRequest) -> Iterator[RunResult]:
    """The session's evaluation of ``--ragassay CONFIG`` (skips the test without it)."""
    state = request.config.stash.get(_SESSION, None)
    if state is None:
        pytest.skip("no --ragassay CONFIG given")
    if state.run is None:  # collected with a filter that left out the ragassay items
        state.evaluate(request.config)
    assert state.run is not None
    yield state.run


# --- the items ---------------------------------------------------------------------------


class RagassayCollector(pytest.Collector):
    """``ragassay``: evaluates the config (once) and yields one item per outcome."""

    def collect(self) -> list[pytest.Item]:
        state = self.config.stash[_SESSION]
        if state.run is None:
            state.evaluate(self.config)
        return [RagassayItem.from_parent(self, name=name, passed=passed, reason=reason)
                for name, passed, reason in state.items]

    def repr_failure(  # type: ignore[override]  # as pytest's Collector does
            self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        if isinstance(excinfo.value, _RagassayError):
            return f"ragassay: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.config.stash[_SESSION].config_path, None, _COLLECTOR


class RagassayFailed(Exception):
    """An outcome of the evaluation that fails (a bar missed, a regression...)."""


class RagassayItem(pytest.Item):
    """One outcome of the session's evaluation: a bar, the measured count, a regression."""

    def __init__(self, *, passed: bool, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.passed = passed
        self.reason = reason

    def runtest(self) -> None:
        if not self.passed:
            raise RagassayFailed(self.reason)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, RagassayFailed):
            return self.reason
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.config.stash[_SESSION].config_path, None, f"ragassay::{self.name}"
