"""What the sync and the async client share around sending: headers, the reading of answers into
models or typed exceptions, and the checks of an event stream."""

from __future__ import annotations

from typing import Any

import httpx

from . import __version__
from .calls import Call
from .errors import CodeModeConnectionError, CodeModeStreamError, api_error_from
from .models.components import parse_answer

#: Default seconds for a request: a cell may run for its session's timeoutMs (at most 60 s) first.
DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=10.0)
#: Pause before reopening an event stream the server closed (it was restarting or draining).
RECONNECT_SECONDS = 0.5
#: An event stream has no read deadline: the server sends `: ping` heartbeats while it is idle.
STREAM_TIMEOUT = httpx.Timeout(None, connect=10.0)


def default_headers(api_key: str | None) -> dict[str, str]:
    headers = {"User-Agent": f"codemode-client-python/{__version__}"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def request_args(call: Call) -> dict[str, Any]:
    return {
        "method": call.route.method,
        "url": call.path,
        "params": call.query,
        "json": call.body,
        "headers": call.headers,
    }


def read_answer(call: Call, response: httpx.Response) -> Any:
    """The answer's model, or the typed exception of a non-2xx status."""
    if not response.is_success:
        raise api_error_from(response, response.text)
    assert call.route.response is not None, f"{call.route.operation_id} answers a stream"
    return parse_answer(call.route.response, response.json())


def check_stream(base_url: str, response: httpx.Response) -> None:
    """Raises unless ``response`` (whose body has been read when it is an error) is an event stream."""
    if not response.is_success:
        raise api_error_from(response, response.text)
    content_type = response.headers.get("content-type", "")
    if "text/event-stream" not in content_type:
        raise CodeModeStreamError(f"expected an event stream from {base_url}, got {content_type or 'no content type'}.")


def connection_error(base_url: str, error: httpx.TransportError) -> CodeModeConnectionError:
    return CodeModeConnectionError(base_url, str(error) or type(error).__name__)
