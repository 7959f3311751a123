"""A server extension for the RTC browser tests: applies a ``CellEdit`` through the
server's shared documents, the way the agent's edit tools do, so a test can make an
agent's edit and watch the pages.

``POST /acp-test/shared-edit`` with ``{"path", "agent", "edit"}``; answers the
``Applied``, or 409 with the refusal.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.serverapp import ServerApp
from jupyter_server.utils import url_path_join
from tornado import web

from acp_notebook.notebook_tools.documents import EditRefused

ROUTE = "acp-test/shared-edit"


class SharedEdit(APIHandler):
    @web.authenticated
    async def post(self) -> None:
        body = self.get_json_body() or {}
        shared = self.settings["acp_notebook"].shared_documents
        document = await shared.open(body["path"], body["agent"])
        if document is None:
            raise web.HTTPError(404, f"no shared document for {body['path']}")
        try:
            applied = await document.apply(body["edit"])
        except EditRefused as refused:
            raise web.HTTPError(409, str(refused)) from refused
        self.finish(json.dumps(applied))


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: ServerApp) -> None:
    route = url_path_join(serverapp.base_url, ROUTE)
    serverapp.web_app.add_handlers(".*$", [(route, SharedEdit)])
