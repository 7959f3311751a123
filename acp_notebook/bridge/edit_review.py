"""How a chat decides the review of a notebook edit, without I/O.

As the ledger decides requests, ``EditReviews`` decides edits: the chat's "accept edits"
setting, "Accept all in this turn", the edits the person already allowed through the
agent's own permission request (used once each), and the per-turn cap. What it cannot
decide becomes a card (a permission request of the chat's own, ``card``), and
``outcome`` reads that card's answer. The chat session registers the card, waits for it
and emits the events.
"""

from __future__ import annotations

from typing import Any

from ..wire.contracts import Edit, PermissionRequestEvent, PermissionResolvedEvent
from ..wire.review import Review

# Notebook edits one turn may have reviewed; more are refused (an agent in a loop must
# not bury the person under cards).
MAX_EDITS_PER_TURN = 1000
# Edits allowed through the agent's own requests and not yet made, kept at most.
MAX_APPROVED = 32
# The options of an edit's review card.
EDIT_OPTIONS = [
    {"optionId": "accept", "name": "Accept", "kind": "allow_once"},
    {"optionId": "accept_turn", "name": "Accept all in this turn", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
ACCEPT_TURN = "accept_turn"


def edit_title(edit: Edit) -> str:
    """A review card's short title: "Insert a code cell at 3", "Write notes.md"."""
    if edit["op"] == "write":
        return f"{'Create' if edit['created'] else 'Write'} {edit['path']}"
    op, index = edit["op"], edit["index"]
    if op == "insert":
        return f"Insert a {edit['cellType']} cell at {index}"
    if op == "move":
        return f"Move cell {index} to {edit.get('toIndex')}"
    return f"{'Edit' if op == 'edit' else 'Delete'} cell {index}"


def card(edit: Edit, tool_call_id: str | None) -> PermissionRequestEvent:
    """The review card of ``edit``, under the tool call that makes it when known."""
    tool_call: dict[str, Any] = {"title": edit_title(edit), "kind": "edit"}
    if tool_call_id is not None:
        tool_call = {"toolCallId": tool_call_id, **tool_call}
    return {
        "kind": "permission_request",
        "toolCall": tool_call,
        "options": [dict(option) for option in EDIT_OPTIONS],
        "edit": edit,
    }


def allows(event: PermissionRequestEvent, option_id: str | None) -> bool:
    """Whether ``option_id`` is one of ``event``'s allow options."""
    kinds = [o.get("kind") for o in event["options"] if o.get("optionId") == option_id]
    return bool(kinds) and str(kinds[0]).startswith("allow")


def edited_paths(tool_call: Any) -> set[str]:
    """The files an agent's edit tool call names (its locations, its diffs, its input's
    path); none for a call of another kind (a read allowed is no write allowed)."""
    if not isinstance(tool_call, dict) or tool_call.get("kind") != "edit":
        return set()
    named: list[Any] = []
    for key in ("locations", "content"):
        entries = tool_call.get(key)
        named += (
            [e.get("path") for e in entries if isinstance(e, dict)]
            if isinstance(entries, list)
            else []
        )
    raw = tool_call.get("rawInput")
    if isinstance(raw, dict):
        named += [raw.get(key) for key in ("filepath", "file_path", "path")]
    return {p for p in named if isinstance(p, str)}


def _key(edit: Edit) -> dict[str, Any]:
    """What two edits must share to be the same edit (an absent field is a None one)."""
    return {key: value for key, value in edit.items() if value is not None}


def _by(what: str, by: str | None) -> str:
    return f"{what} by {by}" if by else what


class EditReviews:
    """One chat's review state: its setting, this turn's choices and approvals."""

    def __init__(self) -> None:
        self.accept_edits = False
        self._accept_turn: str | None = None  # who chose "Accept all in this turn"
        self._turn_edits = 0
        self._told_cap = False
        self._approved: list[tuple[dict[str, Any], str | None]] = []
        # Files the person let the agent change through its own requests, this turn.
        self._allowed_paths: set[str] = set()
        # For the person, once per turn: edits over the cap are refused.
        self.notice: str | None = None

    def allow_paths(self, paths: set[str]) -> None:
        """The person allowed an agent's own request that changes ``paths``."""
        if len(self._allowed_paths) < MAX_APPROVED:
            self._allowed_paths |= paths

    def allowed_path(self, path: str) -> bool:
        """Whether a write to ``path`` was allowed already (once: the next one asks)."""
        if path not in self._allowed_paths:
            return False
        self._allowed_paths.discard(path)
        return True

    def approve(self, edit: Edit, by: str | None) -> None:
        """The person allowed the agent's own request for ``edit``: its tool is not asked."""
        self._approved.append((_key(edit), by))
        del self._approved[:-MAX_APPROVED]

    def decide(self, edit: Edit) -> Review | None:
        """The review of ``edit`` when it needs no card; None: a card asks the person.
        Over the cap the first refusal of the turn also sets ``notice``."""
        self.notice = None
        self._turn_edits += 1
        if self._turn_edits > MAX_EDITS_PER_TURN:
            if not self._told_cap:
                self._told_cap = True
                self.notice = (
                    f"the agent made more than {MAX_EDITS_PER_TURN} notebook edits in one"
                    " turn; the ones beyond are refused"
                )
            return Review(
                False,
                f"refused: more than {MAX_EDITS_PER_TURN} edits in one turn; end the turn first",
            )
        key = _key(edit)
        for n, (approved, by) in enumerate(self._approved):
            if approved == key:
                del self._approved[n]
                return Review(True, _by("accepted", by))
        if self.accept_edits:
            return Review(True, "accepted by the chat's accept-edits setting")
        if self._accept_turn is not None:
            return Review(True, f"accepted: {self._accept_turn} chose to accept all in this turn")
        return None

    def outcome(
        self, resolved: PermissionResolvedEvent, answer_timeout: float, ended: bool
    ) -> Review:
        """The review a settled card gives (``ended``: the chat is gone)."""
        by = resolved.get("by")
        if resolved["outcome"] == "timeout":
            return Review(False, f"not reviewed within {answer_timeout:g} s")
        if resolved["outcome"] == "cancelled":
            if by == "teardown" or ended:
                return Review(False, "the chat ended")
            if by:
                return Review(False, f"cancelled by {by}")
            return Review(False, "cancelled: the turn was cancelled")
        option = resolved.get("optionId")
        if option == ACCEPT_TURN:
            self._accept_turn = by or "the person"
        if option in ("accept", ACCEPT_TURN):
            return Review(True, _by("accepted", by))
        return Review(False, _by("rejected", by))

    def end_turn(self) -> None:
        """What the turn allowed ends with it."""
        self._accept_turn = None
        self._turn_edits = 0
        self._told_cap = False
        self._approved.clear()
        self._allowed_paths.clear()
