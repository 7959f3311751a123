"""The Jupyter server extension (server mode): hubs per kernel, browser and kernel sockets.

The REST API (agents, chats, Continue), the kernels' proofs of identity (a key issued
to each kernel at its start, local or behind a kernel gateway), kernel queries for the
notebook tools, who may run code in whose kernel, and pages' kernel sockets through a
gateway. Imports every layer below
the kernel's, and ``kernel.widget_code`` for the bundle it serves.
"""

from __future__ import annotations

from .app import AcpNotebookApp

__all__ = ["AcpNotebookApp"]
