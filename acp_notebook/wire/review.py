"""The review of a notebook edit, as the chat session (bridge) and the edit tools
(notebook_tools) both see it: neither imports the other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NamedTuple

from .contracts import CellEdit


class Review(NamedTuple):
    """How the review of one edit ended: ``detail`` says who decided, or why it ended
    unanswered (timed out, cancelled with the turn), for the agent."""

    accepted: bool
    detail: str


# Asks for the review of one edit (a card, a policy, an earlier approval); waits for it.
EditReview = Callable[[CellEdit], Awaitable[Review]]
