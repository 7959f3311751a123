"""``acp-notebook/ws/pages``: the lab extension's socket of one JupyterLab / Notebook 7 page.

The page says which notebooks it holds open and which one the user is in; the server
asks it for a notebook's cells, to apply an agent's edit to the notebook's model, to
run a cell, or for the active cell (the protocol: notebook_tools/page_document.py).
The same login as the browser socket: a Jupyter user with ``execute`` on ``kernels``,
same origin (or a token), since what the page is asked to do is edit and run the
user's notebooks.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado.websocket import WebSocketHandler

from ..notebook_tools.page_document import Page, Pages, TooManyPages
from ..wire.contracts import MAX_PAGE_FRAME
from .api import may_execute
from .handlers import FULL


class PageSocket(WebSocketMixin, WebSocketHandler, JupyterHandler):
    auth_resource = "kernels"

    def initialize(self, pages: Pages) -> None:
        self.pages = pages
        self.page: Page | None = None  # once open and counted

    def set_default_headers(self) -> None:
        """JupyterHandler's headers (CSP and such) mean nothing on a WebSocket."""

    @property
    def max_message_size(self) -> int:
        return MAX_PAGE_FRAME

    @ws_authenticated
    @may_execute
    async def get(self, *args: Any, **kwargs: Any) -> None:
        # Checks the origin (tornado calls check_origin), then upgrades.
        await super().get(*args, **kwargs)

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)
        self.set_nodelay(True)
        try:
            self.page = self.pages.connect(self._send)
        except TooManyPages as exc:
            self.log.warning("acp_notebook: refused a page socket: %s", exc)
            self.close(FULL, str(exc))

    def _send(self, frame: dict[str, Any]) -> None:
        if self.ws_connection is None or self.ws_connection.is_closing():
            return  # closing: on_close ends what waits
        self.write_message(json.dumps(frame)).add_done_callback(
            lambda done: done.cancelled() or done.exception()
        )

    def on_message(self, message: str | bytes) -> None:
        if self.page is None:
            return
        try:
            self.pages.receive(self.page, message)
        except ValueError as exc:
            # Dropped: a reply it was meant to be ends in its request's timeout.
            self.log.warning("acp_notebook: a page sent a malformed frame: %s", exc)

    def on_close(self) -> None:
        if self.page is not None:
            self.pages.disconnect(self.page)
            self.page = None
