"""The stream events as ``TypedDict``s: what the session builds, checked by mypy.

Events travel as plain dicts (no runtime cost); these types say what each kind
holds, field for field the models of ``contracts.py`` (tests/test_contracts.py
checks they agree). ``seq`` and ``ts`` are stamped by ``ChatSession._emit``.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from typing_extensions import NotRequired, TypedDict

Json = dict[str, Any]


class _Stamped(TypedDict):
    seq: NotRequired[int]
    ts: NotRequired[float | None]


class UpdateEventDict(_Stamped):
    kind: Literal["update"]
    update: Json


class TurnStartedEventDict(_Stamped):
    kind: Literal["turn_started"]
    turn: int
    prompt: str
    by: NotRequired[str | None]
    attachments: NotRequired[list[Json] | None]


class TurnEndedEventDict(_Stamped):
    kind: Literal["turn_ended"]
    turn: int
    stopReason: NotRequired[str | None]
    error: NotRequired[str | None]


class AgentStatusEventDict(_Stamped):
    kind: Literal["agent_status"]
    status: Literal["starting", "ready", "exited"]
    detail: NotRequired[str | None]
    agent: NotRequired[str | None]
    agentInfo: NotRequired[Json | None]
    agentCapabilities: NotRequired[Json | None]
    sessionId: NotRequired[str | None]
    modes: NotRequired[Json | None]
    configOptions: NotRequired[list[Json] | None]
    exitCode: NotRequired[int | None]
    stderrTail: NotRequired[str | None]


class AgentErrorEventDict(_Stamped):
    kind: Literal["agent_error"]
    message: str


class _Card(_Stamped):
    requestId: NotRequired[str]  # both given by _register
    deadline: NotRequired[float | None]


class PermissionRequestEventDict(_Card):
    kind: Literal["permission_request"]
    toolCall: Json
    options: list[Json]


class PermissionResolvedEventDict(_Stamped):
    kind: Literal["permission_resolved"]
    requestId: str
    outcome: Literal["selected", "cancelled", "timeout"]
    optionId: NotRequired[str | None]
    by: NotRequired[str | None]


class ElicitationRequestEventDict(_Card):
    kind: Literal["elicitation_request"]
    message: str
    fields: list[Json]
    toolCallId: NotRequired[str | None]
    title: NotRequired[str | None]


class ElicitationResolvedEventDict(_Stamped):
    kind: Literal["elicitation_resolved"]
    requestId: str
    outcome: Literal["accepted", "declined", "cancelled", "timeout"]
    by: NotRequired[str | None]


RequestEventDict = Union[PermissionRequestEventDict, ElicitationRequestEventDict]
ResolvedEventDict = Union[PermissionResolvedEventDict, ElicitationResolvedEventDict]
StreamEventDict = Union[
    UpdateEventDict,
    TurnStartedEventDict,
    TurnEndedEventDict,
    AgentStatusEventDict,
    AgentErrorEventDict,
    PermissionRequestEventDict,
    PermissionResolvedEventDict,
    ElicitationRequestEventDict,
    ElicitationResolvedEventDict,
]
