"""Endpoint checks before a run (key variable, something answering at base_url) and the
redaction of URL secrets wherever an endpoint URL can reach an output."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from openai_server import FakeOpenAIServer

from ragassay.config import AnswererConfig, EvalConfig, check_endpoints
from ragassay.endpoint import (
    EndpointConfig,
    EndpointError,
    OpenAICompatClient,
    check_api_key,
    check_endpoint,
    map_bounded,
    probe_endpoint,
    redact_text,
    redact_url,
)
from ragassay.errors import InputError

MESSAGES = [{"role": "user", "content": "[a::chunk-001]\nThe fee is 4 euros.\n\n"
                                        "Question: What is the fee?"}]


def free_port() -> int:
    """A port nobody listens on: bind one, note it, close it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def with_userinfo(url: str, userinfo: str = "user:secret") -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{userinfo}@{rest}"


# --- redact_url ----------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "shown"), [
    ("http://user:secret@127.0.0.1:8080/v1", "http://user:***@127.0.0.1:8080/v1"),
    ("https://sk-secret@api.example/v1", "https://***@api.example/v1"),
    ("http://h:1/v1?api_key=secret&model=m", "http://h:1/v1?api_key=***&model=m"),
    ("http://h:1/v1?key=secret", "http://h:1/v1?key=***"),
    ("http://h:1/v1?token=secret&x=1#access_token=secret",
     "http://h:1/v1?token=***&x=1#access_token=***"),
    ("http://u:p%40ss@[::1]:8080/v1", "http://u:***@[::1]:8080/v1"),
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ("http://h/v1?model=m&temperature=0", "http://h/v1?model=m&temperature=0"),
])
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_text_masks_every_url_in_a_message() -> None:
    text = "HTTP 500 from http://u:secret@h:1/v1/chat (then https://h:2/?token=secret)"
    assert "secret" not in redact_text(text)
    assert "http://u:***@h:1/v1/chat" in redact_text(text)


# --- dumps and messages --------------------------------------------------------------------


def test_config_dumps_redact_but_the_client_keeps_the_real_url() -> None:
    url = "http://user:secret@127.0.0.1:1/v1"
    endpoint = EndpointConfig(base_url=url, model="m")
    assert endpoint.base_url == url
    assert "secret" not in str(endpoint.model_dump()) + endpoint.model_dump_json()
    answerer = AnswererConfig.model_validate({"kind": "llm", "base_url": url, "model": "m"})
    dumped = answerer.model_dump()
    assert dumped["base_url"] == "http://user:***@127.0.0.1:1/v1"
    assert dumped["kind"] == "llm" and dumped["model"] == "m"
    assert "secret" not in answerer.model_dump_json()
    assert answerer.endpoint().base_url == url  # what the client uses
    cfg = EvalConfig.model_validate({"answerer": {"kind": "llm", "base_url": url,
                                                  "model": "m"},
                                     "judge": {"base_url": url, "model": "j"}})
    assert "secret" not in cfg.model_dump_json()


def test_endpoint_error_messages_are_redacted(fake_server: FakeOpenAIServer) -> None:
    assert "secret" not in str(EndpointError("cannot reach http://u:secret@h:1/v1"))
    fake_server.control.fail_next(1, status=404)
    cfg = EndpointConfig(base_url=with_userinfo(fake_server.base_url), model="m",
                         max_retries=0)
    with pytest.raises(EndpointError) as info:
        OpenAICompatClient(cfg).chat(MESSAGES)
    assert "secret" not in str(info.value) and "user:***@" in str(info.value)
    # the basic auth of the userinfo still reached the server
    assert fake_server.control.last_headers["Authorization"].startswith("Basic ")


def test_refused_connection_message_is_redacted() -> None:
    cfg = EndpointConfig(base_url=f"http://user:secret@127.0.0.1:{free_port()}/v1",
                         model="m", max_retries=0)
    with pytest.raises(EndpointError, match="cannot reach") as info:
        OpenAICompatClient(cfg).chat(MESSAGES)
    assert "secret" not in str(info.value)


def test_map_bounded_wraps_foreign_errors_redacted() -> None:
    def boom(_: int) -> int:
        raise ValueError("bad url http://user:secret@h:1/v1")

    [err] = map_bounded(boom, [1], 1)
    assert isinstance(err, EndpointError) and "secret" not in str(err)


# --- the key variable ------------------------------------------------------------------------


def test_unset_key_variable_names_the_variable_and_the_field(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGASSAY_NO_SUCH_KEY", raising=False)
    cfg = EndpointConfig(base_url="http://127.0.0.1:1/v1", model="m",
                         api_key_env="RAGASSAY_NO_SUCH_KEY")
    with pytest.raises(InputError) as info:
        check_api_key(cfg, what="answerer", path="eval.yaml")
    assert info.value.field == "answerer.api_key_env"
    assert str(info.value).startswith("eval.yaml: field 'answerer.api_key_env': environment "
                                      "variable RAGASSAY_NO_SUCH_KEY is not set")
    monkeypatch.setenv("RAGASSAY_NO_SUCH_KEY", "")
    with pytest.raises(InputError, match="RAGASSAY_NO_SUCH_KEY is empty"):
        check_endpoint(cfg, what="judge")
    monkeypatch.setenv("RAGASSAY_NO_SUCH_KEY", "sk-1")
    check_api_key(cfg, what="judge")  # set: fine, and no network


# --- the probe -------------------------------------------------------------------------------


def test_probe_of_a_live_server_is_one_get(fake_server: FakeOpenAIServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGASSAY_TEST_KEY", "sk-test-123")
    check_endpoint(EndpointConfig(base_url=fake_server.base_url, model="m",
                                  api_key_env="RAGASSAY_TEST_KEY"), what="answerer")
    [req] = fake_server.control.requests
    assert (req.method, req.path) == ("GET", "/v1/models")
    assert req.headers["Authorization"] == "Bearer sk-test-123"


def test_a_404_on_models_still_answers(fake_server: FakeOpenAIServer) -> None:
    probe_endpoint(EndpointConfig(base_url=fake_server.base_url + "/elsewhere", model="m"),
                   what="judge")
    assert fake_server.control.requests[0].path == "/v1/elsewhere/models"


def test_nothing_listening_is_an_input_error_at_once() -> None:
    url = f"http://user:secret@127.0.0.1:{free_port()}/v1"
    t0 = time.perf_counter()
    with pytest.raises(InputError) as info:
        check_endpoint(EndpointConfig(base_url=url, model="m", max_retries=5),
                       what="answerer", path="eval.yaml")
    assert time.perf_counter() - t0 < 3
    message = str(info.value)
    assert info.value.field == "answerer.base_url"
    assert "nothing answers at http://user:***@127.0.0.1:" in message
    assert "start the server or fix base_url" in message and "secret" not in message


def test_a_silent_listener_is_not_unreachable() -> None:
    # accepts connections (kernel backlog) but never replies: something is there
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(4)
        port = s.getsockname()[1]
        probe_endpoint(EndpointConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m"),
                       what="answerer", timeout_s=0.2)


# --- check_endpoints on a whole config ---------------------------------------------------


def eval_config(tmp_path: Path, answerer: dict[str, object],
                judge: dict[str, object] | None = None, **extra: object) -> EvalConfig:
    text = "answerer:\n" + "".join(f"  {k}: {v}\n" for k, v in answerer.items())
    if judge:
        text += "judge:\n" + "".join(f"  {k}: {v}\n" for k, v in judge.items())
    path = tmp_path / "eval.yaml"
    path.write_text(text, encoding="utf-8")
    cfg = EvalConfig.model_validate({"answerer": answerer, "judge": judge, **extra})
    cfg.path = path
    return cfg


def test_check_endpoints_names_file_line_and_field(tmp_path: Path,
                                                   fake_server: FakeOpenAIServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGASSAY_NO_SUCH_KEY", raising=False)
    live = {"kind": "llm", "base_url": fake_server.base_url, "model": "m"}
    cfg = eval_config(tmp_path, live, {"base_url": fake_server.base_url, "model": "j",
                                       "api_key_env": "RAGASSAY_NO_SUCH_KEY"})
    with pytest.raises(InputError) as info:
        check_endpoints(cfg)
    assert info.value.field == "judge.api_key_env" and info.value.line == 8
    assert fake_server.control.request_count == 0  # keys first: no probe for a bad config
    dead = f"http://127.0.0.1:{free_port()}/v1"
    cfg = eval_config(tmp_path, live, {"base_url": dead, "model": "j"})
    with pytest.raises(InputError, match="nothing answers") as info:
        check_endpoints(cfg)
    assert info.value.field == "judge.base_url" and info.value.line == 6


def test_check_endpoints_probes_each_url_once_and_skips_unused_answerer(
        tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    live = {"kind": "llm", "base_url": fake_server.base_url, "model": "m"}
    check_endpoints(eval_config(tmp_path, live, {"base_url": fake_server.base_url,
                                                 "model": "j"}))
    assert fake_server.control.request_count == 1
    dead = {"kind": "llm", "base_url": f"http://127.0.0.1:{free_port()}/v1", "model": "m"}
    # a predictions file replaces the answerer: its endpoint is not called, not checked
    check_endpoints(eval_config(tmp_path, dead, predictions_path="p.jsonl"))
    check_endpoints(eval_config(tmp_path, {"kind": "extractive"}))
    # judge-check checks the judge only
    check_endpoints(eval_config(tmp_path, dead, {"base_url": fake_server.base_url,
                                                 "model": "j"}), sections=("judge",))
