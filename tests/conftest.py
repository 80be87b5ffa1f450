"""Shared fixtures: a real local OpenAI-compatible test server (see ``openai_server.py``),
a real model served by llama.cpp (``local_llm``), and the markers:

- ``slow``: long-running; runs only with ``RAGASSAY_SLOW=1``;
- ``heavy``: every test of the ``browser`` and ``llm`` tiers, and the test files of the
  other tiers that start servers, worker processes or dozens of CLI runs (:data:`HEAVY`);
  ``./scripts/test.sh --fast`` leaves them out;
- ``serial``: tests that must not run beside another worker (a local Ray per session: the
  files in :data:`SERIAL` and the Ray tests of ``test_executor.py``, marked there);
  ``scripts/test.sh`` runs them after the parallel run, in one process.

The tests live in tiers, one folder each: ``unit`` (pure functions: no subprocess, no
server), ``integration`` (the CLI, run folders, local HTTP servers, worker processes),
``differential`` (against trec_eval and pytrec_eval), ``browser`` (headless Chromium) and
``llm`` (the real llama.cpp server). Shared paths and record builders are in
``builders.py``; this folder is on ``sys.path`` (``pythonpath`` in ``pyproject.toml``), so
``from builders import ROOT`` works from every tier.

Under pytest-xdist every worker has its own session: the session fixtures (the fake server,
the llama.cpp server) start once per worker that needs them, each on a free port.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import ROOT
from openai_server import FakeOpenAIServer

from ragassay.localserver import ServerProcess

LOCAL_LLM_SEED = 20261201


# Test files by what they start (see the module docstring); a file's tests share its marker.
HEAVY_TIERS = {"browser", "llm"}
HEAVY = {"test_readme_commands.py", "test_executor.py", "test_llm_run.py", "test_action.py",
         "test_reproducible.py", "test_embed_models.py", "test_trec_eval_suite.py",
         "test_bad_input.py", "test_atomic.py", "test_consistency.py", "test_ray_network.py",
         "test_executor_faults.py"}
SERIAL = {"test_ray_network.py", "test_executor_faults.py"}  # test_executor.py: its Ray tests


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long-running; runs only with RAGASSAY_SLOW=1")
    config.addinivalue_line("markers", "heavy: starts servers, browsers, workers or many "
                            "CLI runs; left out by scripts/test.sh --fast")
    config.addinivalue_line("markers", "serial: must not run beside another xdist worker")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        if name in HEAVY or item.path.parent.name in HEAVY_TIERS:
            item.add_marker(pytest.mark.heavy)
        if name in SERIAL:
            item.add_marker(pytest.mark.serial)
    if os.environ.get("RAGASSAY_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow test: set RAGASSAY_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture()
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the test from the repository root, where the shipped configs' paths are rooted."""
    monkeypatch.chdir(ROOT)


@pytest.fixture()
def text_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``examples/text_system`` copied to a temporary working folder, which is also the
    current folder and on ``sys.path`` (the system's callable is imported from it)."""
    for f in (ROOT / "examples" / "text_system").iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.fixture(scope="session")
def openai_server() -> Iterator[FakeOpenAIServer]:
    """The fake server on 127.0.0.1 (free port), started once for the session; its
    ``base_url`` and ``control`` handle. Use ``fake_server`` for a reset control."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_server(openai_server: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """The session's server with its script, flags and request log cleared for this test."""
    openai_server.control.reset()
    yield openai_server
    openai_server.control.reset()


def packaged_local_model() -> Path:
    """The packaged GGUF when it and xllamacpp are installed; else the test skips, or fails
    under ``RAGASSAY_REQUIRE_LOCAL_LLM=1`` (set by ``scripts/test.sh``, which installs them,
    so that CI never passes by skipping)."""
    from ragassay.localserver import INSTALL_HINT, packaged_model_path, xllamacpp_installed

    model = packaged_model_path()
    if xllamacpp_installed() and model is not None:
        return model
    why = f"no local model server: {INSTALL_HINT}"
    if os.environ.get("RAGASSAY_REQUIRE_LOCAL_LLM") == "1":
        pytest.fail(why + " (RAGASSAY_REQUIRE_LOCAL_LLM=1)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def local_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """``ragassay serve-local`` with the packaged model on 127.0.0.1 (a free port, a fixed
    seed), started once for the session and stopped with Ctrl-C at its end. Skips when
    xllamacpp or the model package is not installed (``scripts/test.sh`` installs both);
    the server's log is in the session's temp folder."""
    from ragassay.localserver import ServerSettings, spawn

    model = packaged_local_model()
    log = tmp_path_factory.mktemp("local_llm") / "server.log"
    with log.open("w", encoding="utf-8") as fh:
        server = spawn(ServerSettings(model=model, port=0, seed=LOCAL_LLM_SEED), log=fh)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def local_ray() -> Iterator[None]:
    """One local Ray for the session (2 CPUs, on 127.0.0.1), shared by every test module that
    uses the ray executor: a second ``ray.init`` in one process is refused."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("the ray extra is not installed (pip install -e '.[ray]')")
    import ray  # imported first, as a user's program may have: the start must not care
    from ray import cloudpickle

    from ragassay.localray import start_local_ray

    start_local_ray(2)
    # test modules are not importable in Ray's workers: their functions travel by value
    for name, module in list(sys.modules.items()):
        if name.startswith("test_") and module is not None:
            cloudpickle.register_pickle_by_value(module)
    try:
        yield
    finally:
        ray.shutdown()
