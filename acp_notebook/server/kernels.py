"""One hub per kernel: created when the kernel opens its first chat, kept across
restarts (the chats outlive the kernel process), ended when the kernel is gone."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..bridge.hub import Hub, HubConfig
from ..bridge.ports import TextFilesFactory
from ..notebook_tools.server_side import ServerTools


@dataclass(eq=False)
class KernelHubs:
    config: HubConfig
    log: logging.Logger
    # Asks a kernel (by id) for a kernel-side tool: the composer's @ mentions.
    query: Callable[[str, str, Mapping[str, Any]], Awaitable[str]]
    # The chats' notebook tools; None when the server turns them off.
    tools: ServerTools | None = None
    # The files agents read and write through the client, under the server's root.
    files: TextFilesFactory | None = None
    _hubs: dict[str, Hub] = field(default_factory=dict, init=False)
    _closed: bool = field(default=False, init=False)

    def get(self, kernel_id: str) -> Hub | None:
        return self._hubs.get(kernel_id)

    def attach(self, kernel_id: str) -> Hub:
        """The kernel's hub, created on first use."""
        if self._closed:
            raise RuntimeError("the server is stopping")
        hub = self._hubs.get(kernel_id)
        if hub is None:
            factory = self.tools.factory(kernel_id) if self.tools is not None else None
            query = functools.partial(self.query, kernel_id)
            hub = self._hubs[kernel_id] = Hub(
                self.config,
                name=kernel_id,
                notebook_tools=factory,
                kernel_query=query,
                text_files=self.files,
            )
        return hub

    def holding(self, agent: str, session_id: str) -> list[tuple[str, str]]:
        """(kernel id, chat id) of each chat whose ``agent`` has ``session_id`` open, or is
        opening it: the panel keeps one live chat per session."""
        return [
            (kernel_id, chat_id)
            for kernel_id, hub in self._hubs.items()
            for chat_id, chat in hub.chats.items()
            if chat.session.status != "exited"
            and chat.session.spec.name == agent
            and session_id in (chat.session.session_id, chat.session.load_session_id)
        ]

    async def drop(self, kernel_id: str, reason: str) -> None:
        """End the kernel's chats: pending cards are cancelled, agent processes ended."""
        hub = self._hubs.pop(kernel_id, None)
        if hub is None:
            return
        self.log.info("acp_notebook: closing the chats of kernel %s (%s)", kernel_id, reason)
        await hub.close()
        if self.tools is not None:
            self.tools.drop(kernel_id)

    async def reconcile(self, live: Iterable[str]) -> None:
        """Drop the hubs of kernels that vanished without a shutdown event (died, culled)."""
        gone = self._hubs.keys() - set(live)
        await asyncio.gather(*(self.drop(kid, "gone") for kid in gone))

    async def close(self) -> None:
        self._closed = True
        await asyncio.gather(*(self.drop(kid, "server stopping") for kid in list(self._hubs)))
        if self.tools is not None:
            await self.tools.close()
