"""Values whose ``__repr__`` never returns (issue 12: every hostile input bounded). The
caller is the agent, through the notebook tools: each reading of such a value left one
more thread stuck in it for good, so asking again and again grew the kernel's threads
without end (20 listings of 4 such values: 80 threads).
"""

from __future__ import annotations

import threading
import time

import pytest

from acp_notebook.notebook_tools import bounded, variables


@pytest.mark.fault("an agent asks again and again about values whose repr never returns")
def test_stuck_reprs_hold_a_bounded_number_of_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    class Hangs:
        def __repr__(self) -> str:
            release.wait(60)
            return "late"

    namespace: dict[str, object] = {f"h{i}": Hangs() for i in range(4)}
    namespace["zz_fine"] = 7
    monkeypatch.setattr(variables, "user_namespace", lambda: namespace)
    monkeypatch.setattr(variables, "VALUE_SECONDS", 0.05)
    monkeypatch.setattr(variables, "SECTION_SECONDS", 0.05)
    before = threading.active_count()
    try:
        listings = [variables.list_variables() for _ in range(20)]
        grown = threading.active_count() - before
        assert 0 < grown <= bounded.MAX_THREADS, grown
        # The first listings time the stuck values out; once every slot is held, the
        # next ones say why nothing more is read, promptly, instead of adding threads.
        first = {v["name"]: v["preview"] for v in listings[0]["variables"]}
        assert first["h0"] == "<timed out>"
        last = {v["name"]: v["preview"] for v in listings[-1]["variables"]}
        assert all("have not returned" in last[name] for name in namespace), last
        started = time.monotonic()
        said = variables.inspect_variable("zz_fine", namespace)
        assert "have not returned" in said and time.monotonic() - started < 1, said
    finally:
        release.set()
    # Once the stuck calls return, their slots are free and values are read again.
    deadline = time.monotonic() + 10
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() <= before
    again = {v["name"]: v["preview"] for v in variables.list_variables()["variables"]}
    assert again["zz_fine"] == "7" and again["h0"] == "late"
