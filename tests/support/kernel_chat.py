"""A turn of a ``chat`` that lives in a real kernel, driven from the test with cells.

The turn is started with ``send_prompt`` and polled with short cells, as a person
leaves the kernel idle while the agent works: ``run_code`` queues behind a running
cell like any cell, so a cell that blocked until the turn ended would wait on itself.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol


class Cells(Protocol):
    async def run(self, code: str, timeout: float = 30) -> str: ...


async def kernel_turn(cells: Cells, prompt: str, timeout: float = 120) -> dict[str, Any]:
    """Send ``prompt`` to the kernel's ``chat``; the ended turn's ok, text and error."""
    number = json.loads(await cells.run(f"print(chat.send_prompt({prompt!r}))"))
    async with asyncio.timeout(timeout):
        while True:
            out = await cells.run(
                "import json as _json\n"
                "try:\n"
                f"    _t = chat.wait({number}, timeout=0.1)\n"
                "    print(_json.dumps({'ok': _t.ok, 'text': _t.text, 'error': _t.error}))\n"
                "except TimeoutError:\n"
                "    print('null')\n"
            )
            if (ended := json.loads(out)) is not None:
                return dict(ended)
            await asyncio.sleep(0.3)
