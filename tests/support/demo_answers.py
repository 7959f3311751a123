"""What the demo agent says back about the answer its question got."""

from __future__ import annotations

import json
from typing import Any

RECEIVED = "What the agent received: "


def demo_answer(text: str) -> Any:
    """The answer in the demo agent's reply to one (``demo.agent.answer_words``): the JSON
    it received, in backticks (in the page, Markdown shows it as code, without them)."""
    return json.loads(text.split(RECEIVED, 1)[1].strip().strip("`"))
