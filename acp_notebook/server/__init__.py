"""The Jupyter server extension (server mode): hubs per kernel, browser and kernel sockets."""

from __future__ import annotations

from .app import AcpNotebookApp

__all__ = ["AcpNotebookApp"]
