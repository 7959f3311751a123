"""``json.loads`` for untrusted input, with its size, depth and object count bounded first.

Everything the agent, a browser, a kernel or an MCP caller sends is parsed here.
``json.loads`` itself recurses per nesting level (a 2 KB line nested 1,000 deep
raises ``RecursionError``) and allocates an object per ``{}`` or ``[]`` (50 MB of
``[{},{},...]`` costs over a gigabyte), so both are checked on the raw bytes, in C
speed passes, before any object is built. Every refusal is a ``Rejected``, a
``ValueError``: callers treat it like any other malformed input.

What is read is also made safe to pass on: ``NaN``, ``Infinity`` and numbers too
large for a float become ``null`` (as ``JSON.stringify`` writes them; the browser's
``JSON.parse`` refuses a frame that holds them), and a lone surrogate becomes U+FFFD
(as a browser's ``TextEncoder`` does; Python cannot encode it to UTF-8, so it broke
every write that does, to the agent or over a kernel's comm).
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
MAX_CONTAINERS = 200_000

_QUOTED = re.compile(rb'"[^"]*"')
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'[]{}"')
# Objects count as arrays: a pass then removes one level whichever kind nests.
_SQUARE = bytes.maketrans(b"{}", b"[]")


# A surrogate's escape that is not half of a pair (an escaped backslash before the "u"
# may match too: that costs a walk over the value, nothing else); with its literal
# prefix the regex skips to each "\\u" in C.
LONE_ESCAPE = re.compile(
    rb"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD])[c-fC-F])"
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _finite(text: str) -> float | None:
    number = float(text)
    return number if math.isfinite(number) else None


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=lambda _name: None)
# json.loads's scanner (C), called without its two Python-level wrappers.
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


class Rejected(ValueError):
    """Input that is not JSON, or that is too large, too deep or has too many objects."""


class OverLimit(Rejected):
    """Input that may be JSON, but is too large, too deep or has too many objects."""


def check_shape(
    data: bytes, max_depth: int = MAX_DEPTH, max_containers: int = MAX_CONTAINERS
) -> None:
    """Raise ``Rejected`` when ``data`` nests deeper or holds more arrays/objects than allowed."""
    brackets = _brackets(data, max_containers)
    if len(brackets) > 2 * max_containers:
        raise OverLimit(f"more than {max_containers:,} arrays and objects")
    if b'"' in brackets or brackets.count(b"[") * 2 != len(brackets):
        raise Rejected("not JSON: unbalanced brackets or an unterminated string")
    # Each pass removes the innermost pairs; what is left after max_depth passes nests
    # deeper than that (or is out of order, like "][" or a "[" closed by a "}", which
    # json.loads refuses anyway).
    for _ in range(max_depth):
        if not brackets:
            return
        brackets = brackets.replace(b"[]", b"")
    if brackets:
        raise OverLimit(f"nested deeper than {max_depth} levels")


def _brackets(data: bytes, max_containers: int) -> bytes:
    """The brackets of JSON text that are not inside its strings.

    Only whole-buffer C passes: a regex per string or per escape took seconds on a
    50 MB line of short strings (and held the GIL all along).
    """
    if b"\\" in data:
        # Escapes pair up left to right, as JSON reads them; every quote left delimits.
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = data.translate(None, _NOT_STRUCTURE)
    if b'"' in kept:
        # Two quotes with no bracket between them are an empty string, or the end of one
        # string and the start of the next: dropping them leaves the outside as it was.
        kept = kept.replace(b'""', b"")
        # Now a bracket separates each string from the next: more strings than that
        # are more containers than allowed, and the regex below stays short.
        if kept.count(b'"') > 4 * max_containers + 2:
            raise OverLimit(f"more than {max_containers:,} arrays and objects")
        kept = _QUOTED.sub(b"", kept)
    return kept.translate(_SQUARE)


def loads(
    data: str | bytes,
    *,
    max_bytes: int,
    max_depth: int = MAX_DEPTH,
    max_containers: int = MAX_CONTAINERS,
) -> Any:
    """Parse untrusted JSON text; raises ``Rejected`` (a ``ValueError``)."""
    # Strict first: only text that holds a surrogate's UTF-8 needs the lenient pass,
    # and then the walk that replaces it.
    lone = False
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:
            raw, lone = data.encode("utf-8", "surrogatepass"), True
    else:
        raw = data
    if len(raw) > max_bytes:
        raise OverLimit(f"{len(raw):,} bytes is over the {max_bytes:,}-byte limit")
    # Nesting depth and the number of arrays and objects are each at most the count of
    # "{" and "[" (those inside strings too): text with few of them needs no shape check.
    # An agent's streamed chunk has four, and this spares it a third of its parse.
    opening = raw.count(b"{") + raw.count(b"[")
    if opening > max_depth or opening > max_containers:
        check_shape(raw, max_depth, max_containers)
    if isinstance(data, str):
        text = data
    else:
        # Decoding here spares json.loads its encoding sniffing; a BOM is tolerated.
        body = raw.removeprefix(codecs.BOM_UTF8)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            try:
                text, lone = body.decode("utf-8", "surrogatepass"), True
            except UnicodeDecodeError as exc:
                raise Rejected(f"not JSON: {exc}") from None
    try:
        # The scanner alone is json.loads minus a quarter of a short line's cost; text it
        # does not take whole (surrounding whitespace, an error) goes to the decoder,
        # which reads it, or says what is wrong with it, as json.loads does.
        try:
            value, end = _SCAN(text, 0)
        except (StopIteration, ValueError):
            end = -1
        if end != len(text):
            value = _DECODER.decode(text)
    except RecursionError:  # only reachable with a max_depth above the interpreter's limit
        raise OverLimit(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise Rejected(f"not JSON: {exc}") from None
    # find, not "in": bytes.__contains__ costs twice as much, on every line.
    if lone or (raw.find(b"\\u") >= 0 and LONE_ESCAPE.search(raw)):
        return _without_lone_surrogates(value)
    return value


def _without_lone_surrogates(value: Any) -> Any:
    # Escaped pairs were joined by the parser: any surrogate left in a string is a lone one.
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


# What bound() keeps of a value already parsed (an agent's update, before it is an event).
BOUND_STRING = 256 * 1024
BOUND_ITEMS = 2000
BOUND_DEPTH = 24


def bound(value: Any, depth: int = 0) -> Any:
    """A copy of untrusted JSON with long strings, long lists and deep nesting cut."""
    if isinstance(value, str):
        return value if len(value) <= BOUND_STRING else value[:BOUND_STRING] + "…"
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if depth >= BOUND_DEPTH:
        return None
    if isinstance(value, dict):
        return {
            str(k)[:BOUND_STRING]: bound(v, depth + 1) for k, v in list(value.items())[:BOUND_ITEMS]
        }
    if isinstance(value, list):
        return [bound(v, depth + 1) for v in value[:BOUND_ITEMS]]
    return None
