"""How a kernel proves to the server extension which kernel it is.

The extension puts a per-server secret in the environment every kernel inherits;
that shows a client is one of this server's kernels. The kernel id is proven
separately with an HMAC keyed by that kernel's own session key (which only the
kernel and the server know) over the id and a fresh timestamp. Pure functions,
shared by both ends.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping

URL_ENV = "ACP_NOTEBOOK_URL"
SECRET_ENV = "ACP_NOTEBOOK_SECRET"

SECRET_HEADER = "X-ACP-Notebook-Secret"
KERNEL_HEADER = "X-ACP-Notebook-Kernel"
TIME_HEADER = "X-ACP-Notebook-Time"
PROOF_HEADER = "X-ACP-Notebook-Proof"

# How far a proof's timestamp may be from the server's clock (same machine).
MAX_SKEW = 60.0


class Refused(Exception):
    """The kernel could not prove who it is; the reason is for the server log only."""


def proof(key: bytes, kernel_id: str, timestamp: str) -> str:
    return hmac.new(key, f"{kernel_id}\n{timestamp}".encode(), hashlib.sha256).hexdigest()


def auth_headers(secret: str, key: bytes, kernel_id: str, now: float) -> dict[str, str]:
    timestamp = f"{now:.3f}"
    return {
        SECRET_HEADER: secret,
        KERNEL_HEADER: kernel_id,
        TIME_HEADER: timestamp,
        PROOF_HEADER: proof(key, kernel_id, timestamp),
    }


def verify(
    headers: Mapping[str, str],
    secret: str,
    key_of: Callable[[str], bytes | None],
    now: float,
) -> str:
    """The proven kernel id; raises ``Refused``. ``key_of`` gives a live kernel's session key."""
    if not hmac.compare_digest(headers.get(SECRET_HEADER, "").encode(), secret.encode()):
        raise Refused("wrong or missing secret")
    kernel_id = headers.get(KERNEL_HEADER, "")
    key = key_of(kernel_id)
    if not key:
        # An unknown kernel, or one without a session key: nothing to check a proof against.
        raise Refused(f"no such kernel {kernel_id[:64]!r}")
    timestamp = headers.get(TIME_HEADER, "")
    try:
        skew = abs(now - float(timestamp))
    except ValueError:
        raise Refused("bad timestamp") from None
    if not skew <= MAX_SKEW:  # also rejects nan
        raise Refused("stale timestamp")
    if not hmac.compare_digest(headers.get(PROOF_HEADER, ""), proof(key, kernel_id, timestamp)):
        raise Refused("wrong proof")
    return kernel_id
