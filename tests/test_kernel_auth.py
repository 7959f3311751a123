"""The kernel's proof of identity, without a server."""

from __future__ import annotations

import pytest

from acp_notebook.wire.kernel_auth import TIME_HEADER, Refused, UsedProofs, auth_headers, verify

KEYS = {"k1": b"key-one", "k2": b"key-two", "unsigned": b""}
NOW = 1_800_000_000.0


def check(headers: dict[str, str], now: float = NOW, used: UsedProofs | None = None) -> str:
    return verify(headers, "s3cret", KEYS.get, now, used or UsedProofs())


def test_a_fresh_proof_names_its_kernel() -> None:
    assert check(auth_headers("s3cret", b"key-one", "k1", NOW - 9)) == "k1"
    assert check(auth_headers("s3cret", b"key-one", "k1", NOW + 0.5)) == "k1"


def test_a_proof_is_good_once() -> None:
    used = UsedProofs()
    headers = auth_headers("s3cret", b"key-one", "k1", NOW)
    assert check(headers, NOW, used) == "k1"
    with pytest.raises(Refused, match="already used"):
        check(headers, NOW + 1, used)
    # Another proof of the same kernel (a reconnect) is new.
    assert check(auth_headers("s3cret", b"key-one", "k1", NOW + 1), NOW + 1, used) == "k1"
    # Once too old to be accepted anyway, a proof is forgotten: the set stays small.
    for i in range(100):
        check(auth_headers("s3cret", b"key-one", "k1", NOW + 20 + i / 1000), NOW + 20, used)
    assert len(used._until) == 100  # the two old ones are gone
    with pytest.raises(Refused, match="stale"):
        check(headers, NOW + 20, used)


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        (auth_headers("guess", b"key-one", "k1", NOW), "secret"),
        (auth_headers("s3cret", b"key-two", "k1", NOW), "wrong proof"),
        (auth_headers("s3cret", b"key-one", "k3", NOW), "no such kernel"),
        # A kernel without a session key has nothing to prove with.
        (auth_headers("s3cret", b"", "unsigned", NOW), "no such kernel"),
        (auth_headers("s3cret", b"key-one", "k1", NOW - 11), "stale"),
        (auth_headers("s3cret", b"key-one", "k1", NOW + 59), "in the future"),
        (auth_headers("s3cret", b"key-one", "k1", NOW + 2), "in the future"),
        ({**auth_headers("s3cret", b"key-one", "k1", NOW), TIME_HEADER: "nan"}, "stale"),
        ({**auth_headers("s3cret", b"key-one", "k1", NOW), TIME_HEADER: "soon"}, "bad timestamp"),
        ({}, "secret"),
    ],
)
def test_refused(headers: dict[str, str], reason: str) -> None:
    with pytest.raises(Refused, match=reason):
        check(headers)
