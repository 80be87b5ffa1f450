"""The one HTTP client against hostile servers: each test failed before the change it names.

A real server on 127.0.0.1 (a thread per connection, raw HTTP/1.1) that trickles its reply,
sends 50 MB, echoes the request's Authorization header in an error body, or records the
request line; the answerer, the judge and the system under test all call through
:class:`ragassay.endpoint.Transport`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from builders import ROOT
from openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from ragassay.cli import app
from ragassay.endpoint import EndpointConfig, EndpointError, OpenAICompatClient, redact_text
from ragassay.system import HttpSystem, SystemConfig

MESSAGES = [{"role": "user", "content": "Question: What is the fee?"}]
CHAT = {"choices": [{"message": {"content": "It is 4 euros."}}], "model": "m"}
runner = CliRunner()


@dataclass
class Hostile:
    """What the server does with each request (``mode``) and what it saw."""

    mode: str = "ok"
    request_lines: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)  # body bytes written per request
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _handle(conn: socket.socket, state: Hostile) -> None:
    with conn:
        data = b""
        while b"\r\n\r\n" not in data:
            piece = conn.recv(65536)
            if not piece:
                return
            data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            body += conn.recv(65536)
        state.request_lines.append(lines[0])
        state.headers.append(headers)
        sent = 0
        try:
            if state.mode == "trickle":  # headers at once, then a byte every 0.8 s
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 40\r\n\r\n")
                for byte in json.dumps(CHAT).encode()[:40]:
                    conn.sendall(bytes([byte]))
                    sent += 1
                    time.sleep(0.8)
            elif state.mode in ("huge", "huge_chunked"):  # 50 MB of a JSON string
                size = 50 * 1024 * 1024
                chunked = state.mode == "huge_chunked"
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             + (b"Transfer-Encoding: chunked\r\n\r\n" if chunked
                                else f"Content-Length: {size}\r\n\r\n".encode()))
                block = b"x" * 65536
                while sent < size:
                    conn.sendall(f"{len(block):x}\r\n".encode() + block + b"\r\n"
                                 if chunked else block)
                    sent += len(block)
            elif state.mode == "echo":  # an error body that echoes the request's headers
                out = json.dumps({"error": "bad credentials",
                                  "authorization": headers.get("authorization"),
                                  "you_sent": headers}).encode()
                conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: "
                             b"application/json\r\nContent-Length: "
                             + str(len(out)).encode() + b"\r\n\r\n" + out)
            else:
                out = json.dumps(CHAT).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: " + str(len(out)).encode() + b"\r\n\r\n" + out)
                sent = len(out)
        except OSError:  # the client hung up: what it cut
            pass
        state.sent.append(sent)


@pytest.fixture()
def hostile() -> Iterator[Hostile]:
    state = Hostile()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    state.port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_handle, args=(conn, state), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield state
    finally:
        stop.set()
        listener.close()


def client(url: str, **cfg: object) -> OpenAICompatClient:
    return OpenAICompatClient(EndpointConfig(**{"base_url": url, "model": "m",
                                                "backoff_base_s": 0.01, **cfg}),
                              sleep=lambda s: None)


def test_a_trickling_reply_is_cut_at_the_timeout(hostile: Hostile) -> None:
    # 40 bytes at 0.8 s each would take 32 s; each read comes well within httpx's 2 s
    hostile.mode = "trickle"
    with pytest.raises(EndpointError, match=r"no reply from .* within 2 s"):
        client(hostile.base_url, timeout_s=2.0, max_retries=0).chat(MESSAGES)
    for _ in range(50):  # the server notices the hang-up on its next write
        if hostile.sent:
            break
        time.sleep(0.1)
    assert hostile.sent and hostile.sent[0] <= 6  # ~2 s of 0.8 s bytes, not all 40


@pytest.mark.parametrize("mode", ["huge", "huge_chunked"])
def test_a_50_mb_reply_is_refused_by_the_size_limit(hostile: Hostile, mode: str) -> None:
    hostile.mode = mode
    with pytest.raises(EndpointError, match="larger than max_reply_bytes") as err:
        client(hostile.base_url, max_retries=3).chat(MESSAGES)
    assert err.value.attempts == 1  # not retried: the same reply would come again
    time.sleep(0.2)
    assert not hostile.sent or hostile.sent[0] < 50 * 1024 * 1024


def test_a_query_string_in_base_url_stays_a_query_string(hostile: Hostile) -> None:
    url = hostile.base_url + "?api-version=2024-06-01"
    assert client(url).chat(MESSAGES).text == "It is 4 euros."
    assert hostile.request_lines == ["POST /v1/chat/completions?api-version=2024-06-01 "
                                     "HTTP/1.1"]


def test_userinfo_in_the_url_does_not_replace_the_api_key(
        hostile: Hostile, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_KEY", "sk-the-real-key-123")
    url = f"http://user:pw@127.0.0.1:{hostile.port}/v1"
    client(url, api_key_env="HOSTILE_KEY").chat(MESSAGES)
    assert hostile.headers[-1]["authorization"] == "Bearer sk-the-real-key-123"
    client(url).chat(MESSAGES)  # without a key, the userinfo is the credential
    assert hostile.headers[-1]["authorization"] == "Basic dXNlcjpwdw=="
    assert "@" not in hostile.request_lines[-1]


def test_credentials_echoed_in_an_error_body_are_redacted(
        hostile: Hostile, monkeypatch: pytest.MonkeyPatch) -> None:
    hostile.mode = "echo"
    monkeypatch.setenv("HOSTILE_KEY", "sk-the-real-key-123")
    with pytest.raises(EndpointError) as err:
        client(hostile.base_url, api_key_env="HOSTILE_KEY", max_retries=0).chat(MESSAGES)
    assert "sk-the-real-key-123" not in str(err.value)
    assert "Authorization" in str(err.value) or "authorization" in str(err.value)
    with pytest.raises(EndpointError) as err:
        client(f"http://user:pw@127.0.0.1:{hostile.port}/v1", max_retries=0).chat(MESSAGES)
    assert "dXNlcjpwdw==" not in str(err.value)
    # written-out credentials of any origin, as a server may phrase them
    assert redact_text("got Authorization: Basic QWxhZGRpbjpvcGVu") == "got Authorization: ***"
    assert redact_text('{"auth": "Bearer eyJhbGciOi.abc.def"}') == '{"auth": "Bearer ***"}'


def _llm_config(tmp_path: Path, base_url: str, **answerer: object) -> Path:
    cfg = yaml.safe_load((ROOT / "configs/eval/rag_quality_v1.yaml").read_text(encoding="utf-8"))
    for key in ("index_dir", "source_dir", "questions_path", "gold_evidence_path"):
        cfg[key] = str((ROOT / "configs/eval" / cfg[key]).resolve())
    cfg["output_root"] = str(tmp_path / "runs")
    cfg["answerer"] = {"kind": "llm", "base_url": base_url, "model": "m",
                       "backoff_base_s": 0.01, "max_retries": 0, "concurrency": 2,
                       "fail_fast_after": None, **answerer}
    path = tmp_path / "llm.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def test_an_echoed_basic_credential_reaches_no_file_and_no_terminal(
        hostile: Hostile, tmp_path: Path) -> None:
    hostile.mode = "echo"
    config = _llm_config(tmp_path, f"http://user:pw@127.0.0.1:{hostile.port}/v1")
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "echo", "-q"])
    assert res.exit_code == 3, res.output
    assert "dXNlcjpwdw==" not in res.output and ":pw@" not in res.output
    folder = tmp_path / "runs/echo"
    texts = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()}
    assert "HTTP 500" in texts["answers.jsonl"]  # the error is there …
    for name, text in texts.items():  # … without the credential
        assert "dXNlcjpwdw==" not in text, name
        assert ":pw@" not in text, name


def test_a_reply_from_another_model_is_recorded_and_noted(tmp_path: Path,
                                                         fake_server: FakeOpenAIServer
                                                         ) -> None:
    config = _llm_config(tmp_path, fake_server.base_url, model="the-configured-model",
                         max_retries=1)
    res = runner.invoke(app, ["run", "-c", str(config), "--run-id", "swap", "-q"])
    assert res.exit_code == 0, res.output
    assert "replied as model 'fake-model'" in res.output
    metrics = json.loads((tmp_path / "runs/swap/metrics.json").read_text(encoding="utf-8"))
    assert any("'fake-model'" in n and "'the-configured-model'" in n
               for n in metrics["notes"])


# --- fail fast: timeouts count ---------------------------------------------------------


def test_timeouts_in_a_row_stop_the_client(hostile: Hostile) -> None:
    from ragassay.endpoint import EndpointUnreachable

    hostile.mode = "trickle"
    c = client(hostile.base_url, timeout_s=0.5, max_retries=5, fail_fast_after=2)
    with pytest.raises(EndpointUnreachable, match="no reply within 0.5 s at .*stopped "
                                                  "after 2 failed attempts"):
        c.chat(MESSAGES)
    assert len(hostile.request_lines) == 2  # not the 6 attempts
    with pytest.raises(EndpointUnreachable, match="this call was not made"):
        c.chat(MESSAGES)
    assert len(hostile.request_lines) == 2


# --- the system under test goes through the same client -------------------------------


def _system(url: str, **cfg: object) -> HttpSystem:
    return HttpSystem(SystemConfig(url=url, backoff_base_s=0.01, **cfg), [],
                      sleep=lambda s: None)


def test_the_system_client_has_the_same_limits(hostile: Hostile) -> None:
    ask: Callable[[], object] = lambda: _system(  # noqa: E731
        f"http://127.0.0.1:{hostile.port}/ask?tenant=a", timeout_s=1.0, max_retries=0).ask(
        {"question": "q"}, "q1", "k")
    hostile.mode = "huge"
    with pytest.raises(EndpointError, match="larger than max_reply_bytes"):
        ask()
    hostile.mode = "trickle"
    with pytest.raises(EndpointError, match="within 1 s"):
        ask()
    assert hostile.request_lines[0] == "POST /ask?tenant=a HTTP/1.1"
