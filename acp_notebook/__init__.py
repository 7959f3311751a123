"""Drive claude-code and any Agent Client Protocol agent from a notebook cell."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from .agent.handshake import VERSION as __version__  # noqa: F401 (the package's version)

__all__ = [
    "CANCEL",
    "DECLINE",
    "AttachmentError",
    "AuthRequired",
    "Chat",
    "ChatError",
    "NeedsAnswer",
    "SessionInfo",
    "SessionList",
    "SessionsUnavailable",
    "Turn",
    "delete_session",
    "sessions",
]

if TYPE_CHECKING:
    from .agent.session_list import (
        SessionInfo,
        SessionList,
        SessionsUnavailable,
        delete_session,
        sessions,
    )
    from .kernel.chat import CANCEL, DECLINE, AuthRequired, Chat, ChatError, NeedsAnswer, Turn
    from .wire.attachment_blocks import AttachmentError


# Where each lazily imported name lives (the rest of __all__: in ``kernel.chat``).
_MODULES = {
    "sessions": "agent.session_list",
    "SessionInfo": "agent.session_list",
    "SessionList": "agent.session_list",
    "SessionsUnavailable": "agent.session_list",
    "delete_session": "agent.session_list",
    "AttachmentError": "wire.attachment_blocks",
}


def __getattr__(name: str) -> Any:
    # Lazy: the server extension imports this package and must not load ipywidgets.
    if name in __all__:
        module = importlib.import_module(f".{_MODULES.get(name, 'kernel.chat')}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module 'acp_notebook' has no attribute {name!r}")


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    # Imported here: a kernel importing acp_notebook must not pay for jupyter_server.
    from .server import AcpNotebookApp

    return [{"module": "acp_notebook.server", "app": AcpNotebookApp}]


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext acp_notebook``: the ``%%agent`` and ``%agent`` magics."""
    from .kernel import magics

    magics.load(shell)


def _load_in_ipython() -> None:
    # Importing the package in IPython loads the magics; elsewhere (the server
    # extension, a plain interpreter) IPython is not imported and nothing happens.
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and hasattr(shell, "register_magic_function"):
        load_ipython_extension(shell)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    # For `jupyter labextension develop` (editable installs); a wheel installs it as data.
    return [{"src": "labextension", "dest": "acp-notebook"}]


_load_in_ipython()
