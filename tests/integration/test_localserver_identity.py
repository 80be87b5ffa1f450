"""serve-local takes its own port back right after a stop, and the reply cache follows the
model (its content hash), not the port: unit checks, then the real llama.cpp server."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from conftest import packaged_local_model

import ragassay.ingest
from ragassay import localserver
from ragassay.endpoint import EndpointConfig, OpenAICompatClient
from ragassay.endpoint.cache import key_endpoint
from ragassay.localserver import ServerSettings, check_port_free, model_sha256, spawn


def port_in_time_wait() -> int:
    """A port of 127.0.0.1 nothing listens on, with a connection in TIME_WAIT (the side
    that closes first keeps it, as a stopped server does)."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # the "server" closes first: TIME_WAIT on its port
        client.recv(1)
        client.close()
    return port


def test_a_port_in_time_wait_is_free_to_listen_on() -> None:
    check_port_free(port_in_time_wait())  # raised "port … is taken" before SO_REUSEADDR


def test_a_port_someone_listens_on_is_taken() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        with pytest.raises(Exception, match="is taken"):
            check_port_free(busy.getsockname()[1])


def test_the_model_hash_is_computed_once_and_again_when_the_file_is_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(localserver, "_SHA_BY_STAT", {})
    calls: list[Path] = []
    real = ragassay.ingest.file_sha256

    def counting(path: Path) -> str:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(ragassay.ingest, "file_sha256", counting)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"a" * 60)
    first = model_sha256(model)
    assert model_sha256(model) == first and len(calls) == 1  # remembered in this process
    monkeypatch.setattr(localserver, "_SHA_BY_STAT", {})
    assert model_sha256(model) == first and len(calls) == 1  # and on disk
    model.write_bytes(b"GGUF" + b"b" * 60)  # same size, same path, other content
    st = model.stat()
    import os
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    second = model_sha256(model)
    assert second != first and len(calls) == 2


def test_the_cache_key_drops_the_url_only_for_a_content_addressed_model() -> None:
    local = [{"id": "m.gguf@sha256:0123456789abcdef", "object": "model"}]
    assert key_endpoint("http://127.0.0.1:8080/v1", local) is None
    assert key_endpoint("https://api.example/v1", [{"id": "gpt"}]) == "https://api.example/v1"
    assert key_endpoint("https://api.example/v1", None) == "https://api.example/v1"


def test_serve_local_restarts_on_its_port_and_a_new_port_keeps_the_cache(
        tmp_path: Path) -> None:
    model = packaged_local_model()
    cache = tmp_path / "cache"
    messages = [{"role": "user", "content": "Name one colour."}]

    def ask(server: localserver.ServerProcess) -> bool:
        cfg = EndpointConfig(base_url=server.base_url, model="local", max_tokens=8,
                             timeout_s=120, max_retries=0, cache_dir=cache)
        with OpenAICompatClient(cfg) as c:
            return c.chat(messages).cached

    with tmp_path.joinpath("log").open("w") as log:
        with spawn(ServerSettings(model=model, port=0), log=log) as first:
            port = int(first.base_url.rsplit(":", 1)[1].split("/")[0])
            assert ask(first) is False
        # the port has connections in TIME_WAIT now: serve-local must take it again
        with spawn(ServerSettings(model=model, port=port), log=log) as again:
            assert again.base_url == first.base_url
            assert ask(again) is True
        with spawn(ServerSettings(model=model, port=0), log=log) as other:
            assert other.base_url != first.base_url
            assert ask(other) is True  # the same model file on another port: cached
