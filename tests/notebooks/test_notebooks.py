"""Every notebook in notebooks/ under nbval, as a user would run it.

nbval runs in a subprocess so each notebook gets the environment a user would have: for
claude-code.ipynb that is the real claude-agent-acp wrapper on PATH, a scratch HOME and
ANTHROPIC_BASE_URL pointing at the mock Messages API served by this test, scripted with the
notebook's prompts. The notebook itself contains nothing test-specific.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.support.claude_wrapper import require_wrapper, wrapper_env
from tests.support.mock_anthropic import MockAnthropic, Question, ask_user_question, text, tool_use
from tests.support.user_env import user_env

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
NOTEBOOK_TIMEOUT = 240


def script_claude(mock: MockAnthropic) -> None:
    """The model's side of claude-code.ipynb, keyed on the notebook's prompts."""
    mock.on_user("Say hello", text("Hello from Claude, running inside your notebook."))
    mock.on_user(
        "which colour",
        ask_user_question(
            Question(
                "Which colour should the bars be?",
                "Colour",
                [("Red", "Warm and easy to spot"), ("Blue", "Calm and print-friendly")],
            )
        ),
    )
    mock.on_tool_result("AskUserQuestion", text("Red bars it is. I'll use red for the chart."))
    mock.on_user(
        "folder called results",
        tool_use("Bash", {"command": "mkdir results", "description": "Create the results folder"}),
    )
    mock.on_tool_result("Bash", text("Created the `results` folder."))


def clean_env(home: Path) -> dict[str, str]:
    """A user's environment with a scratch HOME and TMPDIR."""
    env = user_env()
    env["HOME"] = str(home)
    # The notebooks' scratch directories (tempfile.mkdtemp) land in the test's tmp_path.
    env["TMPDIR"] = str(home.parent)
    # The checkout under test, whether or not it is installed in this environment.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_nbval(notebook: Path, env: dict[str, str], cwd: Path = REPO) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval-lax",
            "--nbval-current-env",
            "-p",
            "no:cacheprovider",
            "-q",
            str(notebook.relative_to(cwd)),
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=NOTEBOOK_TIMEOUT,
    )
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-4000:]
    assert " passed" in result.stdout


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_every_notebook_is_tested() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == [
        "agent-edits.ipynb",
        "claude-code.ipynb",
        "data-analysis.ipynb",
        "from-python.ipynb",
        "magics.ipynb",
        "quickstart.ipynb",
    ]


@pytest.mark.timeout(NOTEBOOK_TIMEOUT + 30)
@pytest.mark.parametrize("name", ["quickstart", "from-python", "magics", "data-analysis"])
def test_demo_notebook(name: str, home: Path) -> None:
    run_nbval(NOTEBOOKS / f"{name}.ipynb", clean_env(home))


@pytest.mark.timeout(NOTEBOOK_TIMEOUT + 30)
def test_agent_edits_notebook(home: Path, tmp_path: Path) -> None:
    # The agent edits the notebook's own file (no page names one under nbval): a copy.
    copy = tmp_path / "agent-edits.ipynb"
    shutil.copy(NOTEBOOKS / copy.name, copy)
    run_nbval(copy, clean_env(home), cwd=tmp_path)
    cells = nbformat.read(copy, as_version=4).cells
    added = cells[-1]
    # The demo's cell is in the file, with the edit made to its last line.
    assert added.cell_type == "code" and "temperatures" in added.source, added.source
    assert nbformat.read(NOTEBOOKS / copy.name, as_version=4).cells[-1].source == "chat.close()"


@pytest.mark.timeout(NOTEBOOK_TIMEOUT + 30)
def test_claude_code_notebook(home: Path) -> None:
    wrapper = require_wrapper()
    with MockAnthropic() as mock:
        script_claude(mock)
        env = {**clean_env(home), **wrapper_env(home, mock.url)}
        env["PATH"] = os.pathsep.join([str(wrapper.parent), env["PATH"]])
        run_nbval(NOTEBOOKS / "claude-code.ipynb", env)

        assert mock.unmatched == [], [r.prompt_text for r in mock.unmatched]
        [answer] = mock.tool_results("AskUserQuestion")
        assert '"Which colour should the bars be?"="Red"' in answer.text
        [bash] = mock.tool_results("Bash")
        assert not bash.is_error
