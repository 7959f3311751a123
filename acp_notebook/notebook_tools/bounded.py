"""Calling into user objects with a deadline.

A variable's ``__repr__``, ``__len__`` or ``describe()`` is the user's code: it may
raise, sleep for a minute or build a gigabyte. These helpers run such calls on a
worker thread and stop waiting at the deadline; a call that overruns is abandoned
(a Python thread cannot be killed) and reported as timed out, and its result, if it
ever comes, is dropped. An abandoned thread holds one of ``MAX_THREADS`` slots until
its call returns: an agent asking again and again about a value whose repr never
returns gets a clear refusal, not one more stuck thread per question.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Failed:
    """The call raised, did not finish in time, or never ran; ``error`` says which."""

    def __init__(self, error: str) -> None:
        self.error = error

    def __repr__(self) -> str:
        return f"<{self.error}>"


TIMED_OUT = Failed("timed out")
SKIPPED = Failed("skipped")  # the overall time budget was spent before it
MAX_THREADS = 32  # worker threads alive at once, the stuck ones included
_slots = threading.BoundedSemaphore(MAX_THREADS)


def _raised(exc: Exception) -> Failed:
    try:  # its ``str`` is user code too: cut short, and it may raise
        message = str(exc)[:200]
    except Exception:
        message = ""
    return Failed(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)


def _all_stuck() -> Failed:
    return Failed(
        f"RuntimeError: {MAX_THREADS} earlier calls into this kernel's objects have not returned"
        " (a __repr__ or __len__ that hangs?); nothing more is read until they do"
    )


def call(fn: Callable[[], R], seconds: float) -> R | Failed:
    """``fn()`` on a worker thread; ``TIMED_OUT`` when it takes longer than ``seconds``."""
    return map_bounded(lambda f: f(), [fn], seconds, seconds)[0]


class _Run(Generic[T, R]):
    """One worker going through ``items`` from ``start``; abandoned when it overruns."""

    def __init__(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        start: int,
        results: list[R | Failed],
        lock: threading.Lock,
    ) -> None:
        self.fn, self.items, self.results, self.lock = fn, items, results, lock
        self.index = start
        self.started = time.monotonic()
        self.abandoned = False
        self.done = threading.Event()
        # The worker holds a slot until its calls return; False when every slot is held.
        self.started_ok = _slots.acquire(blocking=False)
        if self.started_ok:
            try:
                threading.Thread(target=self._work, name="acp-notebook-values", daemon=True).start()
            except BaseException:
                _slots.release()
                raise

    def _work(self) -> None:
        try:
            for i in range(self.index, len(self.items)):
                with self.lock:
                    if self.abandoned:
                        return
                    self.index, self.started = i, time.monotonic()
                try:
                    result: R | Failed = self.fn(self.items[i])
                except Exception as exc:
                    result = _raised(exc)
                with self.lock:
                    if self.abandoned:
                        return
                    self.results[i] = result
            self.done.set()
        finally:
            _slots.release()


def map_bounded(
    fn: Callable[[T], R], items: Sequence[T], per_item: float, total: float, max_stuck: int = 4
) -> list[R | Failed]:
    """``[fn(x) for x in items]`` with each call bounded by ``per_item`` seconds and the
    whole by ``total``.

    One worker thread goes through the items in order (a thread per item would cost
    more than the work for ten thousand small values). When an item overruns, the
    worker is abandoned, the item is ``TIMED_OUT`` and a fresh worker takes the rest;
    after ``max_stuck`` such items, or at ``total``, what is left is ``SKIPPED``; with
    every thread slot held by stuck calls, it is a ``Failed`` that says so.
    """
    results: list[R | Failed] = [SKIPPED] * len(items)
    lock = threading.Lock()
    deadline = time.monotonic() + total
    start, stuck = 0, 0
    while start < len(items) and stuck < max_stuck:
        run = _Run(fn, items, start, results, lock)
        if not run.started_ok:
            results[start:] = [_all_stuck()] * (len(items) - start)
            return results
        while True:
            with lock:
                index, started = run.index, run.started
            limit = min(started + per_item, deadline)
            run.done.wait(limit - time.monotonic())  # past the limit: returns at once
            with lock:
                if run.done.is_set():
                    return results
                now = time.monotonic()
                if run.index != index or now < limit:
                    continue  # that item finished; the worker is on a later one
                run.abandoned = True
                results[index] = TIMED_OUT
            stuck += 1
            start = index + 1
            if now >= deadline:
                return results
            break
    return results
