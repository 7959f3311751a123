"""claude-code edits notebooks with our tools, not its own ``NotebookEdit``, on the real
wrapper and a scripted model: a chat with the notebook tools withholds ``NotebookEdit``
(session/new's ``_meta.claudeCode.options.disallowedTools``) and offers the ``notebook``
server's edit tools. The test reads what the model was offered: the deferred tools its
first request names, what a ToolSearch for them loads, and the tools of the next request.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import ask
from tests.support.mock_anthropic import MockAnthropic, text, tool_search

pytestmark = pytest.mark.usefixtures("wrapper_bin")

OpenChat = Callable[..., Chat]

EDITOR = "NotebookEdit"  # claude-code's own: it rewrites the .ipynb on disk
READ = "mcp__notebook__read_cells"
INSERT = "mcp__notebook__insert_cell"


async def load_tools(
    claude_chat: OpenChat, mock: MockAnthropic, *, notebook_tools: bool
) -> tuple[list[str], set[str], list[str]]:
    """One turn in which the model loads ``READ``, ``INSERT`` and ``EDITOR``: the
    deferred tools of its first request, what the ToolSearch loaded, and the tools of the
    request after it."""
    chat = claude_chat(notebook_tools=notebook_tools)
    mock.on_user("Add a cell", tool_search(READ, INSERT, EDITOR))
    mock.on_tool_result("ToolSearch", text("Loaded"))
    turn = await ask(chat, "Add a cell")
    assert turn.ok and turn.text == "Loaded", turn.error
    first, after = mock.main_requests
    [loaded] = mock.tool_results("ToolSearch")
    return first.deferred_tools, set(loaded.text.splitlines()), after.tool_names


async def test_a_chat_with_notebook_tools_gets_them_and_not_notebookedit(
    claude_chat: OpenChat, mock_api: MockAnthropic
) -> None:
    deferred, loaded, tools = await load_tools(claude_chat, mock_api, notebook_tools=True)
    assert EDITOR not in deferred and EDITOR not in loaded and EDITOR not in tools
    assert READ in deferred and READ in loaded and READ in tools
    # The edit tools (the notebook server's insert_cell and the rest) are offered too.
    assert INSERT in deferred and loaded == {READ, INSERT} and INSERT in tools


async def test_without_notebook_tools_claude_keeps_notebookedit(
    claude_chat: OpenChat, mock_api: MockAnthropic
) -> None:
    # The control: the same turn offers claude's own editor when the chat has no tools.
    deferred, loaded, tools = await load_tools(claude_chat, mock_api, notebook_tools=False)
    assert EDITOR in deferred and loaded == {EDITOR} and EDITOR in tools
    assert not any(name.startswith("mcp__notebook__") for name in deferred + tools)
