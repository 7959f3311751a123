"""What the mock model APIs (Anthropic's, OpenAI's) share: the script.

A request's answer comes from the first rule (in the order added) that matches THAT
request, never from a counter: the CLIs send side requests concurrently with the
conversation. What was asked is kept for the test to inspect.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar, Union

Req = TypeVar("Req")
Ans = TypeVar("Ans")


class Script(Generic[Req, Ans]):
    """Rules by kind of request ("main": the conversation; others: side requests)."""

    def __init__(self, placeholder: Ans) -> None:
        self._placeholder = placeholder  # what a main request no rule matched gets
        self._rules: list[tuple[str, Callable[[Req], bool], Union[Ans, Callable[[Req], Ans]]]] = []
        self._requests: list[Req] = []
        self._unmatched: list[Req] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def on(
        self,
        when: Callable[[Req], bool],
        answer: Union[Ans, Callable[[Req], Ans]],
        *,
        kind: str = "main",
    ) -> None:
        """Answer requests of ``kind`` for which ``when(req)`` holds; first added rule wins.

        ``answer`` is an answer, or a function of the request returning one.
        """
        with self._lock:
            self._rules.append((kind, when, answer))

    def _record(self, request: Req) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def wait_for(self, pred: Callable[[Req], bool], timeout: float = 60.0) -> Req:
        """Block until a request satisfying ``pred`` has arrived (earlier ones count)."""
        with self._changed:
            if not self._changed.wait_for(lambda: any(map(pred, self._requests)), timeout):
                raise TimeoutError(f"no matching request within {timeout}s")
            return next(r for r in self._requests if pred(r))

    def _answer(self, request: Req, kind: str = "main", default: Ans | None = None) -> Ans:
        """The first matching rule's answer; else ``default`` (a side request's), else
        the placeholder, and the request counts as unmatched."""
        with self._lock:
            rules = [(when, answer) for k, when, answer in self._rules if k == kind]
        for when, answer in rules:
            if when(request):
                return answer(request) if callable(answer) else answer
        if default is not None:
            return default
        with self._lock:
            self._unmatched.append(request)
        return self._placeholder

    @property
    def requests(self) -> list[Req]:
        """The requests recorded, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def unmatched(self) -> list[Req]:
        """Main requests no rule answered (they got the placeholder)."""
        with self._lock:
            return list(self._unmatched)
