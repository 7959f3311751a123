"""Which session ids a Continue may name (issue 27): the pure checks, and who started
which session as the hubs note it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from acp_notebook.agent.catalogue import resolve_agent
from acp_notebook.agent.session_list import SessionInfo, listed_sessions, unknown_session
from acp_notebook.bridge.hub import Forbidden, Hub
from acp_notebook.bridge.session_owners import SessionOwners
from acp_notebook.wire.contracts import valid_session_id
from tests.support.agents import FAULT_AGENT

AGENTS_IDS = ["0f8f2a1c-6b1e-4c55-9c3e-ad5b00000000", "ses_4bd1c9aXyz", "a.b:c_d-e"]
# What an agent could take for an option or a file, whatever it lists.
OPTIONS_AND_PATHS = [
    "--dangerously-skip-permissions",
    "-r",
    "../../../../etc/passwd",
    "..",
    "a..b",
    "/etc/passwd",
    "sessions/abc",
    "C:\\Users\\x",
]


@pytest.mark.parametrize("session_id", AGENTS_IDS)
def test_the_agents_ids_are_valid(session_id: str) -> None:
    assert valid_session_id(session_id)
    assert unknown_session(session_id, "/w", None) is None


@pytest.mark.parametrize("session_id", OPTIONS_AND_PATHS)
def test_option_and_path_like_ids_are_never_valid(session_id: str) -> None:
    assert not valid_session_id(session_id)


def test_where_the_agent_lists_only_its_ids_are_continued() -> None:
    listed = [SessionInfo("s-1", "/w", None, None)]
    assert unknown_session("s-1", "/w", listed) is None
    why = unknown_session("s-2", "/w", listed)
    assert why == "the agent lists no session 's-2' in /w"
    # Listed or not, an odd character is fine only when the agent vouches for it.
    assert unknown_session("s+1", "/w", [SessionInfo("s+1", "/w", None, None)]) is None


@pytest.mark.parametrize("session_id", ["s+1", "_s", "a~b", "x=y", "s!"])
def test_where_the_agent_cannot_list_a_strict_set(session_id: str) -> None:
    why = unknown_session(session_id, "/w", None)
    assert why is not None and "does not list its sessions" in why


def test_the_first_owner_of_a_session_keeps_it() -> None:
    owners = SessionOwners(limit=2)
    owners.note("demo", "/w", "s-1", "alice")
    owners.note("demo", "/w", "s-1", "bob")
    assert owners.owner("demo", "/w", "s-1") == "alice"
    assert owners.owner("demo", "/elsewhere", "s-1") is None
    assert owners.owner("codex", "/w", "s-1") is None
    # One principal's many sessions evict only their own.
    for n in range(3):
        owners.note("demo", "/w", f"b-{n}", "bob")
    assert owners.owner("demo", "/w", "s-1") == "alice"
    assert owners.owner("demo", "/w", "b-0") is None
    assert owners.owner("demo", "/w", "b-2") == "bob"


async def test_a_hub_notes_who_started_each_session(hub: Hub, tmp_path: Path) -> None:
    env = {"ACP_DEMO_DELAY": "0"}
    mine = await hub.open_chat("demo", owner="alice", cwd=str(tmp_path), env=env)
    nobodys = await hub.open_chat("demo", cwd=str(tmp_path), env=env)
    await asyncio.gather(hub.chats[mine].start_task, hub.chats[nobodys].start_task)
    session_id = hub.chats[mine].session.session_id
    assert session_id is not None
    assert hub.config.sessions.owner("demo", str(tmp_path), session_id) == "alice"
    other = hub.chats[nobodys].session.session_id
    assert other is not None and hub.config.sessions.owner("demo", str(tmp_path), other) is None

    # Only its owner continues it (a kernel's open too: the owner is its cell's sender).
    again = {"cwd": str(tmp_path), "env": env, "load_session_id": session_id}
    with pytest.raises(Forbidden, match="was started by another user"):
        await hub.open_chat("demo", owner="bob", **again)
    assert await hub.open_chat("demo", owner="alice", **again)


async def test_an_agent_that_cannot_list_leaves_the_strict_set(tmp_path: Path) -> None:
    demo = resolve_agent("demo", env={"ACP_DEMO_DELAY": "0"})
    assert await listed_sessions(demo, str(tmp_path), 30) == []
    command = [sys.executable, str(FAULT_AGENT), "none", "initialize", str(tmp_path / "log")]
    assert await listed_sessions(resolve_agent(command=command), str(tmp_path), 30) is None
