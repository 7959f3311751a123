"""Jupyter Enterprise Gateway for the tests of kernels on other machines.

EG 3.3 pins jupyter_server<2 and jupyter_client<7, so it runs from its own environment
(``.venv-gateway``, built by ``make`` from ``tests/gateway/requirements.txt``; built here
when missing). It runs its kernels as local processes, with a kernelspec whose argv is
this environment's python (the kernel imports acp_notebook from this checkout).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from .lab import REPO, START_TIMEOUT, TOKEN, free_port
from .user_env import user_env

VENV = REPO / ".venv-gateway"
STAMP = VENV / ".installed"
# The user EG runs kernels as (it refuses root without one), sent by the Lab server.
KERNEL_USERNAME = "acp-gateway-test"


def ensure_venv() -> Path:
    """The gateway's environment, built by the Makefile's rule when missing."""
    if not STAMP.exists():
        subprocess.run(
            ["make", "-C", str(REPO), str(STAMP.relative_to(REPO)), f"PY={sys.executable}"],
            check=True,
        )
    return VENV / "bin" / "jupyter-enterprisegateway"


@dataclass
class Gateway:
    """A running Enterprise Gateway; ``restart()`` stops it and starts it on the same port."""

    base: Path
    port: int
    proc: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kernel_ids(self) -> list[str]:
        with urllib.request.urlopen(f"{self.url}/api/kernels", timeout=5) as response:
            return [k["id"] for k in json.load(response)]

    def stop(self) -> None:
        """SIGTERM: EG shuts down every kernel it runs, then exits."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)

    def restart(self) -> None:
        self.stop()
        self.proc = start_process(self.base, self.port)
        wait_until_up(self)


def write_kernelspec(data: Path) -> None:
    spec = data / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    # EG gives a kernel only the variables it is told to: the kernelspec's, the request's.
    env = {"PYTHONPATH": str(REPO)}  # this checkout's acp_notebook
    (spec / "kernel.json").write_text(
        json.dumps(
            {"argv": argv, "env": env, "display_name": "Python 3 (gateway)", "language": "python"}
        )
    )


def start_process(base: Path, port: int) -> subprocess.Popen[bytes]:
    dirs = {name: base / name for name in ("data", "runtime", "home", "config")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    env = user_env("JUPYTER", "KERNEL_")
    env.update(
        HOME=str(dirs["home"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_PREFER_ENV_PATH="0",
        EG_LIST_KERNELS="True",  # the Lab server lists kernels (and finds culled ones) by it
    )
    argv = [str(ensure_venv()), "--ip=127.0.0.1", f"--port={port}", "--port_retries=0"]
    with (base / "gateway.log").open("ab") as out:
        return subprocess.Popen(
            argv, env=env, cwd=base, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def wait_until_up(gateway: Gateway) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if gateway.proc.poll() is not None:
            log = (gateway.base / "gateway.log").read_text(errors="replace")
            raise RuntimeError(f"Enterprise Gateway exited ({gateway.proc.returncode}):\n{log}")
        with contextlib.suppress(OSError, urllib.error.URLError):
            gateway.kernel_ids()
            return
        if time.monotonic() > deadline:
            gateway.stop()
            raise RuntimeError(f"Enterprise Gateway did not answer in {START_TIMEOUT} s")
        time.sleep(0.2)


def start_gateway(base: Path) -> Gateway:
    base.mkdir(parents=True, exist_ok=True)
    write_kernelspec(base / "data")
    port = free_port()
    gateway = Gateway(base, port, start_process(base, port))
    wait_until_up(gateway)
    return gateway


class ChannelsClient:
    """A notebook frontend's kernel client over the Lab server's kernel WebSocket
    (``/api/kernels/<id>/channels``, the legacy JSON protocol): what ``Cells`` drives."""

    def __init__(self, ws: WebSocketClientConnection) -> None:
        self.ws = ws
        self.session = uuid.uuid4().hex
        self._iopub: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(
        cls, port: int, kernel_id: str, headers: dict[str, str] | None = None
    ) -> ChannelsClient:
        """Logged in by ``headers`` (a login's cookies), else by the token."""
        url = f"ws://127.0.0.1:{port}/api/kernels/{kernel_id}/channels"
        if headers is None:
            url += f"?token={TOKEN}"
        return cls(await websocket_connect(HTTPRequest(url, headers=headers)))

    async def _read(self) -> None:
        while (raw := await self.ws.read_message()) is not None:
            msg = json.loads(raw)
            if msg.get("channel") == "iopub":
                self._iopub.put_nowait(msg)

    async def get_iopub_msg(self) -> dict[str, Any]:
        return await self._iopub.get()

    def execute(self, code: str) -> str:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "session": self.session,
            "username": "test",
            "date": "",
            "version": "5.3",
        }
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
        self.ws.write_message(json.dumps({**message, "channel": "shell", "buffers": []}))
        return msg_id

    def stop_channels(self) -> None:
        self._reader.cancel()
        self.ws.close()
