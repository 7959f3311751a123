"""A stand-in page with text files open in its editors (and notebooks open), on a server's
page registry."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from acp_notebook.notebook_tools.page_document import Pages


class EditorPage:
    """A page with text files open in its editors, answering as the lab extension does;
    ``notebooks``: the notebooks it holds open, each as its model's JSON."""

    def __init__(
        self,
        pages: Pages,
        buffers: dict[str, str],
        notebooks: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.pages = pages
        self.buffers = buffers
        self.notebooks = notebooks or {}
        self.page = pages.connect(self.send)
        held = [{"path": path} for path in self.notebooks]
        self.frame({"type": "page:notebooks", "notebooks": held, "files": list(buffers)})

    def frame(self, frame: dict[str, Any]) -> None:
        self.pages.receive(self.page, json.dumps(frame))

    def send(self, request: dict[str, Any]) -> None:
        path, reply = request["path"], {}
        if request["op"] == "notebook":
            reply = {"result": {"notebook": self.notebooks[path]}}
        elif request["op"] == "text":
            reply = {"result": {"text": self.buffers[path]}}
        elif self.buffers[path] != request["before"]:
            reply = {"error": "the file changed in its editor"}
        else:
            self.buffers[path] = request["text"]
        loop = asyncio.get_running_loop()
        loop.call_soon(self.frame, {"type": "page:reply", "id": request["id"], **reply})
