"""JSON-RPC 2.0 over newline-delimited JSON, without I/O.

``LineFramer`` turns arbitrary byte chunks into lines (with a size cap, and a
budget shared by every agent's unfinished line, that skip rather than die on an
oversized line); ``parse`` classifies one line into a message. The connection feeds bytes in and writes ``encode``-d bytes out, so all
of the protocol's edge cases are testable without a process (as in h11).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeGuard, Union, cast

from ..wire.bounded_json import OverLimit, Rejected, loads
from ..wire.clip import clip

# Parsing costs a few times a line's size (and bounded_json caps its containers), so
# this bounds a line's memory. The hostile-agent tests send 10 MB titles, and pass.
MAX_LINE = 16 * 1024 * 1024
# An error's data as shown to people: enough for a validation report, no more.
MAX_DATA_TEXT = 2000

# JSON-RPC and ACP error codes (reference/acp-protocol.md §1).
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

Id = Union[int, str]


# Not frozen: a frozen dataclass's __init__ costs three times as much, and one
# message is made per line the agent writes.
@dataclass(slots=True)
class Request:
    id: Id
    method: str
    params: Any


@dataclass(slots=True)
class Notification:
    method: str
    params: Any


@dataclass(slots=True)
class Response:
    id: Id
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class Invalid:
    """A line that is not a JSON-RPC message; ``reason`` says why, for the log."""

    reason: str
    line: bytes
    over_limit: bool = False  # perhaps JSON, but too deep or too many objects to read


Message = Union[Request, Notification, Response, Invalid]


class LineBudget:
    """The bytes that the unfinished lines of every agent may hold together.

    One per server: each chat's line cap alone lets n chats hold n times the cap.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0

    def take(self, size: int) -> bool:
        if self.used + size > self.total:
            return False
        self.used += size
        return True

    def give(self, size: int) -> None:
        self.used -= size


@dataclass(frozen=True)
class Oversized:
    """A line being dropped: longer than ``limit``, or than what was left of the budget.

    Reported when it crosses the limit (``done`` False, ``size`` so far), so the person
    hears of it while the agent still writes, and again when it ends (``size`` is all
    of it). A line that crosses and ends in one chunk is reported once, ended.
    """

    size: int
    limit: int
    done: bool = True
    budget: bool = False  # the shared budget ran out, not the line cap


class LineFramer:
    """Splits a byte stream into lines; lines over the cap or the budget become ``Oversized``.

    Bytes buffered for an unfinished line are charged to ``budget`` (when given) and
    given back when the line ends, is dropped, or ``discard`` is called.
    """

    def __init__(self, max_line: int = MAX_LINE, budget: LineBudget | None = None) -> None:
        self._max = max_line
        self._budget = budget
        self._buf = bytearray()  # with a budget, every byte of it was taken from the budget
        self.skipping: Oversized | None = None  # the line being dropped now, size so far

    @property
    def buffered(self) -> int:
        """Bytes held of the unfinished line."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        if self.skipping is None and len(self._buf) + len(data) <= self._max:
            # No line ending in here can be over the cap: split in one C pass.
            lines = data.split(b"\n")
            start = len(data) - len(lines.pop())
            if lines and self._buf:
                lines[0] = b"".join((self._buf, lines[0]))
                self._clear()
            out = cast("list[bytes | Oversized]", lines)
        else:
            out, start = self._feed_checked(data)
        rest = len(data) - start
        if self.skipping:
            self.skipping = self._grown(self.skipping, rest)
        elif len(self._buf) + rest > self._max:
            self._skip(Oversized(len(self._buf) + rest, self._max, done=False), out)
        elif rest and self._budget is not None and not self._budget.take(rest):
            left = self._budget.total - self._budget.used
            self._skip(Oversized(len(self._buf) + rest, left, False, budget=True), out)
        elif rest:
            self._buf += data[start:]
        return out

    def _feed_checked(self, data: bytes) -> tuple[list[bytes | Oversized], int]:
        """The lines that end in ``data``, each held to the cap; and where the rest starts."""
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            if self.skipping:
                out.append(self._grown(self.skipping, nl - start, done=True))
                self.skipping = None
            elif len(self._buf) + nl - start > self._max:
                out.append(Oversized(len(self._buf) + nl - start, self._max))
                self._clear()
            elif self._buf:
                out.append(b"".join((self._buf, data[start:nl])))
                self._clear()
            else:
                out.append(data[start:nl])
            start = nl + 1
        return out, start

    def _skip(self, crossed: Oversized, out: list[bytes | Oversized]) -> None:
        # Stop buffering: memory stays bounded however long the line grows.
        self.skipping = crossed
        self._clear()
        out.append(crossed)

    @staticmethod
    def _grown(line: Oversized, more: int, done: bool = False) -> Oversized:
        return Oversized(line.size + more, line.limit, done, line.budget)

    def _clear(self) -> None:
        if self._budget is not None:
            self._budget.give(len(self._buf))
        self._buf.clear()

    def discard(self) -> None:
        """Give back what the unfinished line holds (the reader stopped early)."""
        self._clear()
        self.skipping = None

    def close(self) -> list[bytes | Oversized]:
        """End of stream: a final line without a newline still counts."""
        out: list[bytes | Oversized] = []
        if self.skipping:
            out.append(self._grown(self.skipping, 0, done=True))
        elif self._buf:
            out.append(bytes(self._buf))
        self.discard()
        return out


def valid_id(value: object) -> TypeGuard[Id]:
    """A JSON-RPC id: an integer (not a boolean) or a string."""
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def parse(line: bytes, max_line: int = MAX_LINE) -> Message | None:
    """Classify one line; blank lines give ``None``.

    The line is the agent's: too deep, too many objects or not JSON is ``Invalid``.
    """
    if not line.strip():
        return None
    try:
        obj = loads(line, max_bytes=max_line)
    except Rejected as exc:
        return Invalid(str(exc), line[:200], isinstance(exc, OverLimit))
    # One function, not two: it runs for every line the agent writes.
    if not isinstance(obj, dict):
        return Invalid("not a JSON object", line[:200])
    method = obj.get("method")
    has_id = "id" in obj
    if isinstance(method, str):
        params = obj.get("params")
        if not has_id:
            return Notification(method, params)
        if not valid_id(obj["id"]):
            return Invalid("request id must be an integer or a string", line[:200])
        return Request(obj["id"], method, params)
    if has_id and ("result" in obj or "error" in obj):
        if not valid_id(obj["id"]):
            return Invalid("response id must be an integer or a string", line[:200])
        error = obj.get("error")
        if error is not None:
            if not isinstance(error, dict):
                error = {"code": INTERNAL_ERROR, "message": str(error)[:1000]}
            return Response(obj["id"], None, error)
        return Response(obj["id"], obj.get("result"))
    return Invalid("neither a request, a notification nor a response", line[:200])


def _dump(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def encode_request(id: Id, method: str, params: Any) -> bytes:
    return _dump({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def encode_notification(method: str, params: Any) -> bytes:
    return _dump({"jsonrpc": "2.0", "method": method, "params": params})


def encode_result(id: Id, result: Any) -> bytes:
    return _dump({"jsonrpc": "2.0", "id": id, "result": result})


def encode_error(id: Id | None, code: int, message: str) -> bytes:
    return _dump({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


class RpcError(Exception):
    """An error response from the agent (or -32800 / exit when it went away)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    @property
    def data_text(self) -> str | None:
        """The error's ``data`` (an agent's validation report, say) as short JSON text."""
        if self.data is None:
            return None
        text = json.dumps(self.data, ensure_ascii=False, separators=(",", ":"), default=str)
        return clip(text, MAX_DATA_TEXT)

    def describe(self) -> str:
        """The message, and the data when there is some: what a person needs to see."""
        data = self.data_text
        return f"{self.message}: {data}" if data else self.message

    @classmethod
    def from_error(cls, error: dict[str, Any]) -> RpcError:
        code = error.get("code")
        message = error.get("message")
        return cls(
            code if isinstance(code, int) else INTERNAL_ERROR,
            message if isinstance(message, str) else "error",
            error.get("data"),
        )
