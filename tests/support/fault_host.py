"""A small server: one Hub, one chat with the fault agent, until it is signalled.

    python fault_host.py FAULT POINT LOG

Prints ``{"reaper": pid, "agent": pid}`` once the chat is ready. SIGTERM is a
graceful shutdown (the Hub closes its chats, as the Jupyter server's does);
SIGKILL leaves nobody to close anything.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

from acp_notebook.bridge.hub import Hub

FAULT_AGENT = Path(__file__).with_name("agents") / "fault_agent.py"


async def main() -> None:
    fault, point, log = sys.argv[1:4]
    hub = Hub()
    chat_id = await hub.open_chat(
        command=[sys.executable, str(FAULT_AGENT), fault, point, log], env={}, owner="host"
    )
    await hub.chats[chat_id].start_task
    conn = hub.chats[chat_id].session.conn
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print(json.dumps({"reaper": conn.pid, "agent": conn.agent_pid}), flush=True)
    await stop.wait()
    await hub.close()


if __name__ == "__main__":
    asyncio.run(main())
