"""A backgrounded command's output file, followed for a v1 client: the placeholder that
names it is replaced by what it holds, then what it gets is appended, to its end after
the exit; only the file of the call's own task is read."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp_notebook.agent.background_output import BackgroundOutput


def result(task_id: str) -> dict[str, Any]:
    response = {"stdout": "", "backgroundTaskId": task_id}
    return {"toolCallId": "call", "_meta": {"claudeCode": {"toolResponse": response}}}


def placeholder(path: Path) -> dict[str, Any]:
    data = f"Command running in background with ID: b1. Output is being written to: {path}."
    meta = {"terminal_output_delta": {"terminal_id": "call", "data": data}}
    return {"toolCallId": "call", "_meta": meta}


EXIT = {"toolCallId": "call", "_meta": {"terminal_exit": {"terminal_id": "call"}}}


def task_file(tmp_path: Path, text: str) -> Path:
    """The output file of task b1, holding ``text``."""
    path = tmp_path / "tasks" / "b1.output"
    path.parent.mkdir()
    path.write_text(text)
    return path


def following(path: Path) -> tuple[BackgroundOutput, list[dict[str, Any]]]:
    """A follower told of task b1 and of the placeholder naming ``path``; its updates."""
    updates: list[dict[str, Any]] = []
    follower = BackgroundOutput(updates.append)
    follower.watch(result("b1"))
    follower.watch(placeholder(path))
    return follower, updates


def shown(updates: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(key, value["data"]) for u in updates for key, value in u["_meta"].items()]


async def test_the_file_replaces_the_placeholder_then_grows_to_its_end(tmp_path: Path) -> None:
    path = task_file(tmp_path, "one\n")
    follower, updates = following(path)
    await asyncio.sleep(0.1)
    assert shown(updates) == [("terminal_output", "one\n")]
    with path.open("ab") as f:
        f.write("two \u00e9".encode()[:-1])  # half a character: it waits for the rest
    await asyncio.sleep(0.4)
    with path.open("ab") as f:
        f.write("\u00e9".encode()[-1:] + b"\nthree\n")
    follower.watch(EXIT)
    await asyncio.sleep(0.1)
    assert "".join(data for _, data in shown(updates)) == "one\ntwo \u00e9\nthree\n"
    assert [key for key, _ in shown(updates)][1:] == ["terminal_output_delta"] * (len(updates) - 1)
    await follower.close()


async def test_only_the_file_of_the_calls_own_task_is_read(tmp_path: Path) -> None:
    path = task_file(tmp_path, "secret\n")
    updates: list[dict[str, Any]] = []
    follower = BackgroundOutput(updates.append)
    follower.watch(placeholder(path))  # no task id seen for the call
    follower.watch(result("other"))
    follower.watch(placeholder(path))  # another task's id
    await asyncio.sleep(0.3)
    assert updates == []
    await follower.close()


async def test_closing_stops_following(tmp_path: Path) -> None:
    path = task_file(tmp_path, "one\n")
    follower, updates = following(path)
    await asyncio.sleep(0.1)
    await follower.close()
    path.write_text("one\ntwo\n")
    await asyncio.sleep(0.4)
    assert shown(updates) == [("terminal_output", "one\n")]
