"""The requests only a kernel may send (on the kernel socket), besides the chat requests.

``chat:open`` carries the options of ``Hub.open_chat``; ``chat:subscribe`` starts the
chat's frames on this socket (the first one a reset: the whole resync);
``chat:close`` ends the chat and its agent.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter

from ..contracts import MAX_ID

Text = Annotated[str, Field(max_length=4096)]
ChatId = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Echoed in the ack, as for the chat requests.
    id: int | Annotated[str, Field(max_length=MAX_ID)] | None = None


class OpenChat(_Request):
    type: Literal["chat:open"]
    agent: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = None
    command: Annotated[list[Text], Field(min_length=1, max_length=256)] | None = None
    env: Annotated[dict[Text, Text], Field(max_length=256)] | None = None
    cwd: Text | None = None
    mode: Annotated[str, Field(max_length=MAX_ID)] | None = None
    mcpServers: Annotated[list[dict[str, Any]], Field(max_length=64)] = []
    owner: Annotated[str, Field(max_length=MAX_ID)] | None = None
    # An earlier ACP session of this agent to continue (session/load or session/resume).
    loadSessionId: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID)] | None = None


class SubscribeChat(_Request):
    type: Literal["chat:subscribe"]
    chatId: ChatId


class CloseChat(_Request):
    type: Literal["chat:close"]
    chatId: ChatId


KernelRequest = Annotated[Union[OpenChat, SubscribeChat, CloseChat], Field(discriminator="type")]
kernel_request = TypeAdapter(KernelRequest)
KERNEL_TYPES = frozenset({"chat:open", "chat:subscribe", "chat:close"})
