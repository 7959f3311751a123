"""ACP agents the tests start as subprocesses, by path (each runs as a script)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAULT_AGENT = HERE / "fault_agent.py"
HOSTILE_AGENT = HERE / "hostile_agent.py"
LONG_TEXT_AGENT = HERE / "long_text_agent.py"
REFUSING_AGENT = HERE / "refusing_agent.py"
RESUME_ONLY_AGENT = HERE / "resume_only_agent.py"
DEMO_FAULTS_AGENT = HERE / "demo_faults_agent.py"
# The demo agent with the test-only behaviours, as a chat's command line.
DEMO_FAULTS = [sys.executable, str(DEMO_FAULTS_AGENT)]
