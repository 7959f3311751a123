"""What the demo agent says back about the answer its question got."""

from __future__ import annotations

import json
from typing import Any


def demo_answer(text: str) -> Any:
    """The answer in the demo agent's ``elicitation answered: <json>`` reply."""
    return json.loads(text.split("elicitation answered: ", 1)[1])
