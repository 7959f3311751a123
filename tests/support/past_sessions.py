"""A demo session left on disk: one turn in a local chat, closed."""

from __future__ import annotations

from pathlib import Path

from acp_notebook.kernel.chat import Chat

DEMO = {"ACP_DEMO_DELAY": "0"}


async def past_session(cwd: Path, prompt: str = "hello there") -> str:
    """The id of a demo session in ``cwd`` whose one turn was ``prompt``."""
    chat = Chat("demo", env=DEMO, cwd=str(cwd), transport="local")
    try:
        assert (await chat.ask(prompt, timeout=30)).ok
        return str(chat.state["agent"]["sessionId"])
    finally:
        chat.close()
