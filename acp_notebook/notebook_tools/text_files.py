"""The files an agent reads and writes through its client (``fs/read_text_file``,
``fs/write_text_file``), confined to one root directory.

Server mode: the server's root directory; a file open in a page's text editor is read
there, unsaved changes included, and written there (one undo step, nothing saved behind
the page); a notebook open in a page is read as that page holds it (unsaved cells
included, as the nbformat text its save would write) and not written; any other file
through the contents manager (so a write is the same save a person's is). Local mode: the kernel's directory, on disk. Paths come
from the agent as absolute paths; one that resolves (symlinks followed) outside the root
is refused, naming the root. A write is made only while the file still holds what its
review showed (``before``): what the person changed meanwhile is never overwritten.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any, Protocol

from jupyter_core.utils import ensure_async

from ..wire.clip import clip
from ..wire.text_files import MAX_FILE_BYTES, FileRefused, OpenText
from .documents import EditRefused
from .page_document import IN_EDITOR, IN_NOTEBOOK

CHANGED = "{path} changed since the write was reviewed; read it again"
NOTEBOOK_OPEN = (
    "{path} is open as a notebook in a page: change it with the notebook tools"
    " (insert_cell, edit_cell, ...), not by writing the file"
)


def confine(root: str, path: str) -> tuple[str, str]:
    """``path`` (absolute) as the real absolute path and the path relative to ``root``;
    ``FileRefused`` when it is relative or resolves outside ``root``."""
    if not os.path.isabs(path):
        raise FileRefused(f"{clip(path, 300)} is not an absolute path")
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root:
        raise FileRefused(
            f"{clip(path, 300)} is outside {real_root}, the only directory this client reads"
            " and writes"
        )
    return real, os.path.relpath(real, real_root).replace(os.sep, "/")


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileRefused(f"{path} is not a UTF-8 text file") from None


def _too_large(path: str, size: int) -> FileRefused:
    return FileRefused(f"{path} is {size:,} bytes; at most {MAX_FILE_BYTES:,} are read")


class DiskFiles:
    """Local mode: files on disk under ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root

    async def read(self, path: str) -> OpenText:
        real, shown = confine(self.root, path)

        def read() -> OpenText:
            try:
                return opened()
            except OSError as exc:  # no permission, a file gone meanwhile
                raise FileRefused(f"{shown} cannot be read: {exc.strerror or exc}") from exc

        def opened() -> OpenText:
            if not os.path.exists(real):
                return OpenText(shown, None, None)
            if not os.path.isfile(real):
                raise FileRefused(f"{shown} is not a file")
            size = os.path.getsize(real)
            if size > MAX_FILE_BYTES:
                raise _too_large(shown, size)
            with open(real, "rb") as file:
                return OpenText(shown, _decode(file.read(), shown), None)

        return await asyncio.to_thread(read)

    async def write(self, path: str, before: str | None, after: str) -> str:
        if (await self.read(path)).text != before:
            raise FileRefused(CHANGED.format(path=path))
        real, shown = confine(self.root, path)

        def write() -> None:
            os.makedirs(os.path.dirname(real), exist_ok=True)
            # A whole new file moved over the old: a reader never sees half of it.
            fd, temporary = tempfile.mkstemp(dir=os.path.dirname(real))
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
                    file.write(after)
                if before is not None:
                    os.chmod(temporary, os.stat(real).st_mode)
                os.replace(temporary, real)
            except BaseException:
                os.unlink(temporary)
                raise

        try:
            await asyncio.to_thread(write)
        except OSError as exc:
            raise FileRefused(f"{shown} cannot be written: {exc.strerror or exc}") from exc
        return "the file on disk"


class OpenEditors(Protocol):
    """The text files and notebooks open in the server's pages (``page_document.Pages``),
    by contents path; each method answers None when no page has the file open."""

    async def editor_text(self, path: str) -> str | None: ...

    async def notebook_text(self, path: str) -> str | None: ...

    async def write_editor(self, path: str, before: str, after: str) -> str | None: ...


class ServerFiles:
    """Server mode: files under the server's root, in the editor of a page that has one
    open, else through the contents manager."""

    def __init__(self, contents_manager: Any, root: str, editors: OpenEditors | None) -> None:
        self._contents = contents_manager
        self.root = root
        self._editors = editors

    async def _model(self, shown: str, content: bool) -> dict[str, Any] | None:
        try:
            if not await ensure_async(self._contents.file_exists(shown)):
                if await ensure_async(self._contents.dir_exists(shown)):
                    raise FileRefused(f"{shown} is not a file")
                return None
            return dict(
                await ensure_async(
                    self._contents.get(shown, content=content, type="file", format="text")
                )
            )
        except FileRefused:
            raise
        except Exception as exc:  # the server's own: a hidden file, a file that is no text
            raise FileRefused(f"{shown} cannot be read: {clip(str(exc), 300)}") from exc

    async def _directories(self, path: str) -> None:
        """The directories ``path`` is in, made through the contents manager if missing."""
        parts = path.split("/")[:-1]
        for n in range(1, len(parts) + 1):
            directory = "/".join(parts[:n])
            if not await ensure_async(self._contents.dir_exists(directory)):
                await ensure_async(self._contents.save({"type": "directory"}, directory))

    async def _in_page(self, shown: str) -> OpenText | None:
        """``shown`` as the page that has it open holds it now (a notebook, else a text
        editor), or None when no page has it open."""
        if self._editors is None:
            return None
        try:
            notebook = await self._editors.notebook_text(shown)
            text = notebook if notebook is not None else await self._editors.editor_text(shown)
        except EditRefused as exc:
            raise FileRefused(
                f"{shown} cannot be read from the page that has it open: {exc}"
            ) from exc
        if text is None:
            return None
        size = len(text.encode("utf-8"))
        if size > MAX_FILE_BYTES:  # as the file saved would be
            raise _too_large(shown, size)
        if notebook is not None:
            # Written behind the page, the notebook would raise "file changed on disk".
            return OpenText(shown, text, IN_NOTEBOOK, NOTEBOOK_OPEN.format(path=shown))
        return OpenText(shown, text, IN_EDITOR)

    async def read(self, path: str) -> OpenText:
        _, shown = confine(self.root, path)
        opened = await self._in_page(shown)
        if opened is not None:
            return opened
        model = await self._model(shown, content=False)
        if model is None:
            return OpenText(shown, None, None)
        size = model.get("size")
        if isinstance(size, int) and size > MAX_FILE_BYTES:
            raise _too_large(shown, size)
        model = await self._model(shown, content=True)
        return OpenText(shown, None if model is None else str(model["content"]), None)

    async def write(self, path: str, before: str | None, after: str) -> str:
        opened = await self.read(path)
        if opened.text != before:
            raise FileRefused(CHANGED.format(path=path))
        if opened.unwritable is not None:
            raise FileRefused(opened.unwritable)
        if opened.where is not None and self._editors is not None:
            try:
                where = await self._editors.write_editor(opened.path, before or "", after)
            except EditRefused as exc:
                raise FileRefused(f"{opened.path} was not written in its editor: {exc}") from exc
            if where is not None:
                return where
        model = {"type": "file", "format": "text", "content": after}
        try:
            await self._directories(opened.path)
            await ensure_async(self._contents.save(model, opened.path))
        except Exception as exc:  # the server's own: no permission, a full disk
            raise FileRefused(f"{opened.path} cannot be written: {clip(str(exc), 300)}") from exc
        return "the saved file"
