"""The Jupyter server extension (server mode): hubs per kernel, browser and kernel sockets.

The REST API (agents, chats, Continue), the kernels' proofs of identity, kernel queries
for the notebook tools, and who may run code in whose kernel. Imports every layer below
the kernel's, and ``kernel.widget_code`` for the bundle it serves.
"""

from __future__ import annotations

from .app import AcpNotebookApp

__all__ = ["AcpNotebookApp"]
