"""Executors under faults of the user's environment: a worker process killed, a Ray actor
killed or exiting, a Ray that does not start. Each ends the command with one line on stderr
and exit 2 (bad input: the environment, never "a bug in ragassay" and never the gate's 1),
with no traceback, no resource-tracker warning and no run folder half-written."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import ROOT
from test_executor import HAS_RAY

from ragassay.errors import InputError
from ragassay.executor import ProcessExecutor, WorkerLost, open_executor

# A user's program: ragassay's command line with one more retriever, whose worker process
# is killed (SIGKILL, as the out-of-memory killer sends it) on the question about 하자보수.
# The worker processes import the program as their __main__, so they know the retriever.
DYING = '''
import os, signal
from ragassay.cli import app
from ragassay.config import register_preset
from ragassay.retrieve import VectorRetriever, register_retriever


class Dying:
    backend = "dying"

    def __init__(self, inner):
        self.inner, self.index = inner, inner.index

    @classmethod
    def from_config(cls, index, cfg):
        return cls(VectorRetriever.from_config(index, cfg))

    def search(self, queries, k, track=None):
        if any("하자보수" in q for q in queries):
            os.kill(os.getpid(), signal.SIGKILL)
        return self.inner.search(queries, k, track)


register_retriever(Dying)
register_preset("dying", retrieval_backend="dying")
if __name__ == "__main__":
    app()
'''

# ragassay's command line with ray.init failing as Ray fails when a cluster cannot be joined
# (a many-line message); nothing is started and no connection is tried.
RAY_FAILS = '''
import ray
from ragassay.cli import app


def init(*args, **kwargs):
    raise ConnectionError("Failed to connect to GCS at 10.9.9.9:6379 within 5 seconds.\\n"
                          "Last 10 lines of error files: ...")


ray.init = init
app()
'''


def fixture_config(folder: Path, **replace: str) -> Path:
    """The fixture's config with its paths made absolute and ``replace``'s lines changed."""
    text = (ROOT / "configs/eval/rag_quality_v1.yaml").read_text(encoding="utf-8")
    text = text.replace("../../", f"{ROOT}/")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    path = folder / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def run_program(folder: Path, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = folder / "program.py"
    script.write_text(program, encoding="utf-8")
    return subprocess.run([sys.executable, str(script), *args], cwd=folder, text=True,
                          capture_output=True, timeout=600, check=False)


def assert_one_line(stderr: str, *words: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    for word in words:
        assert word in lines[0], stderr
    assert "Traceback" not in stderr and "resource_tracker" not in stderr
    assert "a bug in ragassay" not in stderr


def test_a_killed_worker_process_ends_the_run_with_one_line_and_exit_2(tmp_path: Path) -> None:
    config = fixture_config(tmp_path, **{"name: naive_baseline": "name: dying",
                                         "retrieval_backend: dense": "retrieval_backend: dying"})
    done = run_program(tmp_path, DYING, "run", "-c", str(config), "--output-root",
                       str(tmp_path / "runs"), "--run-id", "r1", "--executor", "process",
                       "--workers", "2", "--no-progress")
    assert done.returncode == 2, done.stderr
    assert_one_line(done.stderr, "--executor", "a worker process killed by SIGKILL",
                     "--workers", "--executor local")
    assert not (tmp_path / "runs" / "r1").exists()  # nothing half-written


def _kill_on_3(shared: object, chunk: list[int]) -> list[int]:
    if 3 in chunk:
        os.kill(os.getpid(), signal.SIGKILL)
    return chunk


def _exit_on_3(shared: object, chunk: list[int]) -> list[int]:
    if 3 in chunk:
        os._exit(1)
    return chunk


def _same(shared: object, chunk: list[int]) -> list[int]:
    return chunk


def test_a_lost_worker_process_fails_this_map_and_every_later_one() -> None:
    """The pool is broken once a worker is lost: every unit not ended fails with the same
    WorkerLost (an InputError: exit 2), and so does the next map; closing does not hang."""
    with ProcessExecutor(2) as ex:
        with pytest.raises(WorkerLost) as caught:
            ex.map(_kill_on_3, list(range(8)), None, chunk_size=1)
        assert isinstance(caught.value, InputError)
        assert caught.value.path == "--executor"
        assert "killed by SIGKILL" in caught.value.message
        with pytest.raises(WorkerLost) as again:
            ex.map(_same, [1, 2], None, chunk_size=1)
        assert again.value is caught.value
    with ProcessExecutor(1) as ex:
        with pytest.raises(WorkerLost, match="a worker process exited with code 1 before"):
            ex.map(_exit_on_3, list(range(5)), None, chunk_size=1)


@pytest.fixture()
def ray_units(local_ray: None) -> Iterator[None]:
    # this test module is not importable in Ray's workers: its functions travel by value
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield


def _ray_kill_on_3(shared: object, chunk: list[int]) -> list[int]:
    if 3 in chunk:
        import ray

        ray.kill(ray.get_runtime_context().current_actor)
    return chunk


@pytest.mark.parametrize("unit", [_exit_on_3, _ray_kill_on_3], ids=["os._exit", "ray.kill"])
def test_a_lost_ray_actor_fails_the_run_as_bad_input(ray_units: None, unit: object) -> None:
    """An actor that exits (``os._exit``) or is killed (``ray.kill``) mid-map: WorkerLost
    naming what to do; no unit is started after it, and the next map fails the same way."""
    with open_executor("ray", 2) as ex:
        with pytest.raises(WorkerLost) as caught:
            ex.map(unit, list(range(8)), None, chunk_size=1)  # type: ignore[arg-type]
        assert caught.value.path == "--executor"
        assert caught.value.message.startswith("a Ray actor died before its unit ended "
                                               "(ActorDiedError")
        assert "--executor process" in caught.value.message
        with pytest.raises(WorkerLost):
            ex.map(_same, [1, 2], None, chunk_size=1)


def test_the_raylets_errors_stay_off_stdout(local_ray: None,
                                            capfd: pytest.CaptureFixture[str]) -> None:
    """What Ray's driver prints when a raylet reports a worker's death (as Ray's error
    listener calls it) goes to the debug log, not to stdout beside a command's output."""
    from ray._private import worker

    worker.print_to_stdstream({"lines": ["A worker died or was killed while executing a "
                                         "task by an unexpected system error."],
                               "pid": "raylet", "is_err": False}, ignore_prefix=False)
    captured = capfd.readouterr()
    assert "worker died" not in captured.out + captured.err


@pytest.mark.skipif(not HAS_RAY, reason="the ray extra is not installed")
@pytest.mark.parametrize("join", [False, True])
def test_a_ray_that_does_not_start_is_one_line_and_exit_2(tmp_path: Path, join: bool) -> None:
    """ray.init raising (a cluster that cannot be joined, a local Ray that does not start):
    one line naming the field, the first line of Ray's message and what to do; exit 2 also
    with --gate (the gate never ran). The cluster's address accepts connections (a listener
    of the test's), so the run reaches ray.init."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        extra = f"  address: {address}\n" if join else ""
        config = fixture_config(tmp_path)
        config.write_text(config.read_text(encoding="utf-8")
                          + f"executor:\n  kind: ray\n  workers: 1\n{extra}", encoding="utf-8")
        done = run_program(tmp_path, RAY_FAILS, "run", "-c", str(config), "--output-root",
                           str(tmp_path / "runs"), "--run-id", "r1", "--no-progress", "--gate")
    assert done.returncode == 2, done.stderr
    field = f"executor.address: could not join the Ray cluster at {address}" if join else \
        "executor.kind: could not start a local Ray"
    assert_one_line(done.stderr, field, "Failed to connect to GCS at 10.9.9.9:6379 within 5 "
                    "seconds.", "--executor process")
    assert "Last 10 lines" not in done.stderr  # Ray's first line only
    assert not (tmp_path / "runs" / "r1").exists()


def _closed_port() -> int:
    """A loopback port where nothing listens (bound, then closed)."""
    with socket.create_server(("127.0.0.1", 0)) as s:
        return int(s.getsockname()[1])


@pytest.mark.skipif(not HAS_RAY, reason="the ray extra is not installed")
def test_a_cluster_address_where_nothing_listens_fails_at_once(tmp_path: Path) -> None:
    """Ray's own connect loop retries for minutes at an address where nothing listens; the
    run refuses it before ray.init, in one line and exit 2 (the real ray, nothing faked)."""
    address = f"127.0.0.1:{_closed_port()}"
    config = fixture_config(tmp_path)
    config.write_text(config.read_text(encoding="utf-8") + "executor:\n  kind: ray\n"
                      f"  workers: 1\n  address: {address}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "ragassay.cli", "run", "-c", str(config),
                           "--output-root", str(tmp_path / "runs"), "--run-id", "r1",
                           "--no-progress"], cwd=tmp_path, text=True, capture_output=True,
                          timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert_one_line(done.stderr, f"executor.address: could not join the Ray cluster at "
                    f"{address}: nothing accepts a connection at {address}", "--executor process")
    assert not (tmp_path / "runs" / "r1").exists()


def test_probe_address_reads_the_forms_ray_takes() -> None:
    """host:port and ray://host:port are probed; "auto" and other forms are Ray's to read."""
    from ragassay.executor.rayactors import probe_address

    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        probe_address(f"127.0.0.1:{port}")
        probe_address(f"ray://localhost:{port}")
    closed = _closed_port()
    for address in (f"127.0.0.1:{closed}", f"ray://127.0.0.1:{closed}", f"[::1]:{closed}"):
        with pytest.raises(InputError, match="nothing accepts a connection"):
            probe_address(address)
    probe_address("auto")  # no error: left to Ray
