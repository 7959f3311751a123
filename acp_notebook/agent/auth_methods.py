"""The agent's ``authMethods``, as the sign-in card may show and run them.

Pure functions over the ``initialize`` result, which is the agent's (untrusted): every
method is checked and bounded here, and one that is not what ACP describes is left out.
ACP (schema v1, and the auth-methods RFD for ``env_var``): a method without ``type`` is
the agent's own (``authenticate {methodId}``); a ``terminal`` method runs the agent's own
command line with the method's ``args`` appended and its ``env`` added (never a command
of the agent's choosing) and signs in by exiting 0; an ``env_var`` method names the
variables the user sets where the agent starts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from ..wire.contracts import (
    MAX_AUTH_ARG,
    MAX_AUTH_ARGS,
    MAX_AUTH_METHODS,
    MAX_AUTH_VALUE,
    MAX_AUTH_VARS,
    MAX_DESCRIPTION,
    MAX_NAME,
    MAX_TITLE,
    MAX_URI,
    AuthEnvEntry,
    AuthMethodView,
    AuthVar,
)

# ACP's ``auth_required`` error: the agent will not work until the user signs in.
AUTH_REQUIRED = -32000
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def logout_offered(capabilities: object) -> bool:
    """Whether ``agentCapabilities`` advertise ``auth.logout`` (an object: supported)."""
    auth = capabilities.get("auth") if isinstance(capabilities, dict) else None
    return isinstance(auth, dict) and isinstance(auth.get("logout"), dict)


def take_auth_methods(raw: object, agent_argv: Sequence[str]) -> list[AuthMethodView]:
    """The methods of an ``initialize`` result's ``authMethods`` that are valid, at most
    ``MAX_AUTH_METHODS``; a terminal method's ``command`` is ``agent_argv`` and its args."""
    methods: list[AuthMethodView] = []
    seen: set[str] = set()
    for entry in raw if isinstance(raw, list) else ():
        method = _method(entry, agent_argv)
        if method is not None and method["id"] not in seen:
            seen.add(method["id"])
            methods.append(method)
        if len(methods) == MAX_AUTH_METHODS:
            break
    return methods


def env_hint(method: AuthMethodView) -> str:
    """What the user does for an ``env_var`` method: which variables, and where."""
    names = ", ".join(
        v["name"] + (" (optional)" if v["optional"] else "") for v in method["vars"] or []
    )
    link = f" Get one at {method['link']}." if method.get("link") else ""
    return (
        f"{method['name']}: set {names} where the agent starts: Chat(env={{...}}) for this"
        f" chat, or the Jupyter server's environment; then open the chat again.{link}"
    )


def _method(entry: object, agent_argv: Sequence[str]) -> AuthMethodView | None:
    if not isinstance(entry, dict):
        return None
    method_id, name = entry.get("id"), entry.get("name")
    kind = entry.get("type", "agent")
    if not isinstance(method_id, str) or not 0 < len(method_id) <= MAX_NAME:
        return None
    if not isinstance(name, str) or kind not in ("agent", "terminal", "env_var"):
        return None
    method: AuthMethodView = {"id": method_id, "name": name[:MAX_TITLE] or method_id, "type": kind}
    description = entry.get("description")
    if isinstance(description, str) and description:
        method["description"] = description[:MAX_DESCRIPTION]
    if kind == "terminal":
        args, env = _args(entry.get("args")), _env(entry.get("env"))
        if args is None or env is None:
            return None
        command = [*agent_argv, *args]
        assignments = [f"{e['name']}={shlex.quote(e['value'])}" for e in env]
        method["command"] = command
        method["env"] = env
        method["commandLine"] = " ".join([*assignments, shlex.join(command)])
    elif kind == "env_var":
        variables = _vars(entry.get("vars"))
        if not variables:
            return None
        method["vars"] = variables
        link = entry.get("link")
        if isinstance(link, str) and len(link) <= MAX_URI and re.match(r"^https?://", link):
            method["link"] = link
    return method


def _args(raw: object) -> list[str] | None:
    """A terminal method's arguments; None when they are not strings within the bounds."""
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_AUTH_ARGS:
        return None
    if not all(isinstance(a, str) and len(a) <= MAX_AUTH_ARG and "\0" not in a for a in raw):
        return None
    return list(raw)


def _env(raw: object) -> list[AuthEnvEntry] | None:
    """A terminal method's variables (v1: an object of strings; v2: ``[{name, value}]``)."""
    if raw is None:
        return []
    pairs = (
        list(raw.items())
        if isinstance(raw, dict)
        else [(e.get("name"), e.get("value")) for e in raw if isinstance(e, dict)]
        if isinstance(raw, list)
        else None
    )
    if pairs is None or len(pairs) > MAX_AUTH_VARS:
        return None
    entries: list[AuthEnvEntry] = []
    for name, value in pairs:
        if not isinstance(name, str) or not _VAR_NAME.match(name) or len(name) > MAX_NAME:
            return None
        if not isinstance(value, str) or len(value) > MAX_AUTH_VALUE or "\0" in value:
            return None
        entries.append({"name": name, "value": value})
    return entries


def _vars(raw: object) -> list[AuthVar]:
    """An ``env_var`` method's variables (``secret`` unless it says false)."""
    found: list[AuthVar] = []
    for entry in raw[:MAX_AUTH_VARS] if isinstance(raw, list) else ():
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not _VAR_NAME.match(name) or len(name) > MAX_NAME:
            continue
        assert isinstance(entry, dict)
        var: AuthVar = {
            "name": name,
            "secret": entry.get("secret") is not False,
            "optional": entry.get("optional") is True,
        }
        label = entry.get("label")
        if isinstance(label, str) and label:
            var["label"] = label[:MAX_TITLE]
        found.append(var)
    return found


def find(methods: Sequence[AuthMethodView], method_id: str) -> AuthMethodView | None:
    return next((m for m in methods if m["id"] == method_id), None)


def terminal_env(base: dict[str, str], method: AuthMethodView) -> dict[str, str]:
    """The environment a terminal method's command runs with: the agent's, and its own."""
    return {**base, **{e["name"]: e["value"] for e in method.get("env") or []}}
