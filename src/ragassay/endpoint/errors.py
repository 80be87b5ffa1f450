"""The errors of endpoint calls: :class:`EndpointError` and :class:`EndpointUnreachable`."""

from __future__ import annotations

from typing import Any

from .redact import redact_text


class EndpointError(Exception):
    """A request to the endpoint failed for good (after its retries), or was never made
    (run timeout). ``status`` is the last HTTP status when there was one; ``attempts`` how
    many requests were sent. URLs in the message are redacted (:func:`redact_text`): the
    message ends up in run folders."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 0) -> None:
        message = redact_text(message)
        super().__init__(message)
        self.message = message
        self.status = status
        self.attempts = attempts

    def __reduce__(self) -> tuple[Any, ...]:
        # returned by a worker process: the same error, status and attempts included
        return (_endpoint_error, (type(self), self.message, self.status, self.attempts))


def _endpoint_error(cls: type[EndpointError], message: str, status: int | None,
                    attempts: int) -> EndpointError:
    return cls(message, status=status, attempts=attempts)


class EndpointUnreachable(EndpointError):
    """The client stopped calling: ``fail_fast_after`` connection attempts in a row failed
    (see :mod:`ragassay.endpoint.client`). Every call after that raises it without a request."""
