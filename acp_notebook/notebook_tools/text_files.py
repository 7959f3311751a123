"""The files an agent reads and writes through its client (``fs/read_text_file``,
``fs/write_text_file``), confined to one root directory.

Server mode: the server's root directory, through its contents manager (so a write is
the same save a person's is). Local mode: the kernel's directory, on disk. Paths come
from the agent as absolute paths; one that resolves (symlinks followed) outside the root
is refused, naming the root. A write is made only while the file still holds what its
review showed (``before``): what the person changed meanwhile is never overwritten.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any

from jupyter_core.utils import ensure_async

from ..wire.clip import clip
from ..wire.text_files import MAX_FILE_BYTES, FileRefused, OpenText

CHANGED = "{path} changed since the write was reviewed; read it again"


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


class ServerFiles:
    """Server mode: files under the server's root, through its contents manager."""

    def __init__(self, contents_manager: Any, root: str) -> None:
        self._contents = contents_manager
        self.root = root

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

    async def read(self, path: str) -> OpenText:
        _, shown = confine(self.root, path)
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
        model = {"type": "file", "format": "text", "content": after}
        try:
            await ensure_async(self._contents.save(model, opened.path))
        except Exception as exc:  # the server's own: no permission, a full disk
            raise FileRefused(f"{opened.path} cannot be written: {clip(str(exc), 300)}") from exc
        return "the saved file"
