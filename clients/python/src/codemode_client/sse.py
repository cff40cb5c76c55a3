"""Incremental parser of a ``text/event-stream`` body (WHATWG HTML §9.2.6, the parts a client of
this API needs). Chunks may split lines, and even a CRLF pair, anywhere; comment lines (the
server's ``: ping`` heartbeats) and ``retry:`` are ignored; a message is dispatched on a blank
line and only when it carried data."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseMessage:
    id: str | None
    event: str
    data: str


class SseParser:
    def __init__(self) -> None:
        self._buffer = ""
        self._pending_cr = False
        self._id: str | None = None
        self._event = ""
        self._data: list[str] = []
        self._has_data = False

    def push(self, chunk: str) -> list[SseMessage]:
        """Feeds decoded text; returns the messages it completed."""
        out: list[SseMessage] = []
        text = chunk
        # A CR ending the previous chunk already ended its line; a LF opening this one belongs to it.
        if self._pending_cr and text.startswith("\n"):
            text = text[1:]
        self._pending_cr = False
        self._buffer += text
        start = 0
        i = 0
        while i < len(self._buffer):
            ch = self._buffer[i]
            if ch in "\r\n":
                self._line(self._buffer[start:i], out)
                if ch == "\r":
                    if i + 1 == len(self._buffer):
                        self._pending_cr = True
                    elif self._buffer[i + 1] == "\n":
                        i += 1
                start = i + 1
            i += 1
        self._buffer = self._buffer[start:]
        return out

    def _line(self, line: str, out: list[SseMessage]) -> None:
        if line == "":
            if self._has_data:
                out.append(SseMessage(self._id, self._event or "message", "\n".join(self._data)))
            self._event = ""
            self._data = []
            self._has_data = False
            return
        if line.startswith(":"):
            return
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
            self._has_data = True
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
