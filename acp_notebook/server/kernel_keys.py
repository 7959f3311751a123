"""What each kernel this server starts finds in its environment to reach the extension.

Every kernel start goes through the server's kernel manager, local or behind a kernel
gateway: the start is hooked to add the server's URL and secret and a key of the
kernel's own, issued here and kept under the id the start returns (``kernel_auth``).
The names are ``KERNEL_*``, which Jupyter's gateway client and Enterprise Gateway pass
on to the kernel by themselves. A restart keeps the environment (jupyter_client and
Enterprise Gateway relaunch with the same one), and so the key.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from jupyter_server.services.kernels.kernelmanager import MappingKernelManager

from ..wire.kernel_auth import KERNEL_SECRET_ENV, KERNEL_URL_ENV, KEY_ENV


class KernelKeys:
    """The key issued to each kernel this server started, by kernel id."""

    def __init__(self, secret: str, url: Callable[[], str | None]) -> None:
        self._secret = secret
        self._url = url  # read at each start: the port is final only once the server listens
        self._keys: dict[str, bytes] = {}

    def key(self, kernel_id: str) -> bytes | None:
        return self._keys.get(kernel_id)

    def forget(self, kernel_id: str) -> None:
        self._keys.pop(kernel_id, None)

    def keep(self, kernel_ids: Iterable[str]) -> None:
        """Forget the keys of kernels not among ``kernel_ids`` (shut down, culled)."""
        alive = set(kernel_ids)
        self._keys = {k: key for k, key in self._keys.items() if k in alive}

    def hook(self, manager: MappingKernelManager) -> None:
        """Issue a key at each start of a new kernel by ``manager``."""
        start = manager.start_kernel

        async def start_kernel(*, kernel_id: str | None = None, **kwargs: Any) -> str:
            url = self._url()
            if kernel_id is not None or url is None:
                # A kernel that exists (a session joining it, a gateway's) got its
                # environment when it started; over a unix socket kernels use local mode.
                return str(await start(kernel_id=kernel_id, **kwargs))
            key = secrets.token_urlsafe(32)
            env = kwargs.get("env")
            kwargs["env"] = {
                **(os.environ if env is None else env),
                KERNEL_URL_ENV: url,
                KERNEL_SECRET_ENV: self._secret,
                KEY_ENV: key,
            }
            started = str(await start(**kwargs))
            self._keys[started] = key.encode()
            return started

        manager.start_kernel = start_kernel  # type: ignore[method-assign]

    @staticmethod
    def unhook(manager: MappingKernelManager) -> None:
        vars(manager).pop("start_kernel", None)
