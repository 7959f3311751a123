"""Named users for the tests' Jupyter servers: an identity provider that knows people,
as JupyterHub or a configured provider does, so the owner gate keeps them apart.

A page logs in with its person's token in the URL (``?token=``) and is that person by
its cookie from then on: every JupyterLab page also sends the server's own token (its
page config holds it), which must not make Bob's page Alice's. A request without the
cookie is the person its token names. Start a server with
``start_server(..., extra_args=NamedUsers.ARGS, extra_env=...)`` (``named_users_server``).
"""

from __future__ import annotations

from jupyter_server.auth.identity import IdentityProvider, User
from tornado.web import RequestHandler

# The second person's token; the server's own token is Alice's.
BOB_TOKEN = "bob-token-of-the-tests"
ALICE = User("alice", name="alice", display_name="Alice")
BOB = User("bob", name="bob", display_name="Bob")


class NamedUsers(IdentityProvider):
    """The server's token is Alice, ``BOB_TOKEN`` is Bob; a cookie is whoever logged in."""

    ARGS = (f"--ServerApp.identity_provider_class={__name__}.NamedUsers",)

    async def get_user_token(self, handler: RequestHandler) -> User | None:
        if self.get_user_cookie(handler) is not None:  # the cookie says who the page is
            return None
        given = self.get_token(handler)
        return {self.token: ALICE, BOB_TOKEN: BOB}.get(given) if given else None
