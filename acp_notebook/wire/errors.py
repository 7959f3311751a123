"""The exceptions a refused request raises, the same in local and server mode.

Every request, ``chat:open`` included, is answered with an ack; an ack with an
error becomes one of these, chosen by its code alone, so a bad request raises the
same exception whichever transport carried it.
"""

from __future__ import annotations

from typing import Any

from .contracts import Frame


class ChatError(RuntimeError):
    """The hub refused a request.

    ``code`` is the ack's error code, ``detail`` what was wrong, ``reason`` why the
    chat is in that state (the agent's exit detail, for instance) and ``data`` what the
    agent added to its JSON-RPC error (a validation report, for instance), as JSON text.
    """

    def __init__(
        self,
        code: str,
        detail: str | None = None,
        reason: str | None = None,
        data: str | None = None,
    ) -> None:
        super().__init__(": ".join(part for part in (code, detail, reason, data) if part))
        self.code = code
        self.detail = detail
        self.reason = reason
        self.data = data


class InvalidRequest(ChatError, ValueError):
    """``INVALID``: the request, or what it asks for (an unknown agent), is not valid."""


class ChatForbidden(ChatError, PermissionError):
    """``FORBIDDEN``: the server's rules, or the chat's owner, do not allow it."""


class AuthRequired(ChatError):
    """The agent will not work until the user signs in (ACP's ``auth_required``): the
    message lists its methods, ``methods`` holds them (``Chat.auth_methods``)."""

    def __init__(self, detail: str, methods: list[dict[str, Any]]) -> None:
        super().__init__("AUTH_REQUIRED", detail)
        self.methods = methods


def error_for(ack: Frame) -> ChatError:
    """The exception an error ack stands for."""
    code = str(ack["error"])
    cls = {"INVALID": InvalidRequest, "FORBIDDEN": ChatForbidden}.get(code, ChatError)
    return cls(code, ack.get("detail"), ack.get("reason"), ack.get("data"))
