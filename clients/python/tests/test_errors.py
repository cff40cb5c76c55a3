"""Errors: the service's exact ``{error, code}`` and HTTP status as typed exceptions."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

import codemode_client
from codemode_client import (
    BadRequestError,
    CodeModeClient,
    CodeModeConnectionError,
    FailedResult,
    NotFoundError,
    RateLimitError,
    ServiceUnavailableError,
)
from codemode_client.errors import api_error_from

INVALID_SESSION_ID = "sessionId must match [A-Za-z0-9._:-]{1,128} and not be made of dots only."


def test_an_invalid_session_id_raises_bad_request_with_the_spec_message(client: CodeModeClient) -> None:
    with pytest.raises(BadRequestError) as caught:
        client.get_session("a b")
    assert caught.value.status == 400
    assert caught.value.code == "invalid_input"
    assert caught.value.error == INVALID_SESSION_ID
    assert caught.value.request_id


def test_exec_with_an_invalid_session_id_is_a_failed_result_not_an_exception(client: CodeModeClient) -> None:
    result = client.exec("..", "return 1")
    assert isinstance(result, FailedResult)
    assert (result.code, result.error, result.failure_phase) == ("invalid_input", INVALID_SESSION_ID, "input")


def test_an_unknown_run_raises_not_found(client: CodeModeClient, sid: str) -> None:
    client.exec(sid, "return 1")
    with pytest.raises(NotFoundError) as caught:
        client.get_run(sid, "cm_00000000-0000-4000-8000-000000000000")
    assert (caught.value.status, caught.value.code) == (404, "not_found")


def test_an_unreachable_service_raises_a_connection_error() -> None:
    with CodeModeClient("http://127.0.0.1:9") as client, pytest.raises(CodeModeConnectionError) as caught:
        client.fleet()
    assert caught.value.base_url == "http://127.0.0.1:9"


def test_a_429_carries_retry_after() -> None:
    body = '{"error":"tenant request rate exceeded.","code":"tenant_limit","details":{"limit":"rate"}}'
    response = httpx.Response(429, headers={"retry-after": "3", "x-request-id": "r1"}, text=body)
    error = api_error_from(response, body)
    assert isinstance(error, RateLimitError)
    assert (error.status, error.code, error.error, error.retry_after, error.request_id) == (
        429,
        "tenant_limit",
        "tenant request rate exceeded.",
        3.0,
        "r1",
    )
    assert error.details == {"limit": "rate"}


def test_a_body_that_is_not_the_services_json_keeps_its_text() -> None:
    error = api_error_from(httpx.Response(503, headers={"retry-after": "2"}, text="upstream down"), "upstream down")
    assert isinstance(error, ServiceUnavailableError)
    assert (error.code, error.error, error.retry_after) == ("http_error", "upstream down", 2.0)


def test_the_package_is_installed_outside_the_repository() -> None:
    # The suite imports the installed wheel (a venv outside the repository), not clients/python/src.
    source_tree = Path(__file__).resolve().parents[1]
    installed = Path(codemode_client.__file__).resolve()
    assert source_tree not in installed.parents
    assert "site-packages" in installed.parts
