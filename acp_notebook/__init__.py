"""Drive claude-code and any Agent Client Protocol agent from a notebook cell."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = [
    "CANCEL",
    "DECLINE",
    "Chat",
    "ChatError",
    "NeedsAnswer",
    "SessionInfo",
    "Turn",
    "sessions",
]

if TYPE_CHECKING:
    from .chat import CANCEL, DECLINE, Chat, ChatError, NeedsAnswer, Turn
    from .session_list import SessionInfo, sessions


def __getattr__(name: str) -> Any:
    # Lazy: the server extension imports this package and must not load ipywidgets.
    if name in ("sessions", "SessionInfo"):
        from . import session_list

        return getattr(session_list, name)
    if name in __all__:
        from . import chat

        return getattr(chat, name)
    raise AttributeError(f"module 'acp_notebook' has no attribute {name!r}")


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    # Imported here: a kernel importing acp_notebook must not pay for jupyter_server.
    from .server import AcpNotebookApp

    return [{"module": "acp_notebook.server", "app": AcpNotebookApp}]
