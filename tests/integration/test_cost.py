"""Money: optional prices per million tokens in the answerer's endpoint config give each
answer's ``usage.cost`` and the run's ``cost.total``; without prices both are None."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from openai_server import FakeOpenAIServer
from pydantic import ValidationError
from test_llm_run import llm_config, rows, runner

from ragassay.aggregate import cost_summary
from ragassay.cli import app
from ragassay.config import EvalConfig
from ragassay.core import priced
from ragassay.endpoint import EndpointConfig


def llm_eval_config(**prices: float) -> EvalConfig:
    return EvalConfig.model_validate({"answerer": {
        "kind": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "m", **prices}})


def test_price_of_one_question_by_hand() -> None:
    cfg = llm_eval_config(prompt_price_per_mtok=2.5, completion_price_per_mtok=10.0)
    usage = priced(cfg, {"prompt_tokens": 1200, "completion_tokens": 300, "source": "reported"})
    # 1200 * 2.5 / 1e6 + 300 * 10 / 1e6 = 0.003 + 0.003
    assert usage["cost"] == pytest.approx(0.006, abs=1e-15)
    assert usage["prompt_tokens"] == 1200 and usage["source"] == "reported"


def test_no_price_is_unknown_not_zero() -> None:
    usage = priced(llm_eval_config(), {"prompt_tokens": 1200, "completion_tokens": 300})
    assert usage["cost"] is None
    extractive = EvalConfig()
    assert priced(extractive, {"prompt_tokens": 5, "completion_tokens": 1})["cost"] is None


def test_both_prices_or_neither() -> None:
    with pytest.raises(ValidationError, match="completion_price_per_mtok is not"):
        EndpointConfig(base_url="http://127.0.0.1:9/v1", model="m", prompt_price_per_mtok=1.0)
    with pytest.raises(ValidationError):
        EndpointConfig(base_url="http://127.0.0.1:9/v1", model="m", prompt_price_per_mtok=-1.0,
                       completion_price_per_mtok=1.0)
    free = EndpointConfig(base_url="http://127.0.0.1:9/v1", model="m",
                          prompt_price_per_mtok=0, completion_price_per_mtok=0)
    assert free.price_of(100, 100) == 0.0  # configured as free: 0, known


def test_run_cost_per_question_and_total(tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    config = llm_config(tmp_path, fake_server, prompt_price_per_mtok=2.5,
                        completion_price_per_mtok=10.0)
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "paid", "-q"])
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "runs/paid"
    answers = rows(run_dir, "answers.jsonl")
    costs = []
    for a in answers:
        u = a["usage"]
        want = (u["prompt_tokens"] * 2.5 + u["completion_tokens"] * 10.0) / 1e6
        assert u["cost"] == pytest.approx(want, rel=1e-12)
        costs.append(u["cost"])
    assert all(c > 0 for c in costs)
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    cost = metrics["cost"]
    assert cost["total"] == pytest.approx(math.fsum(costs), rel=1e-12)
    assert cost["total"] == pytest.approx(
        (cost["prompt_tokens"] * 2.5 + cost["completion_tokens"] * 10.0) / 1e6, rel=1e-12)
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert f"money {cost['total']:.4f}" in page


def test_run_without_prices_has_no_cost(tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    config = llm_config(tmp_path, fake_server)
    result = runner.invoke(app, ["run", "-c", str(config), "--run-id", "free", "-q"])
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "runs/free"
    assert all(a["usage"]["cost"] is None for a in rows(run_dir, "answers.jsonl"))
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["cost"]["total"] is None
    assert "money" not in (run_dir / "report.html").read_text(encoding="utf-8")
    assert cost_summary([])["total"] is None  # nothing priced: unknown
