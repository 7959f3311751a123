"""The framing and classification of JSON-RPC lines, without any process."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_notebook.agent import jsonrpc
from acp_notebook.agent.jsonrpc import (
    Invalid,
    LineFramer,
    Notification,
    Oversized,
    Request,
    Response,
)


def test_framer_splits_across_chunks() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert framer.feed(b":2}\n\n") == [b'{"b":2}', b""]
    assert framer.feed(b'{"c":3}') == []
    assert framer.close() == [b'{"c":3}']
    assert framer.close() == []


def test_framer_skips_oversized_line_and_keeps_going() -> None:
    framer = LineFramer(max_line=10)
    out = framer.feed(b"x" * 8)
    assert out == []
    out = framer.feed(b"y" * 100)  # now past the cap: buffer dropped, memory stays bounded
    assert out == [Oversized(108, 10, done=False)]  # said at once, not at the line's end
    assert framer.skipping == Oversized(108, 10, done=False) and framer.buffered == 0
    assert framer.feed(b"y" * 100) == []  # said once
    out = framer.feed(b"zz\nok\n")
    assert out == [Oversized(210, 10), b"ok"]
    assert framer.skipping is None


def test_framer_oversized_in_one_chunk() -> None:
    framer = LineFramer(max_line=4)
    assert framer.feed(b"123456\n12\n") == [Oversized(6, 4), b"12"]


def test_framer_oversized_at_end_of_stream() -> None:
    framer = LineFramer(max_line=4)
    assert framer.feed(b"123456") == [Oversized(6, 4, done=False)]
    assert framer.close() == [Oversized(6, 4)]


def test_budget_is_shared_by_every_framer() -> None:
    budget = jsonrpc.LineBudget(100)
    a, b = LineFramer(max_line=80, budget=budget), LineFramer(max_line=80, budget=budget)
    assert a.feed(b"x" * 70) == []
    assert budget.used == 70
    # b's line is within its cap, but not within what a left of the budget.
    assert b.feed(b"y" * 40) == [Oversized(40, 30, done=False, budget=True)]
    assert budget.used == 70
    assert b.feed(b"y\nshort") == [Oversized(41, 30, budget=True)]
    assert budget.used == 75
    assert a.feed(b"x\n") == [b"x" * 71]
    assert budget.used == 5
    assert b.feed(b" line\n") == [b"short line"]
    assert budget.used == 0


def test_budget_is_given_back_by_a_line_over_the_cap_and_by_discard() -> None:
    budget = jsonrpc.LineBudget(100)
    framer = LineFramer(max_line=50, budget=budget)
    framer.feed(b"x" * 40)
    assert framer.feed(b"x" * 40) == [Oversized(80, 50, done=False)]
    assert budget.used == 0
    framer.feed(b"\n" + b"y" * 30)
    assert budget.used == 30
    framer.discard()
    assert budget.used == 0 and framer.close() == []


@given(st.lists(st.binary(max_size=40), max_size=30))
def test_budget_always_balances(chunks: list[bytes]) -> None:
    budget = jsonrpc.LineBudget(64)
    framers = [LineFramer(max_line=48, budget=budget) for _ in range(3)]
    for i, chunk in enumerate(chunks):
        framers[i % 3].feed(chunk)
        assert 0 <= budget.used == sum(f.buffered for f in framers) <= 64
    for framer in framers:
        framer.close()
    assert budget.used == 0


@given(
    st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=20), st.data()
)
def test_framer_any_chunking_gives_the_same_lines(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    framer = LineFramer()
    out: list[bytes | Oversized] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        out += framer.feed(stream[start:cut])
        start = cut
    out += framer.close()
    assert out == lines


@pytest.mark.parametrize("depth", [65, 1_000, 100_000])
def test_parse_deep_nesting_is_invalid_not_a_recursion_error(depth: int) -> None:
    line = b'{"jsonrpc":"2.0","method":"session/update","params":' + b"[" * depth
    line += b"]" * depth + b"}"
    msg = jsonrpc.parse(line)
    assert isinstance(msg, Invalid) and "deeper" in msg.reason and msg.over_limit


def test_parse_too_many_objects_is_invalid() -> None:
    line = b'{"jsonrpc":"2.0","method":"m","params":[' + b"{}," * 300_000 + b"{}]}"
    msg = jsonrpc.parse(line)
    assert isinstance(msg, Invalid) and "arrays and objects" in msg.reason and msg.over_limit


def test_parse_garbage_is_invalid_but_not_over_a_limit() -> None:
    for line in (b"not json", b"[1, 2", b'{"a": "unterminated'):
        msg = jsonrpc.parse(line)
        assert isinstance(msg, Invalid) and not msg.over_limit, msg


def test_parse_classifies_messages() -> None:
    assert jsonrpc.parse(b'{"jsonrpc":"2.0","id":0,"method":"m","params":{"a":1}}') == Request(
        0, "m", {"a": 1}
    )
    assert jsonrpc.parse(b'{"jsonrpc":"2.0","method":"n"}') == Notification("n", None)
    assert jsonrpc.parse(b'{"jsonrpc":"2.0","id":"x","result":null}') == Response("x", None)
    error = jsonrpc.parse(b'{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}')
    assert error == Response(3, None, {"code": -1, "message": "no"})
    assert jsonrpc.parse(b"   ") is None


def test_parse_rejects_garbage_with_a_reason() -> None:
    for line in (
        b"not json",
        b"[1,2]",
        b'{"id":1}',
        b'{"id":true,"method":"m"}',
        b'{"id":[1],"result":1}',
        b"\xff\xfe",
    ):
        msg = jsonrpc.parse(line)
        assert isinstance(msg, Invalid), line
        assert msg.reason


def test_request_id_zero_is_a_request() -> None:
    assert jsonrpc.parse(b'{"id":0,"method":"elicitation/create"}') == Request(
        0, "elicitation/create", None
    )


def test_encoders_round_trip() -> None:
    assert jsonrpc.parse(jsonrpc.encode_request(7, "x", {"k": "é"})[:-1]) == Request(
        7, "x", {"k": "é"}
    )
    assert jsonrpc.parse(jsonrpc.encode_notification("n", [])[:-1]) == Notification("n", [])
    assert jsonrpc.parse(jsonrpc.encode_result(0, {"ok": 1})[:-1]) == Response(0, {"ok": 1})
    line = jsonrpc.encode_error(4, jsonrpc.METHOD_NOT_FOUND, "nope")
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32601, "message": "nope"},
    }


def test_rpc_error_from_junk_error_object() -> None:
    err = jsonrpc.RpcError.from_error({"code": "x", "message": 5})
    assert err.code == jsonrpc.INTERNAL_ERROR and err.message == "error"
