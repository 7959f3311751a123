"""Demo sessions left on disk: one turn each in a local chat, closed."""

from __future__ import annotations

import asyncio
import json
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

from acp_notebook.demo import store as demo_store
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


def past_sessions(cwd: Path, prompts: list[str]) -> list[str]:
    """``past_session`` for each prompt, from a test without an event loop of its own to
    run it on (a Playwright test's thread has one running)."""
    with ThreadPoolExecutor(1) as pool:
        return [pool.submit(asyncio.run, past_session(cwd, p)).result() for p in prompts]


def last_used(session_id: str, ago: timedelta) -> None:
    """Dates the stored demo session back by ``ago``, as if last used then."""
    path = demo_store.store_dir() / f"{session_id}.json"
    data = json.loads(path.read_text())
    data["updatedAt"] = (datetime.now(timezone.utc) - ago).isoformat(timespec="seconds")
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)
