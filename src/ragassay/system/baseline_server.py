"""The built-in baseline served over HTTP on 127.0.0.1: a system under test to try the live
form on (``ragassay serve-baseline``), in two shapes.

- ``POST /ask`` — the documented plain JSON API: ``{question_id?, question, top_k?}`` in;
  ``{answer: {text, status, citations}, retrieved: [{chunk_id, doc_id, text, page, score}],
  usage, latency_ms, system_version}`` out. Its hits carry our chunk ids, so ids win.
- ``POST /v1/chat/completions`` — an OpenAI-compatible chat endpoint: the last user message
  is the question; the reply is a chat completion whose message cites its sources as
  ``[1]``, ``[2]`` and whose ``sources`` list holds their texts only (``{text, doc_id,
  page, score}``, no chunk id): the contexts-as-text path.

Each request runs the configured pipeline (retriever and answerer) on one question, one
request at a time (the pipeline is not shared between threads). Request bodies over 1 MB
are refused (413). Nothing is written.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .. import __version__
from ..config import EvalConfig
from ..schema import Prediction, Question

MAX_REQUEST_BYTES = 1_000_000
SYSTEM_VERSION = f"ragassay-baseline/{__version__}"


class BaselineSystem:
    """The configured pipeline over its index, answering one question at a time."""

    def __init__(self, cfg: EvalConfig) -> None:
        from ..index import load_index
        from ..pipeline import Pipeline

        if cfg.index_dir is None:
            from ..errors import InputError

            raise InputError(cfg.path or "config", "serve-baseline needs an index_dir (the "
                             "baseline retrieves from it)", field="index_dir")
        self.cfg = cfg
        self.index = load_index(cfg.index_dir)
        self.pipeline = Pipeline(self.index, cfg)
        self._lock = threading.Lock()

    def predict(self, question: str, question_id: str = "q", top_k: int | None = None
                ) -> Prediction:
        k = top_k or self.cfg.pipeline.top_k
        q = Question(question_id=question_id, question=question, answerable=True)
        with self._lock:
            ranking = self.pipeline.retrieve([q], k)
            preds, errors = self.pipeline.predict_many([q], ranking, k)
        if question_id in errors:
            raise RuntimeError(errors[question_id])
        return preds[question_id]

    def hit(self, chunk_id: str, score: float | None, with_id: bool) -> dict[str, Any]:
        chunk = self.index.chunk(chunk_id)
        out = {"chunk_id": chunk_id} if with_id else {}
        return {**out, "doc_id": chunk.doc_id, "text": chunk.text,
                "page": chunk.page_span[0] if chunk.page_span else None, "score": score}

    def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        t0 = time.perf_counter()
        pred = self.predict(str(body["question"]), str(body.get("question_id") or "q"),
                            body.get("top_k") if isinstance(body.get("top_k"), int) else None)
        usage = pred.usage.model_dump(include={"prompt_tokens", "completion_tokens"}) \
            if pred.usage else None
        return {"answer": {"text": pred.answer.text, "status": pred.answer.status,
                           "citations": [c.chunk_id for c in pred.answer.citations]},
                "retrieved": [self.hit(h.chunk_id, h.score, True) for h in pred.retrieved],
                "usage": usage, "latency_ms": round((time.perf_counter() - t0) * 1000, 3),
                "system_version": SYSTEM_VERSION}

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages")
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"] \
            if isinstance(messages, list) else []
        if not users or not isinstance(users[-1].get("content"), str):
            raise ValueError("messages holds no user message with a text content")
        pred = self.predict(users[-1]["content"])
        ids = [h.chunk_id for h in pred.retrieved]
        content = pred.answer.text
        for c in pred.answer.citations:  # our ids are not the client's: cite by number
            if c.chunk_id in ids:
                mark = f"[{ids.index(c.chunk_id) + 1}]"
                content = content.replace(f"[{c.chunk_id}]", mark) if f"[{c.chunk_id}]" \
                    in content else f"{content} {mark}"
        usage = pred.usage.model_dump(include={"prompt_tokens", "completion_tokens"}) \
            if pred.usage else {"prompt_tokens": 0, "completion_tokens": 0}
        return {"id": "chatcmpl-baseline", "object": "chat.completion",
                "model": str(body.get("model") or "baseline"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant",
                                         "content": content}}],
                "usage": {**usage, "total_tokens": sum(usage.values())},
                "sources": [self.hit(h.chunk_id, h.score, False) for h in pred.retrieved],
                "system_fingerprint": SYSTEM_VERSION}


def make_server(system: BaselineSystem, port: int = 0) -> ThreadingHTTPServer:
    """The HTTP server of ``system`` on 127.0.0.1 (``port`` 0: a free one); not started."""
    routes: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "/ask": system.ask, "/v1/chat/completions": system.chat}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per run
            pass

        def _send(self, status: int, doc: dict[str, Any]) -> None:
            data = json.dumps(doc, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": "baseline",
                                                             "object": "model"}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            route = routes.get(self.path.split("?", 1)[0].rstrip("/"))
            length = int(self.headers.get("Content-Length") or 0)
            if route is None:
                self._send(404, {"error": f"no route {self.path}; POST /ask or "
                                          "/v1/chat/completions"})
                return
            if length > MAX_REQUEST_BYTES:
                self.close_connection = True
                self._send(413, {"error": "request body over 1 MB"})
                return
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(body, dict):
                    raise ValueError("the request body is not a JSON object")
                if route is system.ask and not isinstance(body.get("question"), str):
                    raise ValueError("give the question as a string")
                self._send(200, route(body))
            except (ValueError, KeyError) as exc:
                self._send(400, {"error": str(exc)})
            except Exception as exc:  # the pipeline failed: the caller sees a 500
                self._send(500, {"error": f"{type(exc).__name__}: {exc}"})

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server
