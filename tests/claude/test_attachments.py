"""Attachments reach the model through the real claude wrapper: the figure as a base64
PNG image block, the DataFrame as context carrying its columns."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any

import matplotlib
import pandas as pd
import pytest
from PIL import Image

from acp_notebook.kernel.chat import Chat
from tests.support.chat_waits import ready
from tests.support.mock_anthropic import MockAnthropic, text

matplotlib.use("Agg")
from matplotlib.figure import Figure

pytestmark = pytest.mark.usefixtures("wrapper_bin")


def user_blocks(mock: MockAnthropic, prompt: str) -> list[dict[str, Any]]:
    """The content blocks of the user message that carried ``prompt``."""
    for request in mock.main_requests:
        if prompt in request.prompt_texts:
            return [
                b
                for m in request.new_messages
                if m.get("role") == "user" and isinstance(m.get("content"), list)
                for b in m["content"]
                if isinstance(b, dict)
            ]
    raise AssertionError(f"no request carried {prompt!r}")


async def test_a_figure_and_a_dataframe_reach_the_model(
    claude_chat: Callable[..., Chat], mock_api: MockAnthropic
) -> None:
    chat = claude_chat()
    await ready(chat)
    prompt = "Which city is warmer, and what does the chart show?"
    # The wrapper appends embedded context after the prompt's text: match any text block.
    mock_api.on(lambda r: prompt in r.prompt_texts, text("Lima is warmer; there are two bars."))
    df = pd.DataFrame({"city": ["Oslo", "Lima"], "temperature_c": [3, 19]})
    fig = Figure(figsize=(4, 3), dpi=100)
    fig.add_subplot().bar(df["city"], df["temperature_c"])

    turn = await chat.ask(prompt, attach={"df": df, "fig": fig})
    assert turn.ok and "Lima is warmer" in turn.text, turn

    blocks = user_blocks(mock_api, prompt)
    [image] = [b for b in blocks if b.get("type") == "image"]
    assert image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"
    png = base64.b64decode(image["source"]["data"], validate=True)
    with Image.open(io.BytesIO(png)) as decoded:
        decoded.verify()
        assert (decoded.format, decoded.size) == ("PNG", (400, 300))
    texts = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    assert "notebook://variables/df" in texts
    assert "city: " in texts and "temperature_c: int64" in texts
    assert "Oslo,3" in texts and "Lima,19" in texts
