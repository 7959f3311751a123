"""Where the demo agent keeps its sessions, so a new agent process can load them.

One JSON file per session in ``$ACP_DEMO_SESSIONS``, or else
``$XDG_DATA_HOME/acp-notebook/demo-sessions`` (``~/.local/share`` by default). A file
holds the session's cwd, title, mode, last change and the ``session/update`` objects
to replay on ``session/load``, bounded in count and size. Standard library only: the
demo agent must start fast.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..wire.clip import clip

Json = dict[str, Any]

# What one session keeps for a replay: the newest updates, up to these bounds.
MAX_UPDATES = 2000
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_TITLE = 120
_ID = re.compile(r"demo-[0-9a-f]{32}")


def store_dir() -> Path:
    configured = os.environ.get("ACP_DEMO_SESSIONS")
    if configured:
        return Path(configured)
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "acp-notebook" / "demo-sessions"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class Record:
    """What a session leaves on disk."""

    session_id: str
    cwd: str
    title: str = ""
    mode: str = "default"
    updated_at: str = field(default_factory=now_iso)
    updates: list[Json] = field(default_factory=list)

    def add(self, update: Json) -> None:
        self.updates.append(update)
        if len(self.updates) > MAX_UPDATES:
            del self.updates[: len(self.updates) - MAX_UPDATES]

    def info(self) -> Json:
        """The record as a ``session/list`` entry (ACP ``SessionInfo``)."""
        info: Json = {"sessionId": self.session_id, "cwd": self.cwd, "updatedAt": self.updated_at}
        if self.title:
            info["title"] = self.title
        return info


def _path(session_id: str) -> Path | None:
    # Ids name files: only our own shape, never a path a client made up.
    return store_dir() / f"{session_id}.json" if _ID.fullmatch(session_id) else None


def save(record: Record) -> None:
    path = _path(record.session_id)
    if path is None:
        return
    record.updated_at = now_iso()
    data = {
        "sessionId": record.session_id,
        "cwd": record.cwd,
        "title": record.title,
        "mode": record.mode,
        "updatedAt": record.updated_at,
        "updates": record.updates,
    }
    text = json.dumps(data, separators=(",", ":"))
    while len(text) > MAX_FILE_BYTES and data["updates"]:
        data["updates"] = data["updates"][len(data["updates"]) // 2 :]  # drop the oldest half
        text = json.dumps(data, separators=(",", ":"))
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole, then renamed: a reader never sees half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)


def delete(session_id: str) -> bool:
    """Remove a stored session; False when there is none of that id."""
    path = _path(session_id)
    if path is None:
        return False
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def _read(path: Path) -> Record | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    fields = (data.get("sessionId"), data.get("cwd"), data.get("title"), data.get("mode"))
    updates = data.get("updates")
    if not all(isinstance(v, str) for v in fields) or not isinstance(updates, list):
        return None
    return Record(
        data["sessionId"],
        data["cwd"],
        data["title"],
        data["mode"],
        str(data.get("updatedAt") or ""),
        [u for u in updates if isinstance(u, dict)],
    )


def load(session_id: str) -> Record | None:
    path = _path(session_id)
    return _read(path) if path is not None else None


def listing(cwd: str | None) -> list[Record]:
    """Every stored session (of ``cwd`` when given), the most recent first."""
    try:
        paths = list(store_dir().glob("demo-*.json"))
    except OSError:
        return []
    records = [r for r in map(_read, paths) if r is not None and (cwd is None or r.cwd == cwd)]
    return sorted(records, key=lambda r: r.updated_at, reverse=True)


def title_of(prompt: str) -> str:
    line = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return clip(line, MAX_TITLE)
