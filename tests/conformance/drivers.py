"""Each real agent's half of the round trips: how its model (or script) is made to ask,
and what the agent does with the answer. The shared half is in test_round_trips.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from acp_notebook.kernel.chat import Chat, ChatError, Turn
from tests.support.chat_waits import ready
from tests.support.demo_answers import demo_answer
from tests.support.mock_anthropic import MockAnthropic, Question, ask_user_question, text, tool_use
from tests.support.mock_openai import MockOpenAI, function_call
from tests.support.mock_openai import text as openai_text

Json = dict[str, Any]
OpenChat = Callable[..., Chat]


class Driver:
    fixture: ClassVar[str]  # the fixture that opens the agent's chats
    mock: ClassVar[str | None] = None  # the fixture of its mock model API
    permission_kind: ClassVar[str]  # the kind of the tool call a permission is asked for
    options: ClassVar[dict[str, str] | None]  # the options it offers, id: kind (None: varies)

    def __init__(self, open_chat: OpenChat, mock: Any, workdir: Path) -> None:
        self.open_chat = open_chat
        self.api = mock
        self.target = workdir / "out.txt"

    async def open(self) -> Chat:
        return self.open_chat()

    async def open_for_permission(self) -> Chat:
        return await self.open()

    # A permission to write ``self.target``.
    def script_permission(self) -> str:
        """Scripts the model; the prompt."""
        raise NotImplementedError

    def check_permission(self, request: Json) -> None:
        if self.options is not None:
            assert {o["optionId"]: o["kind"] for o in request["options"]} == self.options

    def allowed(self, chat: Chat, request: Json, turn: Turn) -> None:
        raise NotImplementedError

    def rejected(self, chat: Chat, request: Json, turn: Turn) -> None:
        raise NotImplementedError

    # A question, answered.
    async def open_for_question(self) -> Chat:
        return await self.open()

    def script_question(self) -> str:
        raise NotImplementedError

    def check_question(self, chat: Chat, request: Json) -> None:
        raise NotImplementedError

    def answer(self, chat: Chat, request: Json) -> None:
        raise NotImplementedError

    def answered(self, chat: Chat, request: Json, turn: Turn) -> None:
        raise NotImplementedError

    # A question, then the turn cancelled while it is open, then the next prompt.
    def script_cancel(self) -> tuple[str, str]:
        """Scripts the model; the prompt that asks and the one after the cancel."""
        raise NotImplementedError

    def cancelled(self, chat: Chat, request: Json) -> None:
        raise NotImplementedError

    def after_cancel(self, request: Json, again: Turn) -> None:
        raise NotImplementedError


# ---------------------------------------------------------------- claude-code

COLOR = Question("Which color do you prefer?", "Color", ["Red", "Blue"])


class ClaudeCode(Driver):
    fixture = "claude_chat"
    mock = "mock_api"
    permission_kind = "edit"
    options = {
        "allow-once": "allow_once",
        "allow-with-updates": "allow_always",
        "reject": "reject_once",
    }
    api: MockAnthropic

    def script_permission(self) -> str:
        write = tool_use("Write", {"file_path": str(self.target), "content": "hello\n"})
        self.api.on_user("Write the file", write)
        self.api.on_tool_result("Write", text("Done writing"))
        return "Write the file"

    def allowed(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert turn.ok and turn.text == "Done writing"
        [result] = self.api.tool_results("Write")
        assert self.target.read_text() == "hello\n"
        assert not result.is_error
        assert chat.state["permissions"][request["requestId"]]["optionId"] == "allow-once"

    def rejected(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert turn.ok and turn.text == "Done writing"
        [result] = self.api.tool_results("Write")
        assert not self.target.exists()
        assert result.is_error
        assert chat.state["permissions"][request["requestId"]]["optionId"] == "reject"

    def script_question(self) -> str:
        self.api.on_user("Pick a color", ask_user_question(COLOR))
        self.api.on_tool_result("AskUserQuestion", text("Noted"))
        return "Pick a color"

    def check_question(self, chat: Chat, request: Json) -> None:
        assert request["message"] == "Which color do you prefer?"
        assert [f["name"] for f in request["fields"]] == ["question_0", "question_0_custom"]
        assert [o["value"] for o in request["fields"][0]["options"]] == ["Red", "Blue"]
        assert request["fields"][1]["customOf"] == "question_0"
        # The card belongs to the AskUserQuestion tool call announced just before it.
        tool = chat.state["toolCalls"][request["toolCallId"]]
        assert tool["title"] == "Which color do you prefer?"

    def answer(self, chat: Chat, request: Json) -> None:
        chat.answer(request["requestId"], {"question_0": "Red"})

    def answered(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert turn.ok and turn.text == "Noted"
        assert chat.state["elicitations"][request["requestId"]]["outcome"] == "accepted"
        [result] = self.api.tool_results("AskUserQuestion")
        assert result.tool_use_id == request["toolCallId"]
        assert '"Which color do you prefer?"="Red"' in result.text and not result.is_error
        assert self.api.unmatched == []

    def script_cancel(self) -> tuple[str, str]:
        self.api.on_user("Pick a color", ask_user_question(COLOR))
        # The next prompt may arrive with the interrupted tool use's result in front of it,
        # so it is matched among `prompt_texts` (`prompt_text` is empty next to tool results).
        self.api.on(lambda r: "Hello again" in r.prompt_texts, text("Still here"))
        # session/cancel and our cancel answer race inside the CLI: sometimes it reports the
        # aborted tool use to the model before the interrupt lands.
        self.api.on_tool_result("AskUserQuestion", text("Stopping"))
        return "Pick a color", "Hello again"

    def cancelled(self, chat: Chat, request: Json) -> None:
        assert chat.state["toolCalls"][request["toolCallId"]]["status"] == "failed"

    def after_cancel(self, request: Json, again: Turn) -> None:
        assert again.text == "Still here"
        # The model learns the question ended without an answer (when the race above
        # went the other way, the same result is sent again with the next prompt).
        results = self.api.tool_results("AskUserQuestion")
        assert results and {r.tool_use_id for r in results} == {request["toolCallId"]}
        for result in results:
            assert result.is_error, result
            assert "doesn't want to proceed" in result.text or "Tool use aborted" in result.text
        assert self.api.unmatched == []


# ---------------------------------------------------------------- codex and opencode

# Codex starts each turn with a notice of its own for a model it has no metadata for.
NOTICE = "Warning: Model metadata for `mock-model` not found."


def codex_reply(turn: Turn) -> str:
    """The model's answer: the turn's text after Codex's notice."""
    notice, _, answer = turn.text.partition("\n\n")
    assert notice.startswith(NOTICE), turn.text
    return answer.strip()


class OpenAIAgent(Driver):
    """An agent on the mock OpenAI APIs, asked to run a shell command that writes a file."""

    mock = "mock_openai"
    permission_kind = "execute"
    api: MockOpenAI

    def command(self) -> tuple[str, Json]:
        """The shell tool's name and the arguments that write ``self.target``."""
        raise NotImplementedError

    def script_permission(self) -> str:
        tool, arguments = self.command()
        self.api.on_prompt("Write the file", function_call(tool, arguments, "call_write"))
        self.api.on_output("call_write", openai_text("Done"))
        return "Write the file"

    def check_permission(self, request: Json) -> None:
        super().check_permission(request)
        assert "echo hi" in request["toolCall"]["title"]

    def allowed(self, chat: Chat, request: Json, turn: Turn) -> None:
        [tool] = turn.tool_calls
        assert self.target.read_text() == "hi\n"
        assert tool["status"] == "completed"
        assert self.api.unmatched == []

    def rejected(self, chat: Chat, request: Json, turn: Turn) -> None:
        [tool] = turn.tool_calls
        assert not self.target.exists()
        assert tool["status"] == "failed"
        assert self.api.outputs("call_write") == []
        assert self.api.unmatched == []


CODEX_QUESTION = {
    "id": "color",
    "header": "Color",
    "question": "Which color?",
    "options": [
        {"label": "Red", "description": "A warm color"},
        {"label": "Blue", "description": "A cool color"},
    ],
}


class Codex(OpenAIAgent):
    fixture = "codex_chat"
    options = None  # checked below: codex offers more than these

    def command(self) -> tuple[str, Json]:
        return "exec_command", {
            "cmd": f"echo hi > {self.target}",
            "sandbox_permissions": "require_escalated",
            "justification": "Write out.txt?",
        }

    async def open_for_permission(self) -> Chat:
        return self.open_chat(mode="read-only")

    def check_permission(self, request: Json) -> None:
        super().check_permission(request)
        kinds = {o["kind"] for o in request["options"]}
        assert {"allow_once", "reject_once"} <= kinds

    def allowed(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert turn.ok and codex_reply(turn) == "Done"
        [output] = self.api.outputs("call_write")
        assert "exited with code 0" in output
        super().allowed(chat, request, turn)

    def rejected(self, chat: Chat, request: Json, turn: Turn) -> None:
        # Codex's only reject option is "No, and tell Codex what to do differently": the
        # command does not run and the turn stops, waiting for the user's next prompt.
        assert turn.stop_reason == "cancelled"
        super().rejected(chat, request, turn)

    async def open_for_question(self) -> Chat:
        chat = await self.open()
        await ready(chat)
        # Codex offers request_user_input in plan mode only.
        chat.set_config("collaboration_mode", "plan")
        return chat

    def script_question(self) -> str:
        ask = function_call("request_user_input", {"questions": [CODEX_QUESTION]}, "call_ask")
        self.api.on_prompt("Ask me", ask)
        self.api.on_output("call_ask", openai_text("Blue noted"))
        return "Ask me"

    def check_question(self, chat: Chat, request: Json) -> None:
        assert request["message"] == "Codex needs your input to continue."
        assert request["toolCallId"] == "call_ask"
        fields = {f["name"]: f for f in request["fields"]}
        assert set(fields) == {"color", "color_note"}
        assert fields["color"]["required"] is True
        assert [o["value"] for o in fields["color"]["options"]] == [
            "Red",
            "Blue",
            "None of the above",
        ]

    def answer(self, chat: Chat, request: Json) -> None:
        chat.answer(request["requestId"], {"color": "Blue"})

    def answered(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert turn.ok and codex_reply(turn) == "Blue noted"
        [output] = self.api.outputs("call_ask")
        assert json.loads(output) == {"answers": {"color": {"answers": ["Blue"]}}}
        assert self.api.unmatched == []


class OpenCode(OpenAIAgent):
    fixture = "opencode_chat"
    options = {"once": "allow_once", "always": "allow_always", "reject": "reject_once"}

    def command(self) -> tuple[str, Json]:
        return "bash", {"command": f"echo hi > {self.target}", "description": "Write out.txt"}

    def allowed(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert turn.ok and turn.text == "Done"
        assert self.api.outputs("call_write") == ["(no output)"]
        super().allowed(chat, request, turn)

    def rejected(self, chat: Chat, request: Json, turn: Turn) -> None:
        # opencode ends the turn on a rejection without asking the model again.
        assert turn.stop_reason == "end_turn"
        [tool] = turn.tool_calls
        assert "rejected permission" in tool["rawOutput"]["error"]
        super().rejected(chat, request, turn)


# ---------------------------------------------------------------- demo


class Demo(Driver):
    """The bundled demo agent: scripted by keywords in the prompt, no model."""

    fixture = "demo_chat"
    permission_kind = "execute"
    options = {"allow-once": "allow_once", "allow-always": "allow_always", "reject": "reject_once"}

    def script_permission(self) -> str:
        return "permission"

    def allowed(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert "permission: allow-once" in turn.text

    def rejected(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert "permission: reject" in turn.text

    def script_question(self) -> str:
        return "ask-user"

    def check_question(self, chat: Chat, request: Json) -> None:
        assert request["type"] == "elicitation" and request["fields"][0]["name"] == "question_0"
        with pytest.raises(ChatError) as err:
            chat.answer(request["requestId"], {"question_0": "mauve"})
        assert err.value.code == "INVALID"

    def answer(self, chat: Chat, request: Json) -> None:
        chat.answer(request["requestId"], {"question_0": "green"})

    def answered(self, chat: Chat, request: Json, turn: Turn) -> None:
        assert demo_answer(turn.text) == {"action": "accept", "content": {"question_0": "green"}}

    def script_cancel(self) -> tuple[str, str]:
        return "ask-user", "hello again"

    def cancelled(self, chat: Chat, request: Json) -> None:
        pass  # the demo's question is no tool call

    def after_cancel(self, request: Json, again: Turn) -> None:
        assert "hello again" in again.text


DRIVERS: dict[str, type[Driver]] = {
    "claude-code": ClaudeCode,
    "codex": Codex,
    "opencode": OpenCode,
    "demo": Demo,
}
