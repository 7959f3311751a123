"""A notebook frontend on a kernel's own channels (jupyter_client), and a kernel that no
Jupyter server started (local mode, as nbval or VS Code runs one)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager, start_new_async_kernel

from acp_notebook.wire.kernel_auth import SECRET_ENV, URL_ENV


class Frontend:
    """A notebook frontend on a kernel's channels: outputs per cell, the widget comm."""

    def __init__(self, client: AsyncKernelClient) -> None:
        self.client = client
        self.messages: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while True:
            self.messages.append(await self.client.get_iopub_msg())
            self._changed.set()

    async def until(self, find: Any, timeout: float = 30) -> Any:
        async with asyncio.timeout(timeout):
            while True:
                self._changed.clear()
                if found := find():
                    return found
                await self._changed.wait()

    def of(self, msg_id: str, kind: str) -> list[dict[str, Any]]:
        return [
            m["content"]
            for m in self.messages
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == kind
        ]

    async def finished(self, msg_id: str, timeout: float = 30) -> None:
        await self.until(
            lambda: any(c["execution_state"] == "idle" for c in self.of(msg_id, "status")), timeout
        )
        errors = self.of(msg_id, "error")
        assert not errors, "\n".join(errors[0]["traceback"])

    def events(self, msg_id: str) -> list[dict[str, Any]]:
        """The chat events the kernel sent to the widget over its comm."""
        return [
            event
            for c in self.of(msg_id, "comm_msg")
            if c["data"].get("method") == "custom" and "events" in c["data"]["content"]
            for event in c["data"]["content"]["events"]
        ]

    def widget_comm(self, msg_id: str) -> str:
        for c in self.of(msg_id, "comm_msg"):
            if c["data"].get("method") == "custom":
                return str(c["comm_id"])
        raise AssertionError("no widget comm")

    def send_to_widget(self, comm_id: str, content: dict[str, Any]) -> None:
        """What the widget's model.send() puts on the shell channel."""
        data = {"comm_id": comm_id, "data": {"method": "custom", "content": content}}
        self.client.shell_channel.send(self.client.session.msg("comm_msg", data))

    async def stop(self) -> None:
        self._reader.cancel()
        self.client.stop_channels()


@pytest.fixture
async def local_kernel() -> AsyncIterator[Frontend]:
    """A kernel no Jupyter server started (local mode), as nbval or VS Code runs one."""
    env = {k: v for k, v in os.environ.items() if k not in (URL_ENV, SECRET_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    env["ACP_DEMO_DELAY"] = "0"
    manager: AsyncKernelManager
    manager, client = await start_new_async_kernel(kernel_name="python3", env=env)
    frontend = Frontend(client)
    yield frontend
    await frontend.stop()
    await manager.shutdown_kernel(now=True)
