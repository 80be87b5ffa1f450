"""Every executor and worker count writes the same run folder (timings apart): local, process
with 1 and 2 workers, and Ray with 1 and 2 workers (a local Ray on 127.0.0.1, started once
for the session), on the fixture, on a generated set and with an LLM answerer and judge."""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import os
import pickle
import re
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import CONTRACT_CONFIG, ROOT, llm_config
from openai_server import FakeOpenAIServer
from pydantic import BaseModel, PrivateAttr
from synthetic import make_eval_set
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.errors import InputError
from ragassay.executor import (
    LocalExecutor,
    ProcessExecutor,
    chunked,
    open_executor,
    split,
)

runner = CliRunner()
HAS_RAY = importlib.util.find_spec("ray") is not None
# A Ray test is serial (scripts/test.sh runs it after the parallel run, in one process);
# the others run beside the other tests.
RAY = pytest.mark.serial
OTHER_EXECUTORS = [("process", 1), ("process", 2), pytest.param("ray", 1, marks=RAY),
                   pytest.param("ray", 2, marks=RAY)]
# Timings: metrics.json → timings, and each answer's latency (answers.jsonl, the report).
LATENCY = re.compile(r'"latency_ms": ?\{[^}]*\}')


def _needs(kind: str, request: pytest.FixtureRequest) -> None:
    if kind == "ray":
        request.getfixturevalue("local_ray")


def run_folder(config: Path, root: Path, kind: str, workers: int, *extra: str,
               code: int = 0) -> Path:
    args = ["run", "-c", str(config), "--output-root", str(root / f"{kind}{workers}"),
            "--run-id", "same", "-q", "--no-progress", "--executor", kind,
            "--workers", str(workers), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    return root / f"{kind}{workers}" / "same"


def without_timings(folder: Path) -> dict[str, bytes]:
    """The folder's files as bytes, with the timings blanked out (they differ run to run)."""
    out: dict[str, bytes] = {}
    for path in sorted(folder.iterdir()):
        if path.name == "metrics.json":
            metrics = json.loads(path.read_text(encoding="utf-8"))
            ran_on = metrics.pop("timings")["executor"]
            assert ran_on["kind"] in ("local", "process", "ray")
            out[path.name] = json.dumps(metrics, sort_keys=True).encode()
        elif path.suffix == ".jsonl":
            out[path.name] = LATENCY.sub('"latency_ms": {}', path.read_text(
                encoding="utf-8")).encode()
    assert {"metrics.json", "answers.jsonl", "retrieved_chunks.jsonl",
            "failure_cases.jsonl"} <= set(out)
    return out


@pytest.fixture(scope="module")
def fixture_on_local(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The contract run on the local executor, once for the module: what every other
    executor must write."""
    return without_timings(run_folder(CONTRACT_CONFIG, tmp_path_factory.mktemp("fixture"),
                                      "local", 1))


@pytest.fixture(scope="module")
def generated_on_local(tmp_path_factory: pytest.TempPathFactory,
                       ) -> tuple[Path, dict[str, bytes]]:
    """A generated set of 300 questions (its config) and its run on the local executor,
    once for the module; exit 3: the set has questions without a prediction."""
    root = tmp_path_factory.mktemp("generated")
    config = make_eval_set(root / "set", n_questions=300, seed=3)
    return config, without_timings(run_folder(config, root, "local", 1, code=3))


@pytest.mark.parametrize("kind,workers", OTHER_EXECUTORS)
def test_fixture_run_is_the_same_on_every_executor(tmp_path: Path, kind: str, workers: int,
                                                   fixture_on_local: dict[str, bytes],
                                                   request: pytest.FixtureRequest) -> None:
    _needs(kind, request)
    other = without_timings(run_folder(CONTRACT_CONFIG, tmp_path, kind, workers))
    assert other.keys() == fixture_on_local.keys()
    for name in fixture_on_local:
        assert other[name] == fixture_on_local[name], name


@pytest.mark.parametrize("kind,workers", OTHER_EXECUTORS)
def test_generated_set_is_the_same_on_every_executor(
        tmp_path: Path, kind: str, workers: int,
        generated_on_local: tuple[Path, dict[str, bytes]],
        request: pytest.FixtureRequest) -> None:
    _needs(kind, request)
    config, local = generated_on_local
    other = without_timings(run_folder(config, tmp_path, kind, workers, code=3))
    assert other.keys() == local.keys()
    for name in local:
        assert other[name] == local[name], name


def chat_calls(server: FakeOpenAIServer) -> int:
    return sum(r.path.endswith("/chat/completions") for r in server.control.requests)


@pytest.mark.parametrize("kind", ["process", pytest.param("ray", marks=RAY)])
def test_llm_answerer_and_judge_the_same_on_two_workers(
        tmp_path: Path, fake_server: FakeOpenAIServer, kind: str,
        request: pytest.FixtureRequest) -> None:
    """Answer and judge calls made from two workers: the same answers and verdicts as from
    one process; the workers share the on-disk cache (a rerun makes no call)."""
    _needs(kind, request)
    config = llm_config(tmp_path, fake_server, concurrency=3)
    (tmp_path / "cache").mkdir()
    other = without_timings(run_folder(config, tmp_path, kind, 2))
    calls = chat_calls(fake_server)
    assert calls >= 16  # 16 answers, and the judge's calls
    # one entry per distinct request (a retried or repeated request is one entry)
    assert 16 <= len(list((tmp_path / "cache").glob("*.json"))) <= calls
    local = without_timings(run_folder(config, tmp_path, "local", 1))
    assert chat_calls(fake_server) == calls  # all from the workers' cache
    for name in local:
        assert other[name] == local[name], name


def test_sweep_the_same_on_two_worker_processes(tmp_path: Path) -> None:
    config = CONTRACT_CONFIG
    docs = []
    for kind in ("local", "process"):
        result = runner.invoke(app, ["sweep", "-c", str(config), "--k", "1..4",
                                     "--output-root", str(tmp_path / kind), "--executor",
                                     kind, "--workers", "2", "--no-progress"])
        assert result.exit_code == 0, result.output
        docs.append((tmp_path / kind / "sweep/sweep.json").read_bytes())
    assert docs[0] == docs[1]


@pytest.mark.parametrize("kind", ["process", pytest.param("ray", marks=RAY)])
def test_index_the_same_on_two_workers(tmp_path: Path, kind: str,
                                       request: pytest.FixtureRequest) -> None:
    _needs(kind, request)
    built = {}
    for name, args in (("local", []), (kind, ["--executor", kind, "--workers", "2"])):
        out = tmp_path / name
        result = runner.invoke(app, ["index", "--source", str(ROOT / "data/raw"), "--out",
                                     str(out), "--chunk-size", "120", "--overlap", "20",
                                     "-q", *args])
        assert result.exit_code == 0, result.output
        built[name] = out
    for file in ("index.json", "embeddings.npy"):
        assert (built[kind] / file).read_bytes() == (built["local"] / file).read_bytes()


# --- the executor itself ---------------------------------------------------------------


def _offset(shared: dict[str, int], chunk: list[int]) -> list[int]:
    return [x + shared["offset"] for x in chunk]


def _fail(shared: object, chunk: list[int]) -> list[int]:
    raise InputError("questions.jsonl", "bad row", line=chunk[0], field="question")


def _pid(shared: object, chunk: list[int]) -> list[int]:
    import os

    return [os.getpid()] * len(chunk)


def _write_and_read(folder: str, chunk: list[int]) -> list[bool]:
    """Write one cache entry over and over while reading it: whether each read was whole."""
    from ragassay.endpoint.cache import cache_file, read_entry, write_entry

    path = cache_file(Path(folder), "k" * 64)
    whole = []
    for i in chunk:
        write_entry(path, {"text": "x" * 50_000, "writer": i})
        entry = read_entry(path)
        whole.append(entry is not None and entry["text"] == "x" * 50_000)
    return whole


def test_cache_writers_in_two_processes_never_leave_half_an_entry(tmp_path: Path) -> None:
    """Two workers writing the same cache entry (the same call made twice): every read sees
    a whole entry, and no temporary file is left (ragassay.atomic)."""
    with ProcessExecutor(2) as ex:
        whole = ex.map(_write_and_read, list(range(400)), str(tmp_path), chunk_size=200)
    assert whole == [True] * 400
    assert [p.name for p in tmp_path.iterdir()] == ["k" * 64 + ".json"]


def test_chunks_keep_the_order() -> None:
    assert chunked([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
    assert split(list(range(7)), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert split([1], 4) == [[1]]
    assert LocalExecutor().map(_offset, list(range(10)), {"offset": 5}, chunk_size=3) == \
        list(range(5, 15))


def test_units_of_whole_batches_about_four_per_worker() -> None:
    two = LocalExecutor(1)
    two.workers = 2  # the sizes depend on the worker count only
    assert two.unit_size(3000) == 375  # 8 units
    assert two.unit_size(3000, most=256) == 256
    assert two.unit_size(20000, multiple=256) == 2560  # 2500 rounded up to whole batches
    assert two.unit_size(20000, multiple=256, most=1024) == 1024
    assert two.unit_size(5) == 1 and two.unit_size(0) == 1


def _rows(shared: int, chunk: list[int]) -> np.ndarray:
    return np.array([[x, x * shared, -x] for x in chunk], dtype=np.float32)


def _chunk_sizes(shared: object, chunk: list[int]) -> list[int]:
    return [len(chunk)]


@pytest.mark.parametrize("kind", ["local", "process", pytest.param("ray", marks=RAY)])
def test_rows_of_every_chunk_in_one_array(kind: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          request: pytest.FixtureRequest) -> None:
    """map_rows: each chunk's rows in order in one array (on worker processes and a local
    Ray's actors, written in place by the workers into a file this process maps, which is
    gone afterwards), the same on every executor; a unit returning the wrong shape is an
    error; map_chunks gives one result per chunk."""
    import ragassay.executor.process

    _needs(kind, request)

    files: list[int] = []  # the sizes of the array files made
    monkeypatch.setattr(ragassay.executor.process, "rows_folder",
                        lambda size, fallback: files.append(size) or tmp_path)
    chunks = [[1, 2, 3], [4], [5, 6]]
    with open_executor(kind, 2) as ex:
        out = ex.map_rows(_rows, chunks, 2, row_shape=(3,), dtype=np.float32)
        assert out.dtype == np.float32 and out.flags.writeable
        assert out.tolist() == [[x, 2 * x, -x] for x in range(1, 7)]
        assert ex.map_rows(_rows, [], 2, row_shape=(3,), dtype=np.float32).shape == (0, 3)
        with pytest.raises(ValueError, match=r"shape \(3, 3\), float32 for 3 items; "
                                              r"expected shape \(3, 4\)"):
            ex.map_rows(_rows, chunks, 2, row_shape=(4,), dtype=np.float32)
        assert ex.map_chunks(_chunk_sizes, chunks, None) == [[3], [1], [2]]
    assert list(tmp_path.iterdir()) == []
    assert out.sum() == 2 * 21  # still readable with its file gone
    assert files == ([] if kind == "local" else [6 * 3 * 4, 6 * 4 * 4])


class _Tagged(BaseModel):
    name: str
    scores: dict[str, float]
    _note: str = PrivateAttr(default="")


class _OwnPickling(BaseModel):
    value: int

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["__dict__"] = {"value": state["__dict__"]["value"] + 1}
        return state


def test_models_travel_whole_and_keep_their_own_pickling() -> None:
    """What a unit's chunk and results travel as: a pydantic model rebuilt with its fields,
    the fields that were set, and its private attributes; a model that pickles itself its
    own way keeps it."""
    from ragassay.executor.travel import dumps
    from ragassay.schema import Answer, Citation, Usage

    tagged = _Tagged(name="q1", scores={"recall@5": 0.5})
    tagged._note = "kept"
    answer = Answer(text="14 days", status="supported",
                    citations=[Citation(chunk_id="a::chunk-001")])
    answer._line = 7  # the line a record was read from (for errors found later)
    usage = Usage(prompt_tokens=12, source="counted")  # an extra key
    back = pickle.loads(dumps([tagged, answer, usage, (tagged, None)]))
    assert back[0] == tagged and back[0]._note == "kept"
    assert back[0].model_fields_set == {"name", "scores"}
    assert back[1] == answer and back[1]._line == 7
    assert back[1].model_dump_json() == answer.model_dump_json()
    assert back[2].model_extra == {"source": "counted"}
    assert back[2].model_dump() == {"prompt_tokens": 12, "completion_tokens": 0,
                                    "source": "counted"}
    assert back[3][0] is back[0]  # one object sent once
    assert pickle.loads(dumps(_OwnPickling(value=1))).value == 2


def _blas_threads(shared: object, chunk: list[int]) -> list[int]:
    import numpy  # noqa: F401  (a BLAS loaded, whichever way the worker started)
    import threadpoolctl

    return [max((p["num_threads"] for p in threadpoolctl.threadpool_info()), default=1)
            for _ in chunk]


def test_a_worker_process_computes_on_one_blas_thread() -> None:
    """Two workers on two cores: each worker's matrix products on one thread, not a thread
    per core each (which oversubscribes the cores)."""
    if any(name in os.environ for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                           "MKL_NUM_THREADS")):
        pytest.skip("the BLAS thread count is set by the environment")
    with ProcessExecutor(2) as ex:
        assert set(ex.map(_blas_threads, list(range(8)), None, chunk_size=1)) == {1}


def test_process_executor_in_order_with_a_shared_object_and_its_errors() -> None:
    with ProcessExecutor(2) as ex:
        done: list[int] = []
        items = list(range(100))
        assert ex.map(_offset, items, {"offset": 1}, chunk_size=7, done=done.append) == \
            [x + 1 for x in items]
        assert sum(done) == 100
        pids = set(ex.map(_pid, items, None, chunk_size=5))
        assert 1 <= len(pids) <= 2
        for _ in range(3):  # both chunks fail: the first one's error, whichever ends first
            with pytest.raises(InputError) as caught:  # an input error in a worker is itself
                ex.map(_fail, [7, 8], None, chunk_size=1)
            assert (caught.value.line, caught.value.field) == (7, "question")


@RAY
def test_ray_executor_in_order_and_errors(local_ray: None) -> None:
    with open_executor("ray", 2) as ex:
        shared = {"offset": 2}
        items = list(range(50))
        assert ex.map(_offset, items, shared, chunk_size=4) == [x + 2 for x in items]
        assert ex.map(partial(_offset), items, shared, chunk_size=9) == [x + 2 for x in items]
        with pytest.raises(InputError) as caught:
            ex.map(_fail, [3, 4, 5], None, chunk_size=1)
        assert caught.value.line == 3


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        children = [p for p, parent in parents.items() if parent == pid]
        found.update(children)
        todo += children
    return found


def _tcp_addresses(pids: set[int]) -> set[str]:
    """The addresses of the TCP sockets ``pids`` hold: each one's own address, and the peer's
    for a connected one (a listening socket has no peer)."""
    inodes = set()
    for pid in pids:
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue
        inodes |= {link[8:-1] for link in links if link.startswith("socket:[")}
    addresses = set()
    for table, size in (("tcp", 4), ("tcp6", 16)):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] not in inodes:
                continue
            listening = fields[3] == "0A"
            for pair in fields[1:2] if listening else fields[1:3]:
                raw = bytes.fromhex(pair.split(":")[0])
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, size, 4))
                address = ipaddress.ip_address(words)
                if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
                    address = address.ipv4_mapped
                addresses.add(str(address))
    return addresses


@RAY
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc")
def test_local_ray_talks_on_the_loopback_only(local_ray: None) -> None:
    """Every TCP socket of the Ray processes started here (listening or connected) is on
    127.0.0.1: nothing listens on another interface, nothing connects elsewhere."""
    with open_executor("ray", 2) as ex:
        assert ex.map(_offset, [1, 2], {"offset": 0}, chunk_size=1) == [1, 2]
        addresses = _tcp_addresses(_descendants(os.getpid()))
    assert addresses  # Ray's processes hold sockets
    assert addresses == {"127.0.0.1"}, addresses


def test_embeddings_of_a_batch_do_not_depend_on_it() -> None:
    """What the equivalence of index builds rests on: a text's vector is the same alone
    and in a batch."""
    from ragassay.embed import get_embedder

    emb = get_embedder("hashing")
    texts = ["Returns within 14 days.", "하자보수 기간은 12개월입니다.", "Rückgabe binnen 30 Tage."]
    together = np.asarray(emb.embed_documents(texts))
    alone = np.stack([np.asarray(emb.embed_documents([t]))[0] for t in texts])
    assert together.tobytes() == alone.tobytes()


def test_bad_executor_options(tmp_path: Path) -> None:
    config = CONTRACT_CONFIG
    result = runner.invoke(app, ["run", "-c", str(config), "--executor", "threads"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["run", "-c", str(config), "--workers", "0"])
    assert result.exit_code == 2
    bad = tmp_path / "bad.yaml"
    text = config.read_text(encoding="utf-8").replace("../../", str(ROOT) + "/")
    bad.write_text(text + "executor:\n  kind: process\n  address: 10.0.0.1:6379\n",
                   encoding="utf-8")
    result = runner.invoke(app, ["run", "-c", str(bad), "--output-root", str(tmp_path)])
    assert result.exit_code == 2
    assert "executor.address" in result.output and "kind: ray" in result.output
