"""The endpoint config model :class:`EndpointConfig`: where the endpoint is, how to call it."""

from __future__ import annotations

from pathlib import Path

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)

from .redact import redact_url

MAX_REPLY_BYTES = 16 * 1024 * 1024


class CallConfig(BaseModel):
    """How the one HTTP client calls a server (:class:`~ragassay.endpoint.Transport`): the
    keys an OpenAI-compatible endpoint (:class:`EndpointConfig`) and a system under test
    (:class:`ragassay.system.SystemConfig`) share, with the same meaning.

    ``timeout_s``: each attempt's limit from its request's start to the last byte of the
    reply (a total, however the server paces its bytes); ``run_timeout_s``: no call is
    started after that many seconds of the run; ``max_reply_bytes``: a longer reply is
    refused, unread (default 16 MiB); ``fail_fast_after``: stop calling after this many
    attempts in a row found no server or got no reply in time (default 3; ``null``: never
    stop). The API key is never stored here: only the *name* of the environment variable
    holding it (``api_key_env``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_key_env: str | None = None
    timeout_s: float = Field(default=300.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    concurrency: int | None = Field(default=None, ge=1)
    run_timeout_s: float | None = Field(default=None, gt=0)
    cache_dir: Path | None = None
    backoff_base_s: float = Field(default=0.5, ge=0)
    retry_after_cap_s: float = Field(default=30.0, ge=0)
    seed: int = 0
    fail_fast_after: int | None = Field(default=3, ge=1)
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, ge=1)


class EndpointConfig(CallConfig):
    """Where the endpoint is and how to call it. The API key is never stored here: only the
    *name* of the environment variable holding it (``api_key_env``).

    The defaults fit a local CPU server (llama.cpp on a laptop or a CI runner), and are the
    same for the answerer and the judge: ``timeout_s`` 300 s per attempt, counted from the
    moment the request is sent (a small model on two busy cores needs up to ~140 s for a
    ~1,600-token prompt); ``concurrency`` unset, which means what the server says it works
    on at once (llama.cpp's ``/props`` → ``total_slots``), else 1 — more parallel requests
    than the server has slots only queue on the server, where the waiting counts against
    each request's timeout.

    ``fail_fast_after``, ``max_reply_bytes`` and the other call keys: see :class:`CallConfig`.
    A ``base_url`` may carry a query string (``?api-version=…``): it is kept on every
    request. Userinfo in it (``http://user:pass@host``) is sent as Basic credentials only
    when no ``api_key_env`` is named: the key always wins.

    ``prompt_price_per_mtok`` / ``completion_price_per_mtok``: optional prices per million
    prompt / completion tokens, in whatever currency you use (ragassay never converts or
    names one). Both or neither: with them, each answer's ``usage.cost`` and the run's
    ``cost.total`` are computed; without them both are ``null`` (unknown, never 0)."""

    base_url: str = Field(min_length=1, description="e.g. http://127.0.0.1:8080/v1")
    model: str = Field(min_length=1)
    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int = Field(default=512, ge=1)
    prompt_price_per_mtok: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    completion_price_per_mtok: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _both_prices(self) -> EndpointConfig:
        if (self.prompt_price_per_mtok is None) != (self.completion_price_per_mtok is None):
            given, other = (("prompt_price_per_mtok", "completion_price_per_mtok")
                            if self.completion_price_per_mtok is None
                            else ("completion_price_per_mtok", "prompt_price_per_mtok"))
            raise ValueError(f"{given} is set but {other} is not: give both prices (0 for "
                             "tokens that are free) or neither")
        return self

    def price_of(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The price of a call with these token counts; ``None`` without prices."""
        if self.prompt_price_per_mtok is None or self.completion_price_per_mtok is None:
            return None
        return (prompt_tokens * self.prompt_price_per_mtok
                + completion_tokens * self.completion_price_per_mtok) / 1_000_000

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return value.rstrip("/")

    @field_serializer("base_url")
    def _redacted_url(self, value: str) -> str:
        # Dumps end up in run folders and reports: never with a key in them.
        return redact_url(value)
