"""How a kernel proves to the server extension which kernel it is.

The extension puts a per-server secret in the environment of its kernels; that
shows a client is one of this server's kernels. The kernel id is proven separately
with an HMAC over the id and a fresh timestamp, keyed by a key only that kernel and
the server know: the key the server issued to the kernel as it started it
(``KEY_ENV``), else the kernel's own session key (a kernel that inherited the
variables without being started through the extension's hook). Behind a kernel
gateway the server does not hold the remote kernel's session key, so only the
issued key works there; the gateway forwards ``KERNEL_*`` variables by itself. A proof is good
once, and only for a few seconds: the server remembers the proofs it accepted
until they are too old to be accepted anyway (``UsedProofs``), so a copied set of
headers opens no second socket. The functions are pure, shared by both ends.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping

URL_ENV = "ACP_NOTEBOOK_URL"
SECRET_ENV = "ACP_NOTEBOOK_SECRET"
# What each kernel the server starts gets in its own environment (read first): named
# KERNEL_* as Jupyter's gateway client and Enterprise Gateway pass such names on.
KERNEL_URL_ENV = "KERNEL_ACP_NOTEBOOK_URL"
KERNEL_SECRET_ENV = "KERNEL_ACP_NOTEBOOK_SECRET"
KEY_ENV = "KERNEL_ACP_NOTEBOOK_KEY"

SECRET_HEADER = "X-ACP-Notebook-Secret"
KERNEL_HEADER = "X-ACP-Notebook-Kernel"
TIME_HEADER = "X-ACP-Notebook-Time"
PROOF_HEADER = "X-ACP-Notebook-Proof"

# How old a proof may be when it arrives (the kernel makes it just before connecting),
# and how far ahead of the server's clock (the same machine's clock: hardly at all).
MAX_AGE = 10.0
MAX_AHEAD = 1.0


class Refused(Exception):
    """The kernel could not prove who it is; the reason is for the server log only."""


class UsedProofs:
    """The proofs accepted while they could still be accepted: each is good once.

    Only proofs with a valid HMAC are kept, and each only for ``MAX_AGE + MAX_AHEAD``
    seconds, so the set is as small as the rate at which kernels really connect.
    """

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def claim(self, token: str, now: float) -> bool:
        """False when ``token`` was claimed before."""
        if len(self._until) > 64:
            self._until = {t: until for t, until in self._until.items() if until >= now}
        if token in self._until:
            return False
        self._until[token] = now + MAX_AGE + MAX_AHEAD
        return True


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
    used: UsedProofs,
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
        age = now - float(timestamp)
    except ValueError:
        raise Refused("bad timestamp") from None
    if not -MAX_AHEAD <= age <= MAX_AGE:  # also rejects nan
        raise Refused("timestamp in the future" if age < -MAX_AHEAD else "stale timestamp")
    given = headers.get(PROOF_HEADER, "")
    # As bytes: compare_digest raises TypeError on a str that is not ASCII.
    if not hmac.compare_digest(given.encode(), proof(key, kernel_id, timestamp).encode()):
        raise Refused("wrong proof")
    if not used.claim(given, now):
        raise Refused("proof already used")
    return kernel_id
