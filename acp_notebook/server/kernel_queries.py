"""Server -> kernel questions on the kernel socket (the notebook tools' variable reads).

The server sends a ``KernelQuery`` (``{"type": "kernel:query", "query": n, "tool",
"args"}``) down a kernel's socket; the kernel answers from its socket's loop thread
(never its main thread, so while a cell runs) with a ``KernelAnswer`` (``{"type":
"kernel:answer", "query": n, "text"}`` or ``"error"``). An answer is untrusted input
like any frame: it is validated, and its text is cut.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from ..notebook_tools.mcp_endpoint import KernelUnavailable
from ..wire.contracts import KERNEL_QUERY, MAX_ANSWER, KernelAnswer, KernelQuery, why_invalid

TIMEOUT = 15.0

Send = Callable[[dict[str, Any]], None]


class KernelQueries:
    def __init__(self) -> None:
        self._sockets: dict[str, Send] = {}
        self._waiting: dict[int, tuple[str, asyncio.Future[str]]] = {}
        self._ids = itertools.count(1)

    def attach(self, kernel_id: str, send: Send) -> None:
        """The kernel's socket is up (a newer one replaces an older one)."""
        self._sockets[kernel_id] = send

    def detach(self, kernel_id: str, send: Send) -> None:
        if self._sockets.get(kernel_id) == send:
            del self._sockets[kernel_id]
            for kid, future in self._waiting.values():  # each asker drops its own entry
                if kid == kernel_id and not future.done():
                    future.set_exception(KernelUnavailable("the kernel's socket closed"))

    async def ask(
        self, kernel_id: str, tool: str, args: Mapping[str, Any], timeout: float = TIMEOUT
    ) -> str:
        send = self._sockets.get(kernel_id)
        if send is None:
            raise KernelUnavailable(
                "the kernel is not connected to the server (it has not opened a chat since "
                "it started, or it is restarting)"
            )
        number = next(self._ids)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting[number] = (kernel_id, future)
        try:
            query = KernelQuery(type=KERNEL_QUERY, query=number, tool=tool, args=dict(args))
            send(query.model_dump())
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise KernelUnavailable(f"the kernel did not answer within {timeout:g} s") from None
        finally:
            self._waiting.pop(number, None)

    def answered(self, kernel_id: str, frame: Mapping[str, Any]) -> None:
        """A ``kernel:answer`` from ``kernel_id``'s socket; unknown or foreign ids are dropped."""
        number = frame.get("query")
        waiting = self._waiting.get(number) if isinstance(number, int) else None
        if waiting is None or waiting[0] != kernel_id or waiting[1].done():
            return
        try:
            answer = KernelAnswer.model_validate(frame)
        except ValidationError as exc:
            detail = f"a malformed answer ({why_invalid(exc)})"
        else:
            if answer.text is not None:
                waiting[1].set_result(answer.text[:MAX_ANSWER])
                return
            detail = (answer.error or "no answer")[:500]
        waiting[1].set_exception(KernelUnavailable(f"the kernel could not answer: {detail}"))
