"""The composite GitHub Action (``action.yml``), run locally.

Each ``run:`` step's script is run with bash the way a runner runs it (``bash --noprofile
--norc -eo pipefail``), in a temporary workspace, with the ``${{ ... }}`` expressions
substituted, a fresh ``GITHUB_OUTPUT`` per step and one ``GITHUB_STEP_SUMMARY``. ``uses:``
steps are not run (their inputs are checked: the upload paths exist); the install step runs
with ``python`` stubbed, since this environment already has ragassay.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import ROOT

from ragassay.testing import evaluate_config

ACTION = ROOT / "action.yml"
EXAMPLE = ROOT / "examples" / "shop_faq_de"
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _action() -> dict[str, Any]:
    data = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@dataclass
class Ran:
    """What the action did: each step's exit code (None: skipped), outputs, the summary."""

    codes: dict[str, int | None] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    uploads: list[Path] = field(default_factory=list)
    summary: str = ""
    installed: str = ""

    def output(self, step: str, name: str) -> str:
        return self.outputs.get(step, {}).get(name, "")


class _Runner:
    def __init__(self, workspace: Path, temp: Path, inputs: dict[str, str]) -> None:
        action = _action()
        self.workspace, self.temp = workspace, temp
        self.inputs = {name: str(spec.get("default", "")) for name, spec in
                       action["inputs"].items()}
        unknown = set(inputs) - set(self.inputs)
        assert not unknown, f"not inputs of the action: {unknown}"
        self.inputs.update(inputs)
        self.steps: list[dict[str, Any]] = action["runs"]["steps"]
        self.ran = Ran()

    def value(self, expr: str) -> str:
        """One ``${{ }}`` expression: a context value (anything else fails the test)."""
        if m := re.fullmatch(r"inputs\.([\w-]+)", expr):
            return self.inputs[m.group(1)]
        if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
            return self.ran.output(m.group(1), m.group(2))
        contexts = {"github.action_path": str(ROOT), "runner.temp": str(self.temp)}
        assert expr in contexts, f"the test does not know the expression {expr!r}"
        return contexts[expr]

    def sub(self, text: str) -> str:
        return _EXPR.sub(lambda m: self.value(m.group(1)), text)

    def condition(self, step: dict[str, Any], failed: bool) -> bool:
        """A step's ``if:``, for the forms the action uses (``success()`` when absent)."""
        cond = step.get("if")
        if cond is None:
            return not failed
        cond = _EXPR.sub(lambda m: m.group(1), str(cond)).strip()
        ok = True
        for term in (t.strip() for t in cond.split("&&")):
            if term in ("!cancelled()", "always()"):
                continue
            m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+) != ''", term)
            assert m, f"the test does not know the condition {term!r}"
            ok = ok and self.ran.output(m.group(1), m.group(2)) != ""
        return ok

    def run(self) -> Ran:
        summary = self.temp / "step_summary.md"
        summary.touch()
        failed = False
        for i, step in enumerate(self.steps):
            sid = step.get("id") or f"step{i}"
            if not self.condition(step, failed):
                self.ran.codes[sid] = None
                continue
            if "uses" in step:
                self._check_uses(step)
                self.ran.codes[sid] = 0
                continue
            assert step.get("shell") == "bash", f"{step['name']}: composite steps need a shell"
            script = self.sub(step["run"])
            if "pip install" in script:  # ragassay is installed here already: record the call
                script = f'python() {{ echo "python $*" >> "{self.temp}/install.log"; }}\n' + script
            out_file = self.temp / f"output_{sid}"
            out_file.write_text("", encoding="utf-8")
            env = {**os.environ, **{k: self.sub(str(v)) for k, v in step.get("env", {}).items()}}
            env.update({
                "GITHUB_OUTPUT": str(out_file), "GITHUB_STEP_SUMMARY": str(summary),
                "GITHUB_WORKSPACE": str(self.workspace), "RUNNER_TEMP": str(self.temp),
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            })
            path = self.temp / f"{sid}.sh"
            path.write_text(script, encoding="utf-8")
            proc = subprocess.run([str(BASH), "--noprofile", "--norc", "-eo", "pipefail",
                                   str(path)], cwd=self.workspace, env=env,
                                  capture_output=True, text=True, timeout=300)
            self.ran.codes[sid] = proc.returncode
            self.ran.logs[sid] = proc.stdout + proc.stderr
            self.ran.outputs[sid] = dict(
                line.split("=", 1) for line in out_file.read_text(encoding="utf-8").splitlines()
                if "=" in line)
            failed = failed or proc.returncode != 0
        self.ran.summary = summary.read_text(encoding="utf-8")
        log = self.temp / "install.log"
        self.ran.installed = log.read_text(encoding="utf-8") if log.exists() else ""
        return self.ran

    def _check_uses(self, step: dict[str, Any]) -> None:
        with_ = {k: self.sub(str(v)) for k, v in step.get("with", {}).items()}
        if step["uses"].startswith("actions/setup-python@"):
            assert with_["python-version"] == self.inputs["python-version"]
        elif step["uses"].startswith("actions/upload-artifact@"):
            assert with_["name"] == self.inputs["artifact-name"]
            self.ran.uploads = [Path(p.strip()) for p in with_["path"].splitlines() if p.strip()]
        else:
            raise AssertionError(f"unexpected action {step['uses']}")


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout with the shop FAQ example at ``shop/``, and the runner's temp folder."""
    workspace, temp = tmp_path / "workspace", tmp_path / "runner_temp"
    shutil.copytree(EXAMPLE, workspace / "shop")
    temp.mkdir()
    return workspace, temp


def test_action_declares_its_inputs_and_steps() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert inputs["config"]["required"] is True
    for name in ("baseline", "python-version", "args"):
        assert inputs[name]["required"] is False
    uses = [s["uses"].split("@")[0] for s in action["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python", "actions/upload-artifact"]
    for step in action["runs"]["steps"]:
        if "run" in step:  # inputs reach the scripts through env, never spliced into them
            assert "inputs." not in step["run"], step["name"]


def test_the_shipped_example_fails_the_gate_and_is_still_reported(tmp_path: Path) -> None:
    workspace, temp = _workspace(tmp_path)
    ran = _Runner(workspace, temp, {"config": "shop/config.yaml"}).run()
    assert ran.codes["run"] == 0, ran.logs["run"]
    assert ran.codes["gate"] == 1, ran.logs["gate"]  # ragassay gate's exit code: a bar failed
    assert "FAIL groundedness >= 0.9: got 0.700" in ran.logs["gate"]
    assert ran.output("gate", "passed") == "false"
    # the summary and upload steps ran after the failed gate
    assert ran.summary.startswith("# Run `ci`\n")
    assert "| hit_at_3 | 0.889 |" in ran.summary
    assert "## Gate\n\n```text\n" in ran.summary and "gate FAILED for run ci" in ran.summary
    run_dir = Path(ran.output("run", "run-dir"))
    assert run_dir == temp / "ragassay" / "ci"
    assert (run_dir / "report.html").is_file() and (run_dir / "summary.md").is_file()
    junit = Path(ran.output("gate", "junit"))
    suites = ET.parse(junit).getroot()
    assert suites.get("failures") == "2"
    assert ran.uploads == [run_dir, junit] and all(p.exists() for p in ran.uploads)
    assert ran.installed == f"python -m pip install --disable-pip-version-check {ROOT}\n"


def test_bars_that_hold_and_a_baseline_pass(tmp_path: Path) -> None:
    workspace, temp = _workspace(tmp_path)
    cfg = workspace / "shop" / "config.yaml"
    text = cfg.read_text(encoding="utf-8")
    text = text.replace('groundedness: ">= 0.9"', 'groundedness: ">= 0.7"')
    text = text.replace('hallucination_flag: "<= 0"', 'hallucination_flag: "<= 0.1"')
    cfg.write_text(text, encoding="utf-8")
    baseline = evaluate_config(cfg, run_id="main", output_root=workspace / "baseline")
    ran = _Runner(workspace, temp, {"config": "shop/config.yaml", "baseline": "baseline/main",
                                    "args": "--k 3 --lenient", "extras": "bm25,e5"}).run()
    assert ran.codes["run"] == 0, ran.logs["run"]
    assert ran.codes["gate"] == 0, ran.logs["gate"]
    assert ran.output("gate", "passed") == "true"
    assert "0 regressions, 0 fixes vs baseline main" in ran.summary
    assert baseline.folder is not None
    assert ran.installed.endswith(f" {ROOT}[bm25,e5]\n")


def test_bad_input_fails_the_run_step_and_skips_the_rest(tmp_path: Path) -> None:
    workspace, temp = _workspace(tmp_path)
    ran = _Runner(workspace, temp, {"config": "shop/missing.yaml"}).run()
    assert ran.codes["run"] == 2  # bad input
    assert "missing.yaml" in ran.logs["run"]
    assert ran.output("run", "run-dir") == ""
    assert ran.codes["gate"] is None and ran.summary == "" and ran.uploads == []
