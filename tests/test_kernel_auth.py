"""The kernel's proof of identity, without a server."""

from __future__ import annotations

import pytest

from acp_notebook.kernel_auth import TIME_HEADER, Refused, auth_headers, verify

KEYS = {"k1": b"key-one", "k2": b"key-two", "unsigned": b""}
NOW = 1_800_000_000.0


def check(headers: dict[str, str], now: float = NOW) -> str:
    return verify(headers, "s3cret", KEYS.get, now)


def test_a_fresh_proof_names_its_kernel() -> None:
    assert check(auth_headers("s3cret", b"key-one", "k1", NOW - 30)) == "k1"


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        (auth_headers("guess", b"key-one", "k1", NOW), "secret"),
        (auth_headers("s3cret", b"key-two", "k1", NOW), "wrong proof"),
        (auth_headers("s3cret", b"key-one", "k3", NOW), "no such kernel"),
        # A kernel without a session key has nothing to prove with.
        (auth_headers("s3cret", b"", "unsigned", NOW), "no such kernel"),
        (auth_headers("s3cret", b"key-one", "k1", NOW - 61), "stale"),
        ({**auth_headers("s3cret", b"key-one", "k1", NOW), TIME_HEADER: "nan"}, "stale"),
        ({**auth_headers("s3cret", b"key-one", "k1", NOW), TIME_HEADER: "soon"}, "bad timestamp"),
        ({}, "secret"),
    ],
)
def test_refused(headers: dict[str, str], reason: str) -> None:
    with pytest.raises(Refused, match=reason):
        check(headers)
