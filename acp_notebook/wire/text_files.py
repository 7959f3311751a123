"""Files the agent reads and writes through the client (ACP's ``fs/read_text_file`` and
``fs/write_text_file``), as the chat session (bridge) and the file access behind it
(notebook_tools) both see them: neither imports the other."""

from __future__ import annotations

from typing import NamedTuple

from .contracts import MAX_FILE_TEXT

# Bytes of a file read at all (a read may ask for a few lines of it): a larger one is
# refused before it is read.
MAX_FILE_BYTES = 16 * 1024 * 1024


class FileRefused(Exception):
    """A read or write not done; the message is for the agent (it says why)."""


class OpenText(NamedTuple):
    """A file as the user has it now: ``text`` is None when there is no such file;
    ``where`` names the editor that has it open (its unsaved changes included), None for
    the file on disk; ``path`` is how the person knows it (relative to the root);
    ``unwritable`` says why a write to it is refused before anyone is asked (None: it may
    be written)."""

    path: str
    text: str | None
    where: str | None
    unwritable: str | None = None


def select_lines(text: str, line: int | None, limit: int | None) -> str:
    """``text`` from its 1-based ``line`` on, at most ``limit`` lines (ACP's read); more
    than ``MAX_FILE_TEXT`` characters is refused, saying how to read less."""
    if (line is not None and line < 1) or (limit is not None and limit < 1):
        raise FileRefused("line and limit are at least 1")
    if line is not None or limit is not None:
        lines = text.splitlines(keepends=True)
        start = (line or 1) - 1
        text = "".join(lines[start : None if limit is None else start + limit])
    if len(text) > MAX_FILE_TEXT:
        raise FileRefused(
            f"the text asked for is {len(text):,} characters; at most {MAX_FILE_TEXT:,} are"
            " read at once: read fewer lines (line, limit)"
        )
    return text
