"""Attachments through a Chat in local mode to the real demo agent, which echoes them."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

from acp_notebook.kernel import transcript
from acp_notebook.kernel.chat import Chat, ChatError
from acp_notebook.wire.attachment_blocks import AttachmentError

matplotlib.use("Agg")
from matplotlib.figure import Figure


def figure() -> Figure:
    fig = Figure(figsize=(4, 3), dpi=100)
    fig.add_subplot().bar(["a", "b"], [3, 5])
    return fig


async def test_a_dataframe_and_a_figure_reach_the_agent() -> None:
    chat = Chat("demo", env={"ACP_DEMO_DELAY": "0"}, transport="local")
    try:
        df = pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [3, 19]})
        turn = await chat.ask("what do you see?", attach={"df": df, "fig": figure()})
        assert turn.ok, turn
        # The demo names each attachment as people do, not by its URI.
        assert "- df: pandas DataFrame `df`: 2 rows × 2 columns (" in turn.text
        assert "notebook://" not in turn.text
        assert "- image: " in turn.text and ", PNG 400×300" in turn.text
        user = chat.state["items"][0]
        assert user["text"] == "what do you see?"
        assert [a["label"] for a in user["attachments"]] == [
            "df · DataFrame 2×2",
            "fig · PNG 400×300",
        ]
        assert user["attachments"][1]["thumbnail"].startswith("data:image/jpeg;base64,")
        saved = transcript.compact(chat.state)["items"][0]["attachments"]
        assert "thumbnail" not in saved[1]
        html = transcript.render_html(chat.state)
        assert "[📎 df · DataFrame 2×2] [🖼 fig · PNG 400×300]" in html
        # A bad attachment: a clear error and no turn.
        with pytest.raises(AttachmentError, match=r"cannot attach a builtins\.object"):
            chat.send_prompt("again", attach=[df, object()])
        assert len([i for i in chat.state["items"] if i["type"] == "user"]) == 1
    finally:
        chat.close()


async def test_an_agent_without_image_support_gets_nothing() -> None:
    chat = Chat("demo", env={"ACP_DEMO_DELAY": "0", "ACP_DEMO_TEXT_ONLY": "1"}, transport="local")
    try:
        await chat.ready()
        with pytest.raises(ChatError, match="demo does not accept images"):
            await chat.ask("look", attach=[figure()])
        assert chat.state["items"] == []
        # An embedded resource goes as text instead (the stated fallback).
        turn = await chat.ask("table", attach={"df": pd.DataFrame({"a": [1]})})
        assert turn.ok and "Received" not in turn.text
        assert "notebook://variables/df" in turn.text  # the demo echoes the joined text
    finally:
        chat.close()
