"""Typed client of the Code Mode backend's REST API (``/v1``): ``CodeModeClient`` (sync) and
``AsyncCodeModeClient`` (asyncio), pydantic models of every answer, typed exceptions."""

__version__ = "0.1.0"

from .async_client import AsyncCodeModeClient  # noqa: E402
from .client import CodeModeClient  # noqa: E402
from .errors import (  # noqa: E402
    AuthenticationError,
    BadRequestError,
    CodeModeApiError,
    CodeModeConnectionError,
    CodeModeError,
    CodeModeStreamError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
)
from . import models  # noqa: E402
from .models import *  # noqa: E402,F401,F403
from .sse import SseMessage  # noqa: E402

__all__ = [
    "AsyncCodeModeClient",
    "AuthenticationError",
    "BadRequestError",
    "CodeModeApiError",
    "CodeModeClient",
    "CodeModeConnectionError",
    "CodeModeError",
    "CodeModeStreamError",
    "ConflictError",
    "InternalServerError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServiceUnavailableError",
    "SseMessage",
    *models.__all__,
]
