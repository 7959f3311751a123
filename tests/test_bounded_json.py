from __future__ import annotations

import contextlib
import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_notebook.wire import bounded_json
from acp_notebook.wire.bounded_json import Rejected, loads

# Lone surrogates are replaced (test_lone_surrogates_become_replacement_characters).
text = st.text(st.characters(blacklist_categories=["Cs"]))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=30,
)


@given(json_values)
def test_parses_what_json_parses(value: object) -> None:
    text = json.dumps(value)
    assert loads(text, max_bytes=1 << 20) == value
    assert loads(text.encode(), max_bytes=1 << 20) == value


def test_numbers_that_are_not_json_become_null() -> None:
    # JSON.parse refuses NaN and Infinity, json.dumps writes them: they would break a frame.
    text = "[NaN, Infinity, -Infinity, 1e999, -1e400, 1.5, 1e-999, 7]"
    assert loads(text, max_bytes=1 << 20) == [None, None, None, None, None, 1.5, 0.0, 7]


@pytest.mark.parametrize("data", [False, True])
def test_lone_surrogates_become_replacement_characters(data: bool) -> None:
    text = r'{"\udc00": ["a\ud800b", "\uD83D\uDE00", "\\ud800", "\udbff\ud800\udc00"]}'
    raw: str | bytes = text.encode() if data else text
    value = loads(raw, max_bytes=1 << 20)
    assert value == {"\ufffd": ["a\ufffdb", "\U0001f600", "\\ud800", "\ufffd\U00010000"]}
    json.dumps(value, ensure_ascii=False).encode()  # writable as UTF-8
    # Encoded as UTF-8 (which it is not), as a lenient decoder lets it in.
    assert loads(b'"\xed\xa0\x80"', max_bytes=1 << 20) == "\ufffd"


@pytest.mark.parametrize("depth", [1_000, 1_500, 100_000])
def test_deep_nesting_is_rejected_not_a_recursion_error(depth: int) -> None:
    with pytest.raises(Rejected, match="deeper"):
        loads("[" * depth + "]" * depth, max_bytes=1 << 20)


def test_depth_limit_is_exact() -> None:
    ok = "[" * bounded_json.MAX_DEPTH + "]" * bounded_json.MAX_DEPTH
    assert loads(ok, max_bytes=1 << 20) is not None
    deeper = "[" + ok + "]"
    with pytest.raises(Rejected):
        loads(deeper, max_bytes=1 << 20)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"a": "[[[[[[" * 100, "b": 'q"\\[{'})
    assert loads(text, max_bytes=1 << 20)["b"] == 'q"\\[{'


def test_too_many_objects_is_rejected_before_parsing() -> None:
    line = b"[" + b"{}," * 300_000 + b"{}]"
    with pytest.raises(Rejected, match="arrays and objects"):
        loads(line, max_bytes=1 << 30)


def test_size_limit() -> None:
    with pytest.raises(Rejected, match="limit"):
        loads(b'"' + b"x" * 100 + b'"', max_bytes=50)


@pytest.mark.parametrize("bad", [b"{", b"nope", b"\xff\xfe", b"[}", b'{"a": 1]'])
def test_malformed_is_rejected(bad: bytes) -> None:
    with pytest.raises(Rejected):
        loads(bad, max_bytes=1 << 20)


def test_rejected_is_a_value_error() -> None:
    assert issubclass(Rejected, ValueError)


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


tricky_text = st.text(alphabet='[]{}"\\\\ab', max_size=8)
tricky_values = st.recursive(
    st.none() | tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky_text, inner, max_size=4),
    max_leaves=30,
)


@given(tricky_values)
def test_depth_is_exact_whatever_the_strings_hold(value: object) -> None:
    """Quotes, backslashes and brackets inside strings never count, and never hide one."""
    raw = json.dumps(value).encode()
    depth = _depth(value)
    bounded_json.check_shape(raw, max_depth=depth)
    if depth:
        with pytest.raises(Rejected, match="deeper"):
            bounded_json.check_shape(raw, max_depth=depth - 1)


def test_many_short_strings_are_checked_fast() -> None:
    """A 16 MiB line of short strings and escapes is checked in C passes, not a regex per string."""
    lines = [
        json.dumps(["ab"] * (1 << 22)).encode(),
        json.dumps({"t": '"\\' * (1 << 22)}).encode(),
        b"[" + b'"]",[],' * (1 << 21) + b"0]",
    ]
    # Timed against json.loads of the first line (one C pass over 24 MiB) in the same
    # process, so load on the box slows both; each check takes 0.1-0.3 of it here.
    start = time.perf_counter()
    json.loads(lines[0])
    reference = time.perf_counter() - start
    for line in lines:
        start = time.perf_counter()
        with contextlib.suppress(Rejected):
            bounded_json.check_shape(line)
        assert time.perf_counter() - start < reference


@pytest.mark.parametrize("bad", [b'{"a": "unterminated', b"[" * 1000, b"[[]", b'["a"]]'])
def test_unbalanced_is_not_json_rather_than_deep(bad: bytes) -> None:
    # Short ones skip the shape check (json.loads names the fault); long ones fail it.
    with pytest.raises(Rejected, match="not JSON") as info:
        loads(bad, max_bytes=1 << 20)
    assert not isinstance(info.value, bounded_json.OverLimit)
    with pytest.raises(Rejected, match="unbalanced"):
        bounded_json.check_shape(bad)


def test_few_brackets_skip_the_shape_check_and_parse_as_json_loads() -> None:
    """Up to max_depth "{" and "[" (strings' included) cannot nest deeper: the same
    result as json.loads, errors and surrounding whitespace included."""
    for text in (b'{"a": [1, {"b": "[[{"}]}', b'  {"a": 1}\r', b'"x"', b"12", b"[]"):
        assert loads(text, max_bytes=100, max_depth=4) == json.loads(text)
    for bad in (b'{"a": 1} x', b"", b"{'a': 1}", b'{"a": 1,}'):
        with pytest.raises(Rejected, match="not JSON") as info:
            loads(bad, max_bytes=100, max_depth=4)
        assert not isinstance(info.value, bounded_json.OverLimit)
    with pytest.raises(bounded_json.OverLimit, match="deeper"):
        loads(b"[[[[[1]]]]]", max_bytes=100, max_depth=4)


def test_limits_are_over_limit_and_malformed_is_not() -> None:
    for big in (b"[" * 100 + b"]" * 100, b"[" + b"{}," * 300_000 + b"{}]", b'"' + b"x" * 99 + b'"'):
        with pytest.raises(bounded_json.OverLimit):
            loads(big, max_bytes=1 << 20 if len(big) > 101 else 50)
    with pytest.raises(Rejected) as info:
        loads(b"{bad", max_bytes=100)
    assert not isinstance(info.value, bounded_json.OverLimit)
