"""JSON-RPC 2.0 over newline-delimited JSON, without I/O.

``LineFramer`` turns arbitrary byte chunks into lines (with a size cap that skips,
rather than dies on, an oversized line); ``parse`` classifies one line into a
message. The connection feeds bytes in and writes ``encode``-d bytes out, so all
of the protocol's edge cases are testable without a process (as in h11).
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from typing import Any, Union

MAX_LINE = 50 * 1024 * 1024

# JSON-RPC and ACP error codes (reference/acp-protocol.md §1).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

Id = Union[int, str]


@dataclass(frozen=True)
class Request:
    id: Id
    method: str
    params: Any


@dataclass(frozen=True)
class Notification:
    method: str
    params: Any


@dataclass(frozen=True)
class Response:
    id: Id
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class Invalid:
    """A line that is not a JSON-RPC message; ``reason`` says why, for the log."""

    reason: str
    line: bytes


Message = Union[Request, Notification, Response, Invalid]


@dataclass(frozen=True)
class Oversized:
    """A line longer than the cap was dropped; ``size`` counts the bytes skipped."""

    size: int


class LineFramer:
    """Splits a byte stream into lines; lines over ``max_line`` become ``Oversized``."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._max = max_line
        self._buf = bytearray()
        self._skipping = 0  # bytes dropped so far of an oversized line, 0 when not skipping

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            if self._skipping:
                out.append(Oversized(self._skipping + nl - start))
                self._skipping = 0
            elif len(self._buf) + nl - start > self._max:
                out.append(Oversized(len(self._buf) + nl - start))
                self._buf.clear()
            elif self._buf:
                self._buf += data[start:nl]
                out.append(bytes(self._buf))
                self._buf.clear()
            else:
                out.append(data[start:nl])
            start = nl + 1
        rest = len(data) - start
        if self._skipping:
            self._skipping += rest
        elif len(self._buf) + rest > self._max:
            # Stop buffering: memory stays bounded however long the line grows.
            self._skipping = len(self._buf) + rest
            self._buf.clear()
        elif rest:
            self._buf += data[start:]
        return out

    def close(self) -> list[bytes | Oversized]:
        """End of stream: a final line without a newline still counts."""
        if self._skipping:
            size, self._skipping = self._skipping, 0
            return [Oversized(size)]
        if self._buf:
            line = bytes(self._buf)
            self._buf.clear()
            return [line]
        return []


def _valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def parse(line: bytes) -> Message | None:
    """Classify one line; blank lines give ``None``."""
    if not line.strip():
        return None
    try:
        # ACP speaks UTF-8: decoding here spares json.loads its encoding sniffing, a
        # fifth of the cost of a small line. A leading BOM is tolerated, as json does.
        obj = json.loads(line.removeprefix(codecs.BOM_UTF8).decode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeDecodeError) as exc:
        return Invalid(f"not JSON: {exc}", line[:200])
    return parse_object(obj, line)


def parse_object(obj: object, line: bytes = b"") -> Message:
    if not isinstance(obj, dict):
        return Invalid("not a JSON object", line[:200])
    method = obj.get("method")
    has_id = "id" in obj
    if isinstance(method, str):
        params = obj.get("params")
        if not has_id:
            return Notification(method, params)
        if not _valid_id(obj["id"]):
            return Invalid("request id must be an integer or a string", line[:200])
        return Request(obj["id"], method, params)
    if has_id and ("result" in obj or "error" in obj):
        if not _valid_id(obj["id"]):
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


def encode_error(id: Id | None, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _dump({"jsonrpc": "2.0", "id": id, "error": error})


class RpcError(Exception):
    """An error response from the agent (or -32800 / exit when it went away)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def from_error(cls, error: dict[str, Any]) -> RpcError:
        code = error.get("code")
        message = error.get("message")
        return cls(
            code if isinstance(code, int) else INTERNAL_ERROR,
            message if isinstance(message, str) else "error",
            error.get("data"),
        )
