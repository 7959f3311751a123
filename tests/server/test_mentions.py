"""The composer's @ mentions: the kernel's variables and one as an attachment, through
the hub, read by the notebook tools' reader. Server mode answers while a cell blocks."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

from tests.support.frontend import Frontend
from tests.support.server_peers import OPEN_CHAT

FRAME = "import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp_c': [3, 19]})\n"


async def test_mentions_in_server_mode_while_a_cell_blocks(
    start_kernel: Any, cells: Any, browser: Any
) -> None:
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    opened = kernel.execute(FRAME + OPEN_CHAT)
    ids = await kernel.line(opened, "chat:")
    await kernel.finished(opened)
    blocking = kernel.execute("import time\ntime.sleep(20)")
    tab = await browser(kernel_id, ids["chat"])

    listed = await tab.request({"type": "chat:variables", "chatId": ids["chat"]})
    assert listed["accepted"], listed
    assert {"name": "df", "type": "pandas.DataFrame"} in listed["variables"]
    assert all(not v["name"].startswith("_") for v in listed["variables"])

    picked = await tab.request({"type": "chat:mention", "chatId": ids["chat"], "name": "df"})
    assert picked["accepted"], picked
    attachment = picked["attachment"]
    assert attachment["label"] == "df · DataFrame 2×2"
    text = attachment["block"]["resource"]["text"]
    assert "city: " in text and "Oslo,3" in text

    missing = await tab.request({"type": "chat:mention", "chatId": ids["chat"], "name": "nope"})
    assert missing["error"] == "INVALID" and "no variable named 'nope'" in missing["detail"]
    assert kernel.busy(blocking), "answered while the cell still runs"

    # The mention goes with a prompt as it came.
    ack = await tab.prompt(ids["chat"], "which is warmer?", attachments=[attachment])
    assert ack["accepted"], ack
    await tab.event(ids["chat"], "turn_ended", turn=1)
    assert "- df: pandas DataFrame `df`: 2 rows × 2 columns" in tab.text(ids["chat"])


async def test_mentions_in_local_mode_over_the_comm(local_frontend: Frontend) -> None:
    kernel = local_frontend
    cell = kernel.client.execute(FRAME + "from acp_notebook import Chat\nchat = Chat('demo')\nchat")
    await kernel.finished(cell)
    comm = kernel.chat_comm(cell)

    def acks() -> list[dict[str, Any]]:
        return [
            m["content"]["data"]["content"]
            for m in kernel.messages
            if m["msg_type"] == "comm_msg"
            and m["content"]["comm_id"] == comm
            and "ack" in m["content"]["data"].get("content", {})
        ]

    kernel.send_to_widget(comm, {"type": "chat:variables", "id": "v"})
    listed = await kernel.until(lambda: next((a for a in acks() if a["ack"] == "v"), None))
    assert {"name": "df", "type": "pandas.DataFrame"} in listed["variables"]
    kernel.send_to_widget(comm, {"type": "chat:mention", "name": "df", "id": "m"})
    picked = await kernel.until(lambda: next((a for a in acks() if a["ack"] == "m"), None))
    assert picked["attachment"]["block"]["resource"]["uri"] == "notebook://variables/df"


async def test_a_full_size_image_travels_both_sockets(
    start_kernel: Any, cells: Any, browser: Any
) -> None:
    """An image at its cap goes through the kernel's socket (Chat.ask) and the browser's
    (the widget's prompt); one over the cap is refused with a reason, nothing sent."""
    kernel_id = await start_kernel()
    kernel = await cells(kernel_id)
    opened = kernel.execute(OPEN_CHAT)
    ids = await kernel.line(opened, "chat:")
    await kernel.finished(opened)
    out = await kernel.run(
        "import os\n"
        "from acp_notebook.notebook_tools.attachments import MAX_IMAGE_BYTES\n"
        "noise = b'\\x89PNG\\r\\n\\x1a\\n' + os.urandom(MAX_IMAGE_BYTES - 8)\n"
        "turn = await chat.ask('the kernel sends', attach={'noise': noise})\n"
        "print('text:' + json.dumps(turn.text))",
        timeout=60,
    )
    text = json.loads(out.split("text:", 1)[1])
    assert "- image: 1,050,000 bytes" in text

    tab = await browser(kernel_id, ids["chat"])
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + os.urandom(1_050_000 - 8)).decode()
    image = {"label": "shot", "block": {"type": "image", "mimeType": "image/png", "data": data}}
    ack = await tab.prompt(ids["chat"], "the page sends", attachments=[image])
    assert ack["accepted"], ack
    await tab.event(ids["chat"], "turn_ended", turn=2)
    await tab.resync(ids["chat"])  # both turns
    assert tab.text(ids["chat"]).count("- image: 1,050,000 bytes") == 2

    over = {**image, "block": {**image["block"], "data": data + "AAAA" * 200}}
    refused = await tab.prompt(ids["chat"], "too big", attachments=[over])
    assert refused["error"] == "INVALID" and "1400000" in refused["detail"].replace(",", "")
