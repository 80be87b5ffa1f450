"""The ``system:`` block of a config: which system under test, how to ask it, how to read it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer, model_validator

from ..endpoint import CallConfig, redact_url


class ReplyPaths(BaseModel):
    """Where the parts of a reply are, as dotted paths into its JSON (``choices.0.message.
    content``: key ``choices``, item 0, key ``message``, key ``content``). Each default
    is the documented reply; ``contexts`` is tried as ``retrieved`` then ``contexts``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer: str = "answer"
    contexts: str | None = None  # None: "retrieved", else "contexts"
    citations: str = "citations"
    usage: str = "usage"
    latency_ms: str = "latency_ms"
    system_version: str = "system_version"
    # inside each context object: the first key present is read
    text: list[str] = Field(default_factory=lambda: ["text", "page_content", "content"])
    chunk_id: list[str] = Field(default_factory=lambda: ["chunk_id", "id"])
    doc_id: list[str] = Field(default_factory=lambda: ["doc_id", "document_id", "source"])
    page: list[str] = Field(default_factory=lambda: ["page"])
    score: list[str] = Field(default_factory=lambda: ["score"])


class SystemConfig(CallConfig):
    """A system under test: ``url`` (ragassay POSTs each question there) or ``callable``
    (``package.module:function``, imported from the working folder or an installed
    package), exactly one. The call keys (``timeout_s``, ``max_retries``, ``concurrency``,
    ``run_timeout_s``, ``cache_dir``, ``api_key_env``, ``fail_fast_after``,
    ``max_reply_bytes`` …) are those of every endpoint (:class:`CallConfig`), with a
    system's defaults: 60 s per call, 4 calls at once.

    ``request``: the JSON body to send, with ``{question_id}``, ``{question}`` and
    ``{top_k}`` replaced in its strings (a string that is only ``{top_k}`` becomes the
    number); default ``{question_id, question, top_k}``. ``reply``: where the reply's
    parts are (:class:`ReplyPaths`). ``top_k``: what the request asks for (default: the
    pipeline's ``top_k``). docs/system.md has both forms with examples."""

    url: str | None = None
    callable: str | None = None
    request: dict[str, Any] | None = None
    reply: ReplyPaths = Field(default_factory=ReplyPaths)
    top_k: int | None = Field(default=None, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)
    concurrency: int | None = Field(default=4, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        # `system: http://…` or `system: pkg.mod:fn`, as the --system flag takes it
        if isinstance(data, str):
            return {"url": data} if data.startswith(("http://", "https://")) \
                else {"callable": data}
        return data

    @model_validator(mode="after")
    def _one_target(self) -> SystemConfig:
        if (self.url is None) == (self.callable is None):
            raise ValueError("give the system's url (http://…) or its callable "
                             "(package.module:function), one of them")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {self.url!r}")
        if self.callable is not None:
            module, colon, name = self.callable.partition(":")
            if not colon or not module or not name.isidentifier():
                raise ValueError(f"callable must be package.module:function, got "
                                 f"{self.callable!r}")
        return self

    @field_serializer("url")
    def _redacted_url(self, value: str | None) -> str | None:
        return None if value is None else redact_url(value)

    @property
    def target(self) -> str:
        """The system as the run names it: the redacted URL or ``package.module:function``."""
        return redact_url(self.url) if self.url is not None else str(self.callable)
