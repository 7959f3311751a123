"""Notebook frontends on a kernel's own channels (jupyter_client), and kernels that no
Jupyter server started (local mode, as nbval or VS Code runs one)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.multikernelmanager import AsyncMultiKernelManager

from acp_notebook.wire.kernel_auth import SECRET_ENV, URL_ENV

from .server_peers import until


def local_env() -> dict[str, str]:
    """A kernel's env without the extension's (its chats run in local mode), on our path."""
    env = {k: v for k, v in os.environ.items() if k not in (URL_ENV, SECRET_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return env


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

    def chat_comm(self, msg_id: str) -> str:
        """The comm of the Chat widget the cell ``msg_id`` displayed."""
        return next(
            c["comm_id"]
            for c in self.of(msg_id, "comm_open")
            if "chat_id" in json.dumps(c["data"]["state"])
        )

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


class Cells:
    """Runs code in a kernel over its own channels, as a notebook frontend would."""

    def __init__(self, client: AsyncKernelClient) -> None:
        self.client = client
        self.stdout: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self.idle: set[str] = set()
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while True:
            msg = await self.client.get_iopub_msg()
            parent = msg["parent_header"].get("msg_id", "")
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content["name"] == "stdout":
                self.stdout[parent] = self.stdout.get(parent, "") + content["text"]
            elif kind == "error":
                self.errors[parent] = "\n".join(content["traceback"])
            elif kind == "status" and content["execution_state"] == "idle":
                self.idle.add(parent)
            self._changed.set()

    def execute(self, code: str) -> str:
        return str(self.client.execute(code))

    async def line(self, msg_id: str, prefix: str, timeout: float = 30) -> Any:
        """The JSON after ``prefix`` in a line the cell printed."""

        def find() -> Any:
            if msg_id in self.errors:
                raise AssertionError(self.errors[msg_id])
            for line in self.stdout.get(msg_id, "").splitlines():
                if line.startswith(prefix):
                    return json.loads(line[len(prefix) :])
            return None

        return await until(find, self._changed, timeout)

    async def finished(self, msg_id: str, timeout: float = 30) -> None:
        await until(lambda: msg_id in self.idle, self._changed, timeout)

    async def run(self, code: str, timeout: float = 30) -> str:
        """Run a cell to its end; its stdout. Fails on an exception in the cell."""
        msg_id = self.execute(code)
        await self.finished(msg_id, timeout)
        assert msg_id not in self.errors, self.errors[msg_id]
        return self.stdout.get(msg_id, "")

    def busy(self, msg_id: str) -> bool:
        return msg_id not in self.idle

    async def stop(self) -> None:
        self._reader.cancel()
        self.client.stop_channels()


def kernel_manager(where: Path) -> AsyncMultiKernelManager:
    """Kernels whose connection files go in ``where``: by default they land in the working
    directory, the checkout, where a kernel that is not shut down leaves its file."""
    return AsyncMultiKernelManager(connection_dir=str(where))


async def local_kernel(manager: AsyncMultiKernelManager) -> tuple[str, Cells]:
    """A kernel no Jupyter server started (no extension env: its chats run in local mode)."""
    kernel_id = await manager.start_kernel(kernel_name="python3", env=local_env())
    client = manager.get_kernel(kernel_id).client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    return kernel_id, Cells(client)
