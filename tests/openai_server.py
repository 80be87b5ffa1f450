"""A real, local OpenAI-compatible HTTP server with a deterministic fake model, for tests.

It binds to 127.0.0.1 on a free port and serves, from a daemon thread:

- ``POST /v1/chat/completions`` — the fake model (see :func:`fake_reply`), with ``usage``;
- ``POST /v1/embeddings`` — character-trigram count vectors hashed into 64 dimensions
  (deliberately *not* normalised, so that clients' normalisation can be tested);
- ``GET /v1/models`` — one model, ``ServerControl.model_id`` with ``model_meta`` (change
  them to swap the model behind the same address), and a ``created`` time that changes;
- ``GET /props`` — llama.cpp's, ``{"total_slots": n}`` when ``ServerControl.total_slots``
  is set, else 404 (like vLLM or Ollama).

:class:`ServerControl` scripts the next requests (an HTTP status with ``Retry-After``, a
delay, a malformed body, a reply without ``usage``) and records every request, so tests
can assert retries, caching and the exact prompt sent.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake-model"
EMBED_DIM = 64
JUDGE_MARKER = "Does this claim follow from these sources?"
DEFAULT_DECLINE = "I don't know."

_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SOURCE_HEADER = re.compile(r"^\[(\d+)\] (\S+)(?: \(page \d+\))?$")
_DECLINE_LINE = re.compile(r"reply exactly:\s*(.+?)\s*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")
# Words too common to count as "shared" between a question and a source.
_STOP = frozenset(
    "the a an is are was of to in on at for by with and or what which who how when where why "
    "does do did it its this that be can der die das ist sind und oder was wie wer wann wo "
    "ein eine mit für von zu im".split()
)


# --- the fake model --------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if w not in _STOP]


def parse_sources(prompt: str) -> tuple[list[tuple[str, str, str]], str]:
    """``([(number, chunk_id, text), ...], question)`` from a prompt in ``build_prompt``
    format: a ``[n] chunk_id`` (optionally `` (page N)``) header line, the text up to a
    blank line, and a ``Question: ...`` line."""
    sources: list[tuple[str, str, str]] = []
    question = ""
    current: tuple[str, str] | None = None
    lines: list[str] = []
    for line in prompt.splitlines():
        header = _SOURCE_HEADER.match(line.strip())
        if line.startswith("Question:"):
            question = line[len("Question:"):].strip()
        elif header:
            if current is not None:
                sources.append((*current, "\n".join(lines).strip()))
            current, lines = (header.group(1), header.group(2)), []
        elif current is not None:
            if line.strip():
                lines.append(line)
            else:
                sources.append((*current, "\n".join(lines).strip()))
                current, lines = None, []
    if current is not None:
        sources.append((*current, "\n".join(lines).strip()))
    return sources, question


def answer_reply(messages: list[dict[str, Any]], cite: str = "number") -> str:
    """The first sentence of the source sharing the most words with the question, then a
    citation of it (ties → the earlier source): `` [n]`` (its number; ``cite="number"``,
    as real models do), `` [doc::chunk-001]`` (``"id"``) or `` [chunk-001]``
    (``"short"``); the decline phrase when no source shares a word."""
    prompt = _last_user(messages)
    sources, question = parse_sources(prompt)
    q_words = set(_words(question))
    best: tuple[int, str, str, str] | None = None
    for number, chunk_id, text in sources:
        shared = len(q_words & set(_words(text)))
        if shared and (best is None or shared > best[0]):
            best = (shared, number, chunk_id, text)
    if best is None:
        return _decline_phrase(messages)
    first = _SENTENCE_END.split(best[3].strip(), maxsplit=1)[0]
    label = {"number": best[1], "id": best[2], "short": best[2].rpartition("::")[2]}[cite]
    return f"{first} [{label}]"


def _claim_word_found(word: str, haystack: str) -> bool:
    # A crude stem: Korean particles and German endings hang on the end of a word.
    return word in haystack or (len(word) >= 3 and word[:-1] in haystack)


def judge_reply(prompt: str) -> str:
    """``yes`` when every number of the claim occurs in the sources and more than half of
    the words of the claim and of its question (when the prompt has one) do (a word also
    matches without its last letter), else ``no`` — so a bare ``68`` is ``no`` alone and
    can be ``yes`` as the answer to its question."""
    claim = ""
    question = ""
    sources: list[str] = []
    section = ""
    for line in prompt.splitlines():
        if line.startswith("Sources:"):
            section = "sources"
        elif line.startswith("Question:"):
            question, section = line[len("Question:"):].strip(), "question"
        elif line.startswith("Claim:"):
            claim, section = line[len("Claim:"):].strip(), "claim"
        elif section == "sources" and line.strip():
            sources.append(re.sub(r"^\[\d+\]\s*", "", line.strip()))
    haystack = " ".join(sources).casefold()
    source_numbers = set(_NUMBER.findall(haystack))
    if any(n not in source_numbers for n in _NUMBER.findall(claim)):
        return "no"
    words = [w for w in _words(f"{claim} {question}") if not w.isdigit()]
    found = sum(_claim_word_found(w, haystack) for w in words)
    return "yes" if words and found * 2 > len(words) else "no"


def _last_user(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def _decline_phrase(messages: list[dict[str, Any]]) -> str:
    for message in messages:
        m = _DECLINE_LINE.search(str(message.get("content", "")))
        if m:
            return m.group(1)
    return DEFAULT_DECLINE


def fake_reply(messages: list[dict[str, Any]], cite: str = "number") -> str:
    """The fake model: a judge verdict for a judge prompt, else an answer citing ``cite``
    style (see :func:`answer_reply`)."""
    # a judge retry ends with the validation error: the claim is in the first user message
    asked = [str(m.get("content", "")) for m in messages if m.get("role") == "user"
             and JUDGE_MARKER in str(m.get("content", ""))]
    return judge_reply(asked[0]) if asked else answer_reply(messages, cite)


def fake_embedding(text: str) -> list[float]:
    """Counts of the text's character trigrams (casefolded, space-padded), hashed with
    blake2b into :data:`EMBED_DIM` buckets. Not normalised."""
    padded = f" {text.casefold()} "
    vec = [0.0] * EMBED_DIM
    for i in range(len(padded) - 2):
        digest = hashlib.blake2b(padded[i:i + 3].encode(), digest_size=4).digest()
        vec[int.from_bytes(digest, "little") % EMBED_DIM] += 1.0
    return vec


# --- scripted failures and the request log ---------------------------------------------


@dataclass
class Scripted:
    """What to do to one upcoming request instead of answering it normally."""

    status: int | None = None         # answer with this HTTP status (and an error body)
    retry_after: str | None = None    # Retry-After header sent with ``status``
    delay_s: float = 0.0              # wait this long before answering (to cause timeouts)
    malformed: str | None = None      # "not_json" | "no_choices" | "no_content"
    no_usage: bool = False            # answer normally but leave out ``usage``
    usage: dict[str, Any] | None = None  # answer normally with this ``usage`` object
    reply: str | None = None          # answer with this text (a recorded real reply)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ServerControl:
    """Scripts the next requests and records every request the server received."""

    requests: list[Request] = field(default_factory=list)
    _script: deque[Scripted] = field(default_factory=deque)
    no_usage: bool = False  # leave ``usage`` out of every reply until reset
    reverse_embeddings: bool = False  # send embedding rows in reverse order (with index)
    cite: str = "number"  # how the fake model cites: "number", "id" or "short"
    model_id: str = MODEL  # the model GET /v1/models reports …
    model_meta: dict[str, Any] = field(default_factory=dict)  # … and its "meta"
    total_slots: int | None = None  # GET /props → total_slots; None: no such route (404)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, n: int = 1, **what: Any) -> None:
        """Apply ``Scripted(**what)`` to each of the next ``n`` POST requests."""
        with self._lock:
            self._script.extend(Scripted(**what) for _ in range(n))

    def reset(self) -> None:
        """Forget the script, the request log and every flag."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.no_usage = False
            self.reverse_embeddings = False
            self.cite = "number"
            self.model_id = MODEL
            self.model_meta = {}
            self.total_slots = None

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def post_count(self) -> int:
        """Requests that ask the model (POST): not the GETs that ask about the server."""
        with self._lock:
            return sum(r.method == "POST" for r in self.requests)

    @property
    def last_body(self) -> Any:
        with self._lock:
            return self.requests[-1].body if self.requests else None

    @property
    def last_headers(self) -> dict[str, str]:
        with self._lock:
            return dict(self.requests[-1].headers) if self.requests else {}

    def _record(self, request: Request) -> Scripted:
        with self._lock:
            self.requests.append(request)
            if request.method == "POST" and self._script:
                return self._script.popleft()
            return Scripted(no_usage=self.no_usage)


# --- HTTP ------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        self.server.control._record(Request("GET", self.path, dict(self.headers), None))
        control = self.server.control
        path = self.path.rstrip("/")
        if path == "/v1/models":
            entry = {"id": control.model_id, "object": "model", "created": time.time_ns(),
                     "owned_by": "fake", "meta": control.model_meta}
            self._send(200, {"object": "list", "data": [entry]})
        elif path == "/props" and control.total_slots is not None:
            self._send(200, {"total_slots": control.total_slots})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        script = self.server.control._record(Request("POST", self.path, dict(self.headers),
                                                     body))
        if script.delay_s:
            time.sleep(script.delay_s)
        if script.status is not None:
            headers = {"Retry-After": script.retry_after} if script.retry_after else {}
            self._send(script.status, {"error": {"message": f"scripted {script.status}"}},
                       headers)
            return
        if not isinstance(body, dict):
            self._send(400, {"error": {"message": "body is not a JSON object"}})
            return
        path = self.path.rstrip("/")
        if path == "/v1/chat/completions":
            self._chat(body, script)
        elif path == "/v1/embeddings":
            self._embeddings(body, script)
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _chat(self, body: dict[str, Any], script: Scripted) -> None:
        if script.malformed == "not_json":
            self._send_raw(200, b"<html>upstream error</html>", "text/html")
            return
        if script.malformed == "no_choices":
            self._send(200, {"id": "x", "object": "chat.completion"})
            return
        messages = body.get("messages")
        if not isinstance(messages, list):
            self._send(400, {"error": {"message": "messages must be a list"}})
            return
        text = (script.reply if script.reply is not None
                else fake_reply(messages, self.server.control.cite))
        if script.reply is None and isinstance(body.get("response_format"), dict) \
                and any(JUDGE_MARKER in str(m.get("content", "")) for m in messages):
            # a judge request with a JSON schema: the yes/no verdict as the schema's JSON
            text = json.dumps({"verdict": "entailed" if text == "yes" else "unsupported",
                               "evidence": ""})
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if script.malformed == "no_content":
            message = {"role": "assistant"}
        reply: dict[str, Any] = {
            "id": "chatcmpl-fake", "object": "chat.completion", "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
        if not script.no_usage:
            prompt_words = sum(len(str(m.get("content", "")).split()) for m in messages)
            reply["usage"] = {"prompt_tokens": prompt_words,
                              "completion_tokens": len(text.split()),
                              "total_tokens": prompt_words + len(text.split())}
            if script.usage is not None:
                reply["usage"] = script.usage
        self._send(200, reply)

    def _embeddings(self, body: dict[str, Any], script: Scripted) -> None:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            self._send(400, {"error": {"message": "input must be a string or a list"}})
            return
        if script.malformed:
            self._send(200, {"object": "list", "data": [{"index": 0}]})
            return
        rows = [{"object": "embedding", "index": i, "embedding": fake_embedding(t)}
                for i, t in enumerate(inputs)]
        if self.server.control.reverse_embeddings:
            rows.reverse()
        n_chars = sum(len(t) for t in inputs)
        self._send(200, {"object": "list", "model": MODEL, "data": rows,
                         "usage": {"prompt_tokens": n_chars, "total_tokens": n_chars}})

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(self, status: int, data: bytes, content_type: str,
                  headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test): nothing to answer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    control: ServerControl


class FakeOpenAIServer:
    """The server in a daemon thread: ``start()``, ``base_url`` (``http://127.0.0.1:P/v1``),
    ``control`` (:class:`ServerControl`), ``stop()``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._httpd = _Server((host, port), _Handler)
        self._httpd.control = ServerControl()
        self._thread: threading.Thread | None = None

    @property
    def control(self) -> ServerControl:
        return self._httpd.control

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name="fake-openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
