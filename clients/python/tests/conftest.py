"""The live service the suite runs against: ``CODEMODE_URL`` and ``CODEMODE_API_KEY`` (the same
variables as the ``codemode`` CLI). Every test uses its own session ids."""

from __future__ import annotations

import os
import uuid

import pytest

from codemode_client import CodeModeClient


@pytest.fixture(scope="session")
def base_url() -> str:
    url = os.environ.get("CODEMODE_URL")
    if not url:
        pytest.exit("set CODEMODE_URL (and CODEMODE_API_KEY) to the Code Mode API the tests run against", returncode=2)
    return url


@pytest.fixture(scope="session")
def api_key() -> str | None:
    return os.environ.get("CODEMODE_API_KEY") or None


@pytest.fixture
def client(base_url: str, api_key: str | None):
    with CodeModeClient(base_url, api_key=api_key) as c:
        yield c


@pytest.fixture
def sid() -> str:
    """A session id no other test (or earlier run) uses."""
    return f"py-{uuid.uuid4().hex[:12]}"
