"""Every `ragassay` / contract command the README and the docs it links to show, run as written
(optional `[...]` parts left out), in a copy of the repository, and the contract command from
another folder.

Placeholders are made real instead of rewritten: the runs `RUN`, `BASE` and `NEW` exist under
`experiments/runs/`, and `my.yaml`, `out.jsonl`, `chunks.jsonl`, `qrels.txt`, `run.txt` are
files in the copy, so the lines run exactly as printed. Left out, and why: the two set-up
scripts (the test command is this suite; `demo.sh` is the contract command after a venv
set-up), `pip install`, `ragassay serve-local` (it serves until Ctrl-C) and the LLM config
(the LLM path is tested against local servers in `test_llm_run.py` and `test_local_llm.py`).
`ragassay generate` is run against the fake OpenAI-compatible server on 127.0.0.1 in place of
the LLM the README names (its replies scripted for the chunks it samples, as in
`test_generate.py`; the real model's run is `test_generate_local_llm.py`), and the decisions
file `generate apply` reads is the one a person accepting every item downloads.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import ROOT
from generated_set import numeric_replies, script
from openai_server import FakeOpenAIServer

SKIP = ("./scripts/", "pip install", "ragassay serve-local",
        "ragassay run -c configs/eval/rag_quality_v1_llm.yaml")
LLM_URL = "http://127.0.0.1:8080/v1"  # the endpoint the README's `generate` line names
# Commands whose exit code is the gate's verdict, not an error.
GATE_VERDICT = ("ragassay gate ", "--gate")
# The pages whose commands are run: the README and the topic pages its sections moved to.
PAGES = ("README.md", "docs/importing.md", "docs/presets.md", "docs/llm.md",
         "docs/executors.md", "docs/inputs.md")


def readme_commands() -> list[str]:
    text = "\n".join((ROOT / page).read_text(encoding="utf-8") for page in PAGES)
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    commands = []
    for block in blocks:
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if not line or line.startswith(SKIP):
                continue
            line = re.sub(r"\s*\[[^\]]*\]", "", line)  # optional parts
            commands.append(" ".join(line.split()))
    return commands


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("repo") / "ragassay"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def env() -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)  # `ragassay` of the environment under test
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
            "COLUMNS": "200"}


def sh(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, shell=True, cwd=cwd, env=env(), capture_output=True,
                          text=True, timeout=600)


def make_placeholders(repo: Path) -> None:
    for run_id, k in (("BASE", 5), ("RUN", 10), ("NEW", 10)):
        res = sh(f"ragassay run -c configs/eval/rag_quality_v1.yaml --run-id {run_id} --k {k} -q",
                 repo)
        assert res.returncode == 0, res.stderr
    shop = repo / "examples/shop_faq_de"
    (repo / "my.yaml").write_text(
        "questions_path: examples/shop_faq_de/questions.jsonl\n"
        "gold_evidence_path: examples/shop_faq_de/gold.jsonl\n", encoding="utf-8")
    shutil.copy(shop / "predictions.jsonl", repo / "out.jsonl")
    shutil.copy(shop / "chunks.jsonl", repo / "chunks.jsonl")
    res = sh("ragassay export-trec experiments/runs/BASE", repo)
    assert res.returncode == 0, res.stderr
    shutil.copy(repo / "experiments/runs/BASE/trec/qrels.trec", repo / "qrels.txt")
    shutil.copy(repo / "experiments/runs/BASE/trec/run.trec", repo / "run.txt")


def generation_stand_ins(command: str, repo: Path, server: FakeOpenAIServer) -> str:
    """The fake server in place of the README's LLM for `ragassay generate` (the replies of
    the items it asks, scripted), and, before `generate apply`, the decisions file of a
    person who accepted every item of the set."""
    if command.startswith("ragassay generate apply"):
        from ragassay.generate.review import REVIEW_SCHEMA, set_id
        from ragassay.gold import read_questions

        args = shlex.split(command)
        questions = read_questions(repo / args[args.index("--set") + 1] / "questions.jsonl")
        rows = [{"review": REVIEW_SCHEMA, "set_id": set_id(questions)},
                *({"question_id": q.question_id, "decision": "accept"} for q in questions)]
        (repo / args[3]).write_text("".join(json.dumps(r) + "\n" for r in rows),
                                    encoding="utf-8")
    elif command.startswith("ragassay generate") and LLM_URL in command:
        args = shlex.split(command)
        n, kind = int(args[args.index("--n") + 1]), args[args.index("--kinds") + 1]
        script(server, *numeric_replies(repo / args[args.index("--source") + 1], n, kind=kind))
        return command.replace(LLM_URL, server.base_url)
    return command


def test_every_readme_command_runs_as_written(repo_copy: Path,
                                              fake_server: FakeOpenAIServer) -> None:
    commands = readme_commands()
    assert any(c.startswith("python -m eval.naive_rag.run_eval") for c in commands)
    assert any(c.startswith("ragassay generate apply") for c in commands)
    assert len(commands) >= 14
    make_placeholders(repo_copy)
    for command in commands:
        res = sh(generation_stand_ins(command, repo_copy, fake_server), repo_copy)
        allowed = (0, 1) if any(g in command for g in GATE_VERDICT) else (0,)
        assert res.returncode in allowed, f"{command}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
        assert "Traceback" not in res.stderr, command


def test_the_contract_run_from_another_folder(repo_copy: Path, tmp_path: Path) -> None:
    """`python -m eval.naive_rag.run_eval` is a module of the source tree (run from its root);
    its twin `ragassay run --config` works from any folder: the config's paths are its own."""
    config = repo_copy / "configs/eval/rag_quality_v1.yaml"
    res = sh(f"ragassay run --config {shlex.quote(str(config))} --run-id elsewhere -q", tmp_path)
    assert res.returncode == 0, res.stderr
    assert (repo_copy / "experiments/runs/elsewhere/metrics.json").is_file()
    assert not (tmp_path / "experiments").exists()  # the config's output_root, not the cwd's
