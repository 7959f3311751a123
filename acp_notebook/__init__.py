"""Drive claude-code and any Agent Client Protocol agent from a notebook cell."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    # Imported here: a kernel importing acp_notebook must not pay for jupyter_server.
    from .server import AcpNotebookApp

    return [{"module": "acp_notebook.server", "app": AcpNotebookApp}]
