"""Exceptions of the client. A non-2xx answer raises a subclass of ``CodeModeApiError`` chosen by
its HTTP status; it carries the service's ``{error, code, details}`` as they were sent."""

from __future__ import annotations

import json
from typing import Any

import httpx


class CodeModeError(Exception):
    """Every exception this client raises."""


class CodeModeApiError(CodeModeError):
    """The service answered with a non-2xx status.

    ``error`` is the service's message (exact, as SPEC words it), ``code`` its machine code
    (``invalid_input``, ``not_found``, ``tenant_limit`` …; ``http_error`` when the body was not the
    service's JSON), ``retry_after`` the seconds of a ``Retry-After`` header (429, 503), and
    ``request_id`` the ``X-Request-Id`` the service logged the request under.
    """

    def __init__(
        self,
        status: int,
        error: str,
        code: str,
        details: Any = None,
        retry_after: float | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(f"HTTP {status} {code}: {error}")
        self.status = status
        self.error = error
        self.code = code
        self.details = details
        self.retry_after = retry_after
        self.request_id = request_id


class BadRequestError(CodeModeApiError):
    """400: the request was refused as invalid (``invalid_input``)."""


class AuthenticationError(CodeModeApiError):
    """401: no key, or a key the deployment does not know."""


class PermissionDeniedError(CodeModeApiError):
    """403: the key's role may not do this (e.g. an agent key on an operator route)."""


class NotFoundError(CodeModeApiError):
    """404: no such session, run, node, skill or approval for this tenant."""


class ConflictError(CodeModeApiError):
    """409: the state changed under the request (e.g. aborting a run that already ended)."""


class PayloadTooLargeError(CodeModeApiError):
    """413: a body or a stored total over its limit."""


class RateLimitError(CodeModeApiError):
    """429: a tenant limit; wait ``retry_after`` seconds before trying again."""


class ServiceUnavailableError(CodeModeApiError):
    """503: the service cannot serve this now (Redis unreachable, draining); see ``retry_after``."""


class InternalServerError(CodeModeApiError):
    """500 and any other 5xx."""


class CodeModeConnectionError(CodeModeError):
    """No HTTP answer at all: connection refused, DNS failure, reset, timeout."""

    def __init__(self, base_url: str, reason: str) -> None:
        super().__init__(f"cannot reach the Code Mode API at {base_url}: {reason}")
        self.base_url = base_url
        self.reason = reason


class CodeModeStreamError(CodeModeError):
    """An event stream answered with something other than server-sent events."""


_BY_STATUS: dict[int, type[CodeModeApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def api_error_from(response: httpx.Response, body_text: str) -> CodeModeApiError:
    """The exception for a non-2xx answer whose body has been read as ``body_text``."""
    error, code, details = body_text, "http_error", None
    try:
        body = json.loads(body_text)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str) and isinstance(body.get("code"), str):
        error, code, details = body["error"], body["code"], body.get("details")
    status = response.status_code
    kind = _BY_STATUS.get(status, InternalServerError if status >= 500 else CodeModeApiError)
    return kind(status, error, code, details, _retry_after(response), response.headers.get("x-request-id"))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        # An HTTP date is allowed by RFC 9110; this service sends seconds, so a date is not parsed.
        return None
