"""The OpenAI-compatible client against a real local HTTP server (tests/openai_server.py):
retries, timeouts, malformed replies, the API key header, the cache and batches."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from openai_server import FakeOpenAIServer
from pydantic import ValidationError

from ragassay.endpoint import (
    ChatResult,
    EndpointConfig,
    EndpointError,
    OpenAICompatClient,
    backoff_delay,
    cache_key,
    map_bounded,
)

MESSAGES = [{"role": "user", "content": "[1] a::chunk-001\nThe fee is 4 euros.\n\n"
                                        "Question: What is the fee?"}]
REPLY = "The fee is 4 euros. [1]"


def make_client(server: FakeOpenAIServer, sleeps: list[float] | None = None,
                **overrides: Any) -> OpenAICompatClient:
    """A client of the fake server; waits between retries are recorded, not slept."""
    cfg = EndpointConfig(**{"base_url": server.base_url, "model": "fake-model",
                            "backoff_base_s": 0.01, **overrides})
    record = sleeps.append if sleeps is not None else (lambda s: None)
    return OpenAICompatClient(cfg, sleep=record)


# --- config ----------------------------------------------------------------------------


def test_config_refuses_unknown_keys_and_non_http_urls() -> None:
    with pytest.raises(ValidationError, match="api_key"):
        EndpointConfig(base_url="http://127.0.0.1:1/v1", model="m", api_key="sk-secret")
    with pytest.raises(ValidationError, match="http"):
        EndpointConfig(base_url="127.0.0.1:8080/v1", model="m")
    assert EndpointConfig(base_url="http://h:1/v1/", model="m").base_url == "http://h:1/v1"


def test_construction_makes_no_request(fake_server: FakeOpenAIServer) -> None:
    OpenAICompatClient(EndpointConfig(base_url=fake_server.base_url, model="m"))
    assert fake_server.control.request_count == 0


# --- a plain call ------------------------------------------------------------------------


def test_chat_returns_text_usage_and_model(fake_server: FakeOpenAIServer) -> None:
    result = make_client(fake_server).chat(MESSAGES)
    assert result == ChatResult(text=REPLY, usage={"prompt_tokens": 12, "completion_tokens": 6},
                                cached=False, raw_model="fake-model")
    # what was sent: the config's model, temperature and max_tokens with the messages
    assert fake_server.control.last_body == {"model": "fake-model", "messages": MESSAGES,
                                             "temperature": 0.0, "max_tokens": 512}
    assert fake_server.control.requests[-1].path == "/v1/chat/completions"


def test_chat_params_extend_the_request(fake_server: FakeOpenAIServer) -> None:
    make_client(fake_server).chat(MESSAGES, temperature=0.7, stop=["\n"])
    body = fake_server.control.last_body
    assert body["temperature"] == 0.7 and body["stop"] == ["\n"]


def test_usage_is_none_when_the_server_reports_none(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(1, no_usage=True)
    assert make_client(fake_server).chat(MESSAGES).usage is None


# --- retries -----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retryable_status_is_retried_then_succeeds(fake_server: FakeOpenAIServer,
                                                   status: int) -> None:
    sleeps: list[float] = []
    fake_server.control.fail_next(2, status=status)
    result = make_client(fake_server, sleeps, max_retries=3).chat(MESSAGES)
    assert result.text == REPLY
    assert fake_server.control.request_count == 3  # 2 failures + 1 success
    assert len(sleeps) == 2


def test_backoff_doubles_with_a_small_deterministic_jitter(fake_server: FakeOpenAIServer
                                                           ) -> None:
    sleeps: list[float] = []
    fake_server.control.fail_next(3, status=500)
    make_client(fake_server, sleeps, max_retries=3).chat(MESSAGES)
    # wait i = 0.01 * 2**i * (1 + j_i), 0 <= j_i < 0.25
    for i, wait in enumerate(sleeps):
        assert 0.01 * 2**i <= wait < 0.01 * 2**i * 1.25
    key = cache_key({"kind": "chat", "endpoint": fake_server.base_url, "served_model": None,
                     "model": "fake-model", "messages": MESSAGES, "temperature": 0.0,
                     "max_tokens": 512})
    assert sleeps == [backoff_delay(0.01, i, 0, key) for i in range(3)]


def test_retry_after_is_honoured_and_capped(fake_server: FakeOpenAIServer) -> None:
    sleeps: list[float] = []
    fake_server.control.fail_next(1, status=429, retry_after="2")
    fake_server.control.fail_next(1, status=429, retry_after="120")
    make_client(fake_server, sleeps, retry_after_cap_s=5).chat(MESSAGES)
    assert sleeps == [2.0, 5.0]  # as asked, then capped at retry_after_cap_s


def test_gives_up_after_max_retries(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(5, status=500)
    with pytest.raises(EndpointError, match=r"HTTP 500 .*gave up after 3 attempts") as err:
        make_client(fake_server, max_retries=2).chat(MESSAGES)
    assert err.value.status == 500 and err.value.attempts == 3
    assert fake_server.control.request_count == 3


@pytest.mark.parametrize("status", [400, 401, 404])
def test_other_client_errors_are_not_retried(fake_server: FakeOpenAIServer,
                                             status: int) -> None:
    fake_server.control.fail_next(1, status=status)
    with pytest.raises(EndpointError, match=f"HTTP {status} .*not retried"):
        make_client(fake_server, max_retries=3).chat(MESSAGES)
    assert fake_server.control.request_count == 1


def test_timeout_is_retried_then_an_error(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(2, delay_s=1.0)
    with pytest.raises(EndpointError, match=r"no reply .* within 0.1 s .*2 attempts"):
        make_client(fake_server, timeout_s=0.1, max_retries=1).chat(MESSAGES)
    assert fake_server.control.request_count == 2


def test_slow_reply_then_success(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(1, delay_s=1.0)
    assert make_client(fake_server, timeout_s=0.1).chat(MESSAGES).text == REPLY


def test_connection_refused_is_an_error_after_retries() -> None:
    # a port nobody listens on: bind one, note it, close it
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    cfg = EndpointConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=2,
                         backoff_base_s=0.01)
    with pytest.raises(EndpointError, match="cannot reach .*3 attempts"):
        OpenAICompatClient(cfg, sleep=sleeps.append).chat(MESSAGES)
    assert len(sleeps) == 2


@pytest.mark.parametrize("kind", ["not_json", "no_choices", "no_content"])
def test_malformed_reply_is_retried_once_then_an_error(fake_server: FakeOpenAIServer,
                                                       kind: str) -> None:
    fake_server.control.fail_next(5, malformed=kind)
    with pytest.raises(EndpointError, match="malformed reply"):
        make_client(fake_server, max_retries=3).chat(MESSAGES)
    assert fake_server.control.request_count == 2  # once retried, not max_retries times


def test_one_malformed_reply_then_success(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.fail_next(1, malformed="no_choices")
    assert make_client(fake_server).chat(MESSAGES).text == REPLY


# --- the API key -------------------------------------------------------------------------


def test_api_key_env_is_sent_as_a_bearer_header(fake_server: FakeOpenAIServer,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGASSAY_TEST_KEY", "sk-test-123")
    make_client(fake_server, api_key_env="RAGASSAY_TEST_KEY").chat(MESSAGES)
    assert fake_server.control.last_headers["Authorization"] == "Bearer sk-test-123"


def test_no_key_no_authorization_header(fake_server: FakeOpenAIServer) -> None:
    make_client(fake_server).chat(MESSAGES)
    assert "Authorization" not in fake_server.control.last_headers


def test_missing_key_variable_is_a_clear_error_before_any_request(
        fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGASSAY_NO_SUCH_KEY", raising=False)
    with pytest.raises(EndpointError, match="'RAGASSAY_NO_SUCH_KEY'.*not set.*export"):
        make_client(fake_server, api_key_env="RAGASSAY_NO_SUCH_KEY")
    assert fake_server.control.request_count == 0


# --- cache -------------------------------------------------------------------------------


def test_cache_hit_makes_no_request_and_gives_the_same_reply(fake_server: FakeOpenAIServer,
                                                             tmp_path: Path) -> None:
    first = make_client(fake_server, cache_dir=tmp_path).chat(MESSAGES)
    assert fake_server.control.post_count == 1
    again = make_client(fake_server, cache_dir=tmp_path).chat(MESSAGES)  # a new run
    assert fake_server.control.post_count == 1
    # each run's client asked once what model the server serves: GET /v1/models
    assert [r.path for r in fake_server.control.requests if r.method == "GET"] == \
        ["/v1/models", "/v1/models"]
    assert again.cached and not first.cached
    assert (again.text, again.usage, again.raw_model) == (first.text, first.usage,
                                                          first.raw_model)


def test_cache_key_changes_with_every_param(tmp_path: Path) -> None:
    payload = {"kind": "chat", "model": "m", "messages": MESSAGES, "temperature": 0.0,
               "max_tokens": 512}
    assert cache_key(payload) != cache_key({**payload, "temperature": 0.5})
    assert cache_key(payload) != cache_key({**payload, "max_tokens": 64})
    assert cache_key(payload) != cache_key({**payload, "model": "other"})
    # key order does not matter: canonical JSON
    assert cache_key(dict(reversed(list(payload.items())))) == cache_key(payload)


def test_the_cache_key_holds_the_endpoint(fake_server: FakeOpenAIServer,
                                          tmp_path: Path) -> None:
    make_client(fake_server, cache_dir=tmp_path).chat(MESSAGES)
    # the same model name and request at another address (here: the same server under
    # another name) is another endpoint: asked again, not served from the cache
    other = fake_server.base_url.replace("127.0.0.1", "localhost")
    again = OpenAICompatClient(EndpointConfig(base_url=other, model="fake-model",
                                              cache_dir=tmp_path)).chat(MESSAGES)
    assert not again.cached and fake_server.control.post_count == 2


def test_a_model_swap_behind_the_same_name_is_never_served_from_the_cache(
        fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    # llama.cpp answers to any model name ("local") with the file it was started with
    make_client(fake_server, cache_dir=tmp_path, model="local").chat(MESSAGES)
    assert make_client(fake_server, cache_dir=tmp_path, model="local").chat(MESSAGES).cached
    fake_server.control.model_id = "/models/other.gguf"  # the server restarted with it
    swapped = make_client(fake_server, cache_dir=tmp_path, model="local").chat(MESSAGES)
    assert not swapped.cached and fake_server.control.post_count == 2
    fake_server.control.model_id = "/models/other.gguf"
    fake_server.control.model_meta = {"n_params": 135_000_000}  # same path, other file
    assert not make_client(fake_server, cache_dir=tmp_path, model="local").chat(MESSAGES).cached
    assert fake_server.control.post_count == 3
    assert len(list(tmp_path.glob("*.json"))) == 3


def test_the_models_request_time_is_not_part_of_the_key(fake_server: FakeOpenAIServer,
                                                        tmp_path: Path) -> None:
    # GET /v1/models reports a new "created" time on every request (as llama.cpp does)
    make_client(fake_server, cache_dir=tmp_path).chat(MESSAGES)
    assert make_client(fake_server, cache_dir=tmp_path).chat(MESSAGES).cached


def test_a_server_without_models_route_still_caches(fake_server: FakeOpenAIServer,
                                                    tmp_path: Path) -> None:
    base = fake_server.base_url + "/elsewhere"  # every GET is a 404 there, POSTs too
    client = OpenAICompatClient(EndpointConfig(base_url=base, model="m", cache_dir=tmp_path))
    assert client.server_model is None
    assert fake_server.control.request_count == 1
    assert client.server_model is None and fake_server.control.request_count == 1  # once


def test_the_models_route_is_not_asked_without_a_cache(fake_server: FakeOpenAIServer) -> None:
    make_client(fake_server).chat(MESSAGES)
    assert [r.method for r in fake_server.control.requests] == ["POST"]


def test_cache_entries_are_whole_json_files_only(fake_server: FakeOpenAIServer,
                                                 tmp_path: Path) -> None:
    client = make_client(fake_server, cache_dir=tmp_path)
    for q in ("fee", "price", "cost"):
        client.chat([{"role": "user", "content": q}])
    files = sorted(tmp_path.iterdir())
    assert len(files) == 3 and all(f.suffix == ".json" for f in files)  # no temp file left
    for f in files:
        entry = json.loads(f.read_text(encoding="utf-8"))
        assert set(entry) == {"endpoint", "served_model", "request", "text", "usage",
                              "raw_model"}
        assert entry["endpoint"] == fake_server.base_url
        assert entry["served_model"] == [{"id": "fake-model", "object": "model",
                                          "owned_by": "fake", "meta": {}}]


def test_a_broken_cache_entry_is_asked_again_and_replaced(fake_server: FakeOpenAIServer,
                                                          tmp_path: Path) -> None:
    client = make_client(fake_server, cache_dir=tmp_path)
    client.chat(MESSAGES)
    (entry,) = tmp_path.iterdir()
    entry.write_text('{"text": ', encoding="utf-8")  # as if cut off by hand
    assert client.chat(MESSAGES).cached is False
    assert fake_server.control.post_count == 2
    assert client.chat(MESSAGES).cached is True


def test_errors_are_not_cached(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_server.control.fail_next(1, status=400)
    client = make_client(fake_server, cache_dir=tmp_path)
    with pytest.raises(EndpointError):
        client.chat(MESSAGES)
    assert list(tmp_path.iterdir()) == []
    assert client.chat(MESSAGES).text == REPLY


# --- embeddings --------------------------------------------------------------------------


def test_embed_returns_rows_in_input_order(fake_server: FakeOpenAIServer) -> None:
    client = make_client(fake_server)
    fake_server.control.reverse_embeddings = True  # rows come back by "index", reversed
    vectors = client.embed(["alpha", "beta"])
    assert vectors.shape == (2, 64)
    fake_server.control.reverse_embeddings = False
    assert (client.embed(["beta"])[0] == vectors[1]).all()
    assert fake_server.control.last_body == {"model": "fake-model", "input": ["beta"]}


def test_embed_of_nothing_makes_no_request(fake_server: FakeOpenAIServer) -> None:
    assert make_client(fake_server).embed([]).shape == (0, 0)
    assert fake_server.control.request_count == 0


# --- batches -----------------------------------------------------------------------------


def test_map_bounded_keeps_input_order_and_never_exceeds_the_concurrency() -> None:
    running = 0
    peak = 0
    lock = threading.Lock()
    release = threading.Barrier(3)  # the first 3 items wait for each other: all 3 at once

    def work(i: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        if i < 3:
            release.wait(timeout=5)
        with lock:
            running -= 1
        return i * i

    assert map_bounded(work, list(range(10)), concurrency=3) == [i * i for i in range(10)]
    assert peak == 3


def test_map_bounded_turns_each_failure_into_a_value() -> None:
    def work(i: int) -> int:
        if i == 1:
            raise EndpointError("endpoint down")
        if i == 2:
            raise ValueError("bad item")
        return i

    out = map_bounded(work, [0, 1, 2, 3], concurrency=2)
    assert out[0] == 0 and out[3] == 3
    assert isinstance(out[1], EndpointError) and str(out[1]) == "endpoint down"
    assert isinstance(out[2], EndpointError) and str(out[2]) == "ValueError: bad item"
    assert isinstance(out[2].__cause__, ValueError)


def test_map_bounded_starts_nothing_after_the_deadline() -> None:
    # A clock that moves 1 s per item started; deadline at t=2 → items 0 and 1 run.
    now = [0.0]
    started: list[int] = []

    def work(i: int) -> int:
        started.append(i)
        now[0] += 1.0
        return i

    out = map_bounded(work, [0, 1, 2, 3], concurrency=1, deadline=2.0, clock=lambda: now[0])
    assert out[:2] == [0, 1] and started == [0, 1]
    assert all(isinstance(e, EndpointError) and "run timeout" in str(e) for e in out[2:])


def test_map_bounded_with_a_past_deadline_calls_nothing(fake_server: FakeOpenAIServer
                                                        ) -> None:
    client = make_client(fake_server)
    out = map_bounded(client.chat, [MESSAGES] * 3, concurrency=2, deadline=0.0)
    assert all(isinstance(e, EndpointError) for e in out)
    assert fake_server.control.request_count == 0


def test_map_bounded_over_http_is_ordered(fake_server: FakeOpenAIServer) -> None:
    client = make_client(fake_server, concurrency=4)
    prompts = [[{"role": "user", "content": f"[1] c{i}\nItem {i} costs {i} euros.\n\n"
                                           f"Question: What does item {i} cost?"}]
               for i in range(8)]
    fake_server.control.cite = "id"
    out = map_bounded(client.chat, prompts, concurrency=4)
    assert [r.text for r in out] == [f"Item {i} costs {i} euros. [c{i}]" for i in range(8)]


# --- concurrency and timeouts --------------------------------------------------------------


def test_concurrency_defaults_to_the_servers_slots(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.total_slots = 3  # llama.cpp started with --parallel 3
    client = make_client(fake_server)
    assert client.concurrency == 3 and client.concurrency == 3
    assert [r.path for r in fake_server.control.requests] == ["/props"]  # asked once


def test_concurrency_is_1_when_the_server_does_not_say(fake_server: FakeOpenAIServer) -> None:
    assert make_client(fake_server).concurrency == 1  # /props is a 404 (vLLM, Ollama)
    # where /props is looked for: beside /v1, then under the base URL
    assert [r.path for r in fake_server.control.requests] == ["/props", "/v1/props"]


def test_a_configured_concurrency_asks_nothing(fake_server: FakeOpenAIServer) -> None:
    fake_server.control.total_slots = 3
    assert make_client(fake_server, concurrency=2).concurrency == 2
    assert fake_server.control.request_count == 0


def test_the_timeout_counts_from_the_request_not_the_wait_for_a_connection(
        fake_server: FakeOpenAIServer) -> None:
    # One connection, three threads: the third request waits 2 x 0.6 s for the connection,
    # longer than the 1 s timeout, but each request takes 0.6 s once it is sent.
    client = make_client(fake_server, concurrency=1, timeout_s=1.0, max_retries=0)
    fake_server.control.fail_next(3, delay_s=0.6)
    out = map_bounded(client.chat, [MESSAGES] * 3, concurrency=3)
    assert [r.text if isinstance(r, ChatResult) else str(r) for r in out] == [REPLY] * 3
    assert fake_server.control.post_count == 3


def test_defaults_fit_a_cpu_server() -> None:
    cfg = EndpointConfig(base_url="http://127.0.0.1:1/v1", model="m")
    assert (cfg.timeout_s, cfg.concurrency) == (300.0, None)


def test_the_judge_block_has_the_answerers_defaults(tmp_path: Path) -> None:
    from ragassay.config import EvalConfig

    cfg = EvalConfig.model_validate({
        "answerer": {"kind": "llm", "base_url": "http://127.0.0.1:1/v1", "model": "local"},
        "judge": {"base_url": "http://127.0.0.1:1/v1", "model": "local"}})
    assert cfg.judge is not None
    answerer = cfg.answerer.endpoint()
    assert (cfg.judge.timeout_s, cfg.judge.concurrency, cfg.judge.max_retries) == \
        (answerer.timeout_s, answerer.concurrency, answerer.max_retries) == (300.0, None, 3)


def test_map_bounded_refuses_zero_concurrency() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        map_bounded(lambda x: x, [1], concurrency=0)


# --- fail fast: the endpoint went away --------------------------------------------------


def _dead_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_client_stops_after_connection_failures_in_a_row() -> None:
    from ragassay.endpoint import EndpointUnreachable

    url = _dead_url()
    cfg = EndpointConfig(base_url=url, model="m", max_retries=5, fail_fast_after=2,
                         backoff_base_s=0.01)
    sleeps: list[float] = []
    client = OpenAICompatClient(cfg, sleep=sleeps.append)
    with pytest.raises(EndpointUnreachable, match="connection refused at .*stopped after 2 "
                                                   ".*gave up after 2 attempts"):
        client.chat(MESSAGES)
    assert len(sleeps) == 1  # not the 5 retries
    assert client.unreachable is not None and url in client.unreachable
    # Every later call fails at once, without a request (and without a wait).
    with pytest.raises(EndpointUnreachable, match="this call was not made"):
        client.chat(MESSAGES)
    assert len(sleeps) == 1


def test_a_reply_resets_the_connection_failure_count(fake_server: FakeOpenAIServer) -> None:
    client = make_client(fake_server, fail_fast_after=2)
    client._connection_failed("connection refused")  # one failure, then a reply
    assert client.chat(MESSAGES).text == REPLY
    client._connection_failed("connection refused")
    assert client.unreachable is None
    assert client.chat(MESSAGES).text == REPLY


def test_fail_fast_can_be_turned_off() -> None:
    cfg = EndpointConfig(base_url=_dead_url(), model="m", max_retries=4, fail_fast_after=None,
                         backoff_base_s=0.01)
    sleeps: list[float] = []
    client = OpenAICompatClient(cfg, sleep=sleeps.append)
    with pytest.raises(EndpointError, match="5 attempts"):
        client.chat(MESSAGES)
    assert len(sleeps) == 4 and client.unreachable is None


def test_stopping_wakes_calls_waiting_to_retry() -> None:
    import time

    cfg = EndpointConfig(base_url=_dead_url(), model="m", max_retries=3, fail_fast_after=3,
                         backoff_base_s=5.0)  # a retry would wait 5 s and more
    client = OpenAICompatClient(cfg)  # the default, interruptible wait
    t0 = time.perf_counter()
    results = map_bounded(lambda _: client.chat(MESSAGES), range(8), 4)
    assert time.perf_counter() - t0 < 4
    assert all(isinstance(r, EndpointError) for r in results)
    assert all("endpoint unreachable" in str(r) for r in results)
