"""What the bridge asks of the layers that host it, as types they satisfy structurally.

The bridge imports nothing above it: ``notebook_tools`` serves a chat's ``notebook``
MCP server and answers kernel queries, and the kernel or the server hands those to the
hub. These are the shapes the hub and the chat session use them by.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from ..wire.contracts import CellEdit
from ..wire.review import EditReview
from ..wire.text_files import OpenText


class NotebookEndpoint(Protocol):
    """A chat's own ``notebook`` MCP server: where the agent reaches it, and the secret
    that names the chat."""

    @property
    def url(self) -> str: ...

    @property
    def secret(self) -> str: ...

    def cancel_runs(self) -> None:
        """The turn was cancelled: stop the chat's runs of code."""

    def close(self) -> None:
        """The chat is gone: stop its runs, forget its secret."""

    # Set by the chat session: how this chat's edit tools get their changes reviewed.
    review: EditReview | None
    # Set by the hub: the chat's agent, the name its edits are made in, and the notebook
    # file the chat was opened for, if it named one (``Chat(notebook=...)``).
    agent: str
    notebook_path: str | None

    async def preview(self, tool_call: Mapping[str, Any]) -> CellEdit | None:
        """The edit an agent's permission request for one of these tools would make (its
        diff for the card), or None when the tool call is no notebook edit."""


class TextFiles(Protocol):
    """The files an agent reads and writes through the client (``fs/*``), under one root
    directory: what the person has open, unsaved changes included, else the file saved.
    Both raise ``FileRefused`` saying why (outside the root, too large, not text)."""

    async def read(self, path: str) -> OpenText: ...

    async def write(self, path: str, before: str | None, after: str) -> str:
        """Write ``after`` while the file still holds ``before`` (None: no file yet);
        where it landed ("the saved file", an editor)."""


# The files of a chat whose agent works in a directory (its cwd).
TextFilesFactory = Callable[[str], TextFiles]
# Serves one more chat's notebook tools: its endpoint.
ToolsFactory = Callable[[], Awaitable[NotebookEndpoint]]
# Asks the kernel to run one kernel-side tool (a name and its arguments); its answer's text.
KernelQuery = Callable[[str, Mapping[str, Any]], Awaitable[str]]
