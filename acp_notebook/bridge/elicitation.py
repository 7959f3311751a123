"""The elicitation reducer (seed §3): raw ``elicitation/create`` params in, bounded view out.

The functions are pure. ``take_elicitation_view`` reads untrusted JSON and never
raises; ``validate_answer`` turns a client's answer into the JSON-RPC result for the
agent, or raises :class:`AnswerError` (the hub acks INVALID, the card stays pending).

Decisions worth knowing:

- Only string option values are kept: the answer sends the option value verbatim,
  so a number or bool ``const`` rendered as a string could not round-trip.
- A property that declares options but has none usable is dropped rather than shown
  as a text box, which would invite answers the agent's schema rejects. ``enum`` on a
  number/integer/boolean property is ignored (the typed input is rendered).
- Names and option values are exact keys, so an over-long or non-Unicode one drops
  the property or option; display text (message, titles, descriptions, labels) is
  cut with an ellipsis and lone surrogates become U+FFFD.
- ``placeholder`` is taken only from a string ``placeholder`` key; MCP's legacy
  ``enumNames`` label ``enum`` options; an option's ``_meta`` (claude's preview) is not kept.
- ``default`` is kept only when it would pass ``validate_answer`` (the same check).
- A text field is the "Other" box of enum/multi question Q when claude's ``_meta``
  marker names Q or when it is called ``Q_custom`` (claude sends the marker only to
  JetBrains AIR, so the name is what we see).
- Fields are kept in property order until 16 are usable; later ones are dropped.

URL mode (``take_url_request``) is refused rather than reduced: a link is shown whole
or not at all. It must be http or https with a host, at most ``MAX_URI`` characters,
free of control, format (bidi) and space characters and of backslashes, and carry no
credentials: ``https://bank.example@evil.example/`` reads as the bank but opens
evil.example, so a ``user:pass@`` URL is refused, never shown. The host must read the
same to Python and to a browser (no ``%``-escapes, no ``//`` missing), so the host we
state is the one the browser opens; an IDN host is given in its ASCII (punycode) form.
"""

from __future__ import annotations

import ipaddress
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from pydantic import TypeAdapter

from ..wire.clip import clip
from ..wire.contracts import (
    MAX_DESCRIPTION,
    MAX_FIELDS,
    MAX_ID,
    MAX_MESSAGE,
    MAX_NAME,
    MAX_OPTION_VALUE,
    MAX_OPTIONS,
    MAX_PLACEHOLDER,
    MAX_TITLE,
    MAX_TOOL_CALL_ID,
    MAX_URI,
    MAX_VALUE_TEXT,
    ElicitationField,
    FieldOption,
    FieldType,
)

_FIELD = TypeAdapter(ElicitationField)
_SURROGATE = re.compile("[\ud800-\udfff]")
# claude-agent-acp marks each question's free-text "Other" field with this `_meta` key.
_CUSTOM_META = "_askUserQuestionCustomAnswer"
_CUSTOM_SUFFIX = "_custom"

# What a field of each kind accepts, for AnswerError messages.
_EXPECTED: dict[str, str] = {
    "text": f"a string of at most {MAX_VALUE_TEXT} characters",
    "number": "a finite number",
    "integer": "an integer",
    "boolean": "true or false",
    "enum": "one of the option values",
    "multi": "a list of distinct option values",
}


@dataclass(frozen=True)
class ElicitationView:
    """What the elicitation_request event carries besides its ids."""

    message: str
    # Each a valid ElicitationField, without its None values.
    fields: list[ElicitationField]
    tool_call_id: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class UrlRequest:
    """A URL-mode question: the page the agent asks the user to open."""

    message: str
    url: str
    # As a browser's ``new URL(url).host`` gives it: lower case, punycode, no default port.
    host: str
    elicitation_id: str
    tool_call_id: str | None = None


class AnswerError(ValueError):
    """An answer that does not fit the form it answers."""


class UrlRefused(ValueError):
    """A URL-mode question we do not show; the message says why (for the agent and the chat)."""


# ---------------------------------------------------------------- view


def take_elicitation_view(params: object) -> ElicitationView:
    """Reduce untrusted ``elicitation/create`` params to our bounded rendering hint."""
    p = params if isinstance(params, dict) else {}
    schema = p.get("requestedSchema")
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    listed = schema.get("required")
    required = {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else set()
    fields: list[dict[str, Any]] = []
    for name, spec in properties.items():
        field = _reduce_property(name, spec, required)
        if field is not None:
            fields.append(field)
            if len(fields) == MAX_FIELDS:
                break
    _pair_custom_fields(fields, properties)
    tool_call_id = p.get("toolCallId")
    return ElicitationView(
        message=_display(p.get("message"), MAX_MESSAGE) or "",
        fields=[_FIELD.dump_python(_FIELD.validate_python(f), exclude_none=True) for f in fields],
        tool_call_id=tool_call_id if _is_key(tool_call_id, MAX_TOOL_CALL_ID) else None,
        title=_display(schema.get("title"), MAX_TITLE),
    )


def take_url_request(params: object) -> UrlRequest:
    """Check untrusted URL-mode ``elicitation/create`` params (``UrlRefused``: why not)."""
    p = params if isinstance(params, dict) else {}
    elicitation_id = p.get("elicitationId")
    if not _is_key(elicitation_id, MAX_ID) or not elicitation_id:
        raise UrlRefused(f"elicitationId must be a string of 1 to {MAX_ID} characters")
    url = p.get("url")
    if not isinstance(url, str):
        raise UrlRefused("url must be a string")
    tool_call_id = p.get("toolCallId")
    return UrlRequest(
        message=_display(p.get("message"), MAX_MESSAGE) or "",
        url=url,
        host=url_host(url),
        elicitation_id=elicitation_id,
        tool_call_id=tool_call_id if _is_key(tool_call_id, MAX_TOOL_CALL_ID) else None,
    )


_HOST_NAME = re.compile(r"[^%/@?#:\[\]]+")
_IPV6 = re.compile(r"\[[0-9a-f:.]+\]")
# A browser reads a host whose last label is a number as an IPv4 address in any of
# its forms (0x7f.1 is 127.0.0.1): only the dotted-quad form reads the same here.
_NUMERIC_LABEL = re.compile(r"0x[0-9a-f]*|[0-9]+")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def url_host(url: str) -> str:
    """The host (with a port other than the default) a browser opens for ``url``, or
    ``UrlRefused`` when the URL is not one we show (see the module's docstring)."""
    if len(url) > MAX_URI:
        raise UrlRefused(f"the URL is longer than {MAX_URI} characters")
    if "\\" in url or any(unicodedata.category(c)[0] in "CZ" for c in url):
        raise UrlRefused("the URL contains spaces, control characters or backslashes")
    try:
        parts = urlsplit(url)
    except ValueError as error:  # an unbalanced [ or ], an invalid IPv6 address
        raise UrlRefused(f"the URL cannot be read: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise UrlRefused(f"only http and https URLs are opened, not {_quote(scheme or url)}")
    # "https:host" has no "//": a browser still finds a host there, Python does not.
    if not url[len(scheme) + 1 :].startswith("//") or not parts.netloc:
        raise UrlRefused("the URL has no host")
    if "@" in parts.netloc:
        raise UrlRefused(
            "the URL carries credentials (user:password@host), which can hide its host"
        )
    try:
        port = parts.port
    except ValueError:
        raise UrlRefused("the URL's port is not a number from 0 to 65535") from None
    name = parts.hostname or ""
    if parts.netloc.startswith("["):
        host = f"[{name}]"
        if not _IPV6.fullmatch(host):
            raise UrlRefused("the URL's host is not a valid IPv6 address")
    else:
        if not _HOST_NAME.fullmatch(name):
            raise UrlRefused("the URL's host has characters a host name cannot have")
        if _NUMERIC_LABEL.fullmatch(name.rstrip(".").rsplit(".", 1)[-1]) and not _is_ipv4(name):
            raise UrlRefused("the URL's host is not an IPv4 address in dotted-quad form")
        if "ß" in name or "ς" in name:
            raise UrlRefused(
                "the URL's host has ß or ς, which browsers and Python encode differently"
            )
        try:
            # IDNA 2003 (the standard library's); browsers use UTS 46, which differs for
            # the deviation characters ß and ς (refused above) and ZWJ/ZWNJ (format
            # characters, refused with the others).
            host = name.encode("idna").decode("ascii")
        except UnicodeError:
            raise UrlRefused("the URL's host is not a valid domain name") from None
    return host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"


def _is_ipv4(name: str) -> bool:
    try:
        return str(ipaddress.IPv4Address(name)) == name
    except ValueError:
        return False


def _reduce_property(name: object, spec: object, required: set[str]) -> dict[str, Any] | None:
    """One property as a field dict (pre-validation), or None when unusable."""
    if not _is_key(name, MAX_NAME) or not isinstance(spec, dict):
        return None
    shape = _kind_and_options(spec)
    if shape is None:
        return None
    kind, options = shape
    return {
        "name": name,
        "type": kind,
        "title": _display(spec.get("title"), MAX_TITLE),
        "description": _display(spec.get("description"), MAX_DESCRIPTION),
        "placeholder": _display(spec.get("placeholder"), MAX_PLACEHOLDER),
        "required": True if name in required else None,
        "options": options,
        "default": _fits(kind, options, spec.get("default")),
    }


def _kind_and_options(spec: dict[Any, Any]) -> tuple[FieldType, list[FieldOption] | None] | None:
    kind = spec.get("type")
    if kind == "array":
        items = spec.get("items")
        # claude's multi-select `items` is `{anyOf: [...]}` with no `type`.
        options = _options(items) if isinstance(items, dict) else None
        return ("multi", options) if options else None
    if kind in ("number", "integer", "boolean"):
        return kind, None
    if kind is None or kind == "string":
        options = _options(spec)
        if options is None:
            return ("text", None) if kind == "string" else None
        return ("enum", options) if options else None
    return None


def _options(spec: dict[Any, Any]) -> list[FieldOption] | None:
    """Options from ``enum`` (MCP's legacy ``enumNames`` as labels) or ``oneOf``/``anyOf``.

    None when no option list is declared; [] when one is declared but none is usable.
    """
    for key in ("enum", "oneOf", "anyOf"):
        raw = spec.get(key)
        if isinstance(raw, list):
            break
    else:
        return None
    names = spec.get("enumNames") if key == "enum" else None
    options: list[FieldOption] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        if isinstance(entry, dict):
            value, label, description = (
                entry.get("const"),
                entry.get("title"),
                entry.get("description"),
            )
        else:
            value, label, description = entry, None, None
        if label is None and isinstance(names, list) and i < len(names):
            label = names[i]
        if not _is_key(value, MAX_OPTION_VALUE) or value in seen:
            continue
        seen.add(value)
        options.append(
            {
                "value": value,
                "label": _display(label, MAX_TITLE),
                "description": _display(description, MAX_DESCRIPTION),
            }
        )
        if len(options) == MAX_OPTIONS:
            break
    return options


def _pair_custom_fields(fields: list[dict[str, Any]], properties: dict[Any, Any]) -> None:
    """Link each free-text "Other" field to its question (claude's AskUserQuestion).

    A text field is the "Other" of question Q when its ``_meta`` marker names Q, or
    when it is called ``Q_custom``; Q must be a kept enum/multi field. One per question.
    """
    questions = {f["name"]: f for f in fields if f["type"] in ("enum", "multi")}
    for field in fields:
        if field["type"] != "text":
            continue
        meta = properties[field["name"]].get("_meta")
        marker = meta.get(_CUSTOM_META) if isinstance(meta, dict) else None
        target = marker.get("questionId") if isinstance(marker, dict) else None
        if target is None and field["name"].endswith(_CUSTOM_SUFFIX):
            target = field["name"][: -len(_CUSTOM_SUFFIX)]
        question = questions.get(target) if isinstance(target, str) else None
        if question is not None and question.get("custom") is None:
            question["custom"] = field["name"]
            field["customOf"] = question["name"]


def _display(value: object, cap: int) -> str | None:
    """Text for display: cut to ``cap`` with an ellipsis (so the cut shows), Unicode-clean."""
    return _SURROGATE.sub("\ufffd", clip(value, cap)) if isinstance(value, str) else None


def _is_key(value: object, cap: int) -> TypeGuard[str]:
    """A string used verbatim (a name, option value, id): never cut or rewritten."""
    return isinstance(value, str) and len(value) <= cap and not _SURROGATE.search(value)


def _fits(kind: str, options: list[FieldOption] | None, value: object) -> Any:
    """``value`` normalised for a field of this kind, or None when it does not fit.

    Shared by the default prefill and the answer check, so both agree.
    """
    if kind == "text":
        return value if _is_key(value, MAX_VALUE_TEXT) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if kind == "number":
            return value
        # 3.0 is an integer to JSON Schema; send it as 3 so strict agents agree.
        return int(value) if isinstance(value, int) or value.is_integer() else None
    allowed = {o["value"] for o in options or ()}
    if kind == "enum":
        return value if isinstance(value, str) and value in allowed else None
    if kind == "multi" and isinstance(value, list):
        picks = [v for v in value if isinstance(v, str) and v in allowed]
        return picks if len(picks) == len(value) == len(set(picks)) else None
    return None


# ---------------------------------------------------------------- answer


def validate_answer(
    fields: Sequence[Mapping[str, Any]], action: object, values: object, *, url: bool = False
) -> dict[str, Any]:
    """The JSON-RPC result for the agent, from a client's answer to the form ``fields``.

    ``fields`` are the view's field dicts. Accepting a message-only form (no fields)
    with no values is allowed: it answers ``content: {}``; a URL question (``url``; it
    has no fields) is accepted with no content. A None value means "not answered" and
    is left out.
    """
    if action in ("decline", "cancel"):
        return {"action": action}
    if action != "accept":
        raise AnswerError(f"unknown action {_quote(action)}: expected accept, decline or cancel")
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise AnswerError("values must be an object keyed by field name")
    by_name = {f["name"]: f for f in fields}
    unknown = [k for k in values if k not in by_name]
    if unknown:
        raise AnswerError(f"unknown field(s): {', '.join(_quote(k) for k in unknown[:5])}")
    content: dict[str, Any] = {}
    for name, field in by_name.items():
        value = values.get(name)
        if value is None:
            if field.get("required"):
                raise AnswerError(f"{_quote(name)} is required")
            continue
        kind = field["type"]
        checked = _fits(kind, field.get("options"), value)
        if checked is None:
            raise AnswerError(f"{_quote(name)} must be {_EXPECTED[kind]}")
        content[name] = checked
    return {"action": "accept"} if url else {"action": "accept", "content": content}


def _quote(value: object) -> str:
    """A short quote for error messages: a client may send megabyte strings, and repr()
    of huge ints or deep lists raises."""
    if not isinstance(value, str):
        return f"<{type(value).__name__}>"
    return repr(clip(value, 80))
