"""A test-only server extension: ``POST acp-test/page-edit {"path", "op", ...}`` asks the
live document of the notebook as the notebook tools do: ``apply`` an ``edit``, ``run`` a
``cellId`` within ``timeout``, the ``active`` cell, or the ``cells``. The document comes
from the open page that holds the notebook (the acp_notebook extension's ``Pages``), or
from another source of the extension named by ``source``, for an ``agent``. The answer is
the document's; 404 when the source has no document, 409 with the reason of a refusal."""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.serverapp import ServerApp
from jupyter_server.utils import url_path_join
from tornado import web

from acp_notebook.notebook_tools.documents import DocumentSource, EditRefused, LiveDocument
from acp_notebook.server.app import AcpNotebookApp

ROUTE = "acp-test/page-edit"


class PageEditHandler(APIHandler):
    @web.authenticated
    async def post(self) -> None:
        body = json.loads(self.request.body)
        extension = self.settings["acp_notebook"]
        assert isinstance(extension, AcpNotebookApp)
        source: DocumentSource = getattr(extension, body.get("source", "pages"))
        document = await source.open(body["path"], body.get("agent", "test"))
        if document is None:
            raise web.HTTPError(404, f"no document of {body['path']}")
        try:
            answer = await self._ask(document, body)
        except EditRefused as exc:
            raise web.HTTPError(409, str(exc)) from None
        self.finish(json.dumps(answer))

    async def _ask(self, document: LiveDocument, body: dict[str, Any]) -> Any:
        async def progress(note: str) -> None:
            pass

        if body["op"] == "apply":
            return await document.apply(body["edit"])
        if body["op"] == "run":
            return await document.run(body["cellId"], body["timeout"], progress)
        if body["op"] == "active":
            return await document.active_cell()
        return await document.cells()


def _load_jupyter_server_extension(serverapp: ServerApp) -> None:
    route = url_path_join(serverapp.base_url, ROUTE)
    serverapp.web_app.add_handlers(".*$", [(route, PageEditHandler)])


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": __name__}]
