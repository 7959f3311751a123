"""The notebook tools through the real claude wrapper (it offers them to the model
directly here; a ToolSearch first is refused): the chat lives in a real kernel
(local mode), the mocked model calls ``mcp__notebook__*`` and the test reads what each
tool returned in the ``tool_result`` the model received.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.notebook_tools.cells import revision
from tests.support.frontend import Cells, kernel_manager, local_kernel
from tests.support.kernel_chat import kernel_turn
from tests.support.mock_anthropic import MockAnthropic, text, tool_use

pytestmark = pytest.mark.usefixtures("wrapper_bin")

TOOLS = [
    f"mcp__notebook__{t}"
    for t in ("list_variables", "inspect_variable", "last_error", "read_cells")
]
RUN = "mcp__notebook__run_code"
FIGURE = "import matplotlib.pyplot as plt\nplt.bar(['north', 'south'], [1, 2])\nplt.show()"


@pytest.fixture
async def kernel(
    wrapper_bin: Path, claude_env: dict[str, str], workdir: Path, tmp_path_factory: Any
) -> AsyncIterator[Cells]:
    """A kernel (no server extension: local mode) holding ``chat``, a claude-code chat on
    the mock API whose permission policy allows everything but code that mentions
    ``rejected_marker``; every permission request is kept in ``permissions``."""
    manager = kernel_manager(tmp_path_factory.mktemp("kernels"))
    _kernel_id, cells = await local_kernel(manager)
    agent_env = {**claude_env, "PATH": f"{wrapper_bin.parent}{os.pathsep}{claude_env['PATH']}"}
    await cells.run(
        "import json\n"
        "import pandas as pd\n"
        "sales = pd.DataFrame({'region': ['north', 'south', 'east'], "
        "'revenue': [120.5, 98.0, 143.25]})\n"
        "from acp_notebook.kernel.chat import Chat\n"
        "permissions = []\n"
        "def policy(request):\n"
        "    permissions.append(request)\n"
        "    code = (request['toolCall'].get('rawInput') or {}).get('code', '')\n"
        "    return 'reject' if 'rejected_marker' in code else 'allow'\n"
        f"chat = Chat('claude-code', env=json.loads({json.dumps(agent_env)!r}), "
        f"cwd={str(workdir)!r}, transport='local')\n"
        "chat.on_permission(policy)\n",
        timeout=60,
    )
    yield cells
    await cells.run("chat.close()")
    await cells.stop()
    await manager.shutdown_all(now=True)


def result_text(mock: MockAnthropic, tool: str, index: int = 0) -> str:
    results = mock.tool_results(tool)
    assert len(results) > index, f"no result of {tool}"
    assert not results[index].is_error, results[index].text
    return results[index].text


def result_images(mock: MockAnthropic, tool: str) -> list[dict[str, Any]]:
    """The image blocks of ``tool``'s results, as the model received them."""
    images = []
    for request in mock.main_requests:
        names = {r.tool_use_id for r in request.tool_results if r.tool_name == tool}
        for message in request.new_messages:
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("tool_use_id") in names:
                    content = block.get("content")
                    images += [
                        b for b in content or [] if isinstance(b, dict) and b.get("type") == "image"
                    ]
    return images


async def test_the_model_reads_the_notebook_and_runs_code(
    kernel: Cells, mock_api: MockAnthropic
) -> None:
    failing = "revenue_by_region = sales.set_index('region')['revenue']\nsales['profit']"
    failed = kernel.execute(failing)
    await kernel.finished(failed)
    mock_api.on_user("Look at my notebook", tool_use(TOOLS[0], {}))
    mock_api.on_tool_result(TOOLS[0], tool_use(TOOLS[1], {"name": "sales"}))
    mock_api.on_tool_result(TOOLS[1], tool_use(TOOLS[2], {}))
    mock_api.on_tool_result(TOOLS[2], tool_use(TOOLS[3], {"start": 0, "count": 10}))
    mock_api.on_tool_result(
        TOOLS[3], tool_use(RUN, {"code": "total = sales['revenue'].sum()\nprint('total', total)"})
    )
    mock_api.on_tool_result(RUN, tool_use(RUN, {"code": FIGURE}), contains="total 361.75")
    mock_api.on_tool_result(RUN, text("Revenue is 361.75 in total."))

    ended = await kernel_turn(kernel, "Look at my notebook")
    assert ended["ok"] and ended["text"] == "Revenue is 361.75 in total.", ended

    listing = result_text(mock_api, TOOLS[0])
    assert "sales: pandas.DataFrame, (3, 2)" in listing and "revenue (float64)" in listing
    inspected = result_text(mock_api, TOOLS[1])
    assert "region:" in inspected and "revenue: float64" in inspected and "143.25" in inspected
    error = result_text(mock_api, TOOLS[2])
    assert "KeyError: 'profit'" in error and "sales['profit']" in error
    cells = result_text(mock_api, TOOLS[3])  # no notebook in local mode: the kernel's history
    assert f"--- In[2] rev={revision('code', failing)}\n{failing}" in cells
    assert "no cell ids" in cells
    assert "total 361.75" in result_text(mock_api, RUN, 0)
    [image] = result_images(mock_api, RUN)
    assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")
    # The code ran in the user's namespace.
    assert "361.75" in await kernel.run("print(total)")
    # Each run_code was asked for first, with the code in the permission's tool call.
    asked = json.loads(
        await kernel.run(
            "print(json.dumps([p['toolCall'].get('rawInput', {}).get('code') for p in permissions"
            f" if p['toolCall'].get('title') == {RUN!r}]))"
        )
    )
    assert asked == ["total = sales['revenue'].sum()\nprint('total', total)", FIGURE]


async def test_a_rejected_run_code_runs_nothing(kernel: Cells, mock_api: MockAnthropic) -> None:
    code = "rejected_marker = 1\nsales.drop(columns=['revenue'], inplace=True)"
    mock_api.on_user("Drop the revenue", tool_use(RUN, {"code": code}))
    mock_api.on_tool_result(RUN, text("You declined."))

    ended = await kernel_turn(kernel, "Drop the revenue")
    assert ended["ok"], ended
    [rejected] = mock_api.tool_results(RUN)
    assert rejected.is_error  # the CLI reports the refusal to the model
    out = await kernel.run(
        "print(json.dumps(['rejected_marker' in globals(), list(sales.columns)]))"
    )
    assert json.loads(out) == [False, ["region", "revenue"]]
