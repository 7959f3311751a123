"""Slash commands, a queued and a steered prompt, on the real claude wrapper.

The model is scripted (mock Messages API); a question the model asks (AskUserQuestion)
holds the turn open while the next prompt is sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import TIMEOUT, finish, next_pending, ready
from tests.support.mock_anthropic import MockAnthropic, Question, ask_user_question, text

pytestmark = pytest.mark.usefixtures("wrapper_bin")

OpenChat = Callable[..., Chat]
COLOR = Question("Which color do you prefer?", "Color", ["Red", "Blue"])


def sent_to_model(mock: MockAnthropic, words: str) -> bool:
    """Whether any request to the model carries ``words`` (a prompt of its own, or one
    the CLI added to a tool result mid-turn)."""
    return any(words in json.dumps(r.messages) for r in mock.main_requests)


async def held_turn(chat: Chat, mock: MockAnthropic) -> tuple[asyncio.Task[Any], dict[str, Any]]:
    """A turn that waits on the model's question; the question."""
    mock.on_user("Pick a color", ask_user_question(COLOR))
    mock.on_tool_result("AskUserQuestion", text("Noted, red."))
    first = asyncio.create_task(chat.ask("Pick a color"))
    return first, await next_pending(chat, "elicitation")


async def test_the_wrapper_lists_its_slash_commands(claude_chat: OpenChat) -> None:
    chat = claude_chat()
    await ready(chat)
    commands = await chat._until(lambda: chat.commands or None, TIMEOUT)
    names = {c["name"] for c in commands}
    assert {"compact", "init"} <= names, names
    assert all(isinstance(c.get("description"), str) for c in commands)


async def test_a_prompt_during_a_turn_is_queued_then_sent(
    claude_chat: OpenChat, mock_api: MockAnthropic
) -> None:
    chat = claude_chat()
    await ready(chat)
    first, question = await held_turn(chat, mock_api)
    mock_api.on_user("And the size?", text("Large it is."))
    second = asyncio.create_task(chat.ask("And the size?"))
    queue = await chat._until(lambda: chat.queue or None, TIMEOUT)
    assert [q["prompt"] for q in queue] == ["And the size?"]
    assert not sent_to_model(mock_api, "And the size?")  # it waits on our side
    chat.answer(question["requestId"], {"question_0": "Red"})
    one, two = await finish(first), await finish(second)
    assert one.ok and two.ok and two.number == one.number + 1
    assert "Large it is." in two.text and "Large" not in one.text
    assert sent_to_model(mock_api, "And the size?") and chat.queue == []


async def test_a_queued_prompt_steers_the_running_turn(
    claude_chat: OpenChat, mock_api: MockAnthropic
) -> None:
    chat = claude_chat()
    await ready(chat)
    caps = chat.state["agent"]["capabilities"] or {}
    assert caps["_meta"]["claudeCode"]["promptQueueing"] is True
    first, question = await held_turn(chat, mock_api)
    mock_api.on_user("Make it blue", text("Blue, then."))
    number = chat.send_prompt("Make it blue")
    chat.steer(number)
    await chat._until(lambda: None if chat.queue else True, TIMEOUT)
    chat.answer(question["requestId"], {"question_0": "Red"})
    one = await finish(first)
    two = await asyncio.wait_for(asyncio.to_thread(chat.wait, number, TIMEOUT), TIMEOUT)
    # Sent into the running turn: the model got it, and its turn ended with that one.
    assert sent_to_model(mock_api, "Make it blue")
    assert two.number == number and two.stop_reason == one.stop_reason and one.error is None
    users = [i["text"] for i in chat.state["items"] if i["type"] == "user"]
    assert users == ["Pick a color", "Make it blue"]
