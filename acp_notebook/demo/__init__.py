"""The demo agent: a real, deterministic ACP agent for the quickstart and the tests.

``agent`` speaks ACP on stdin/stdout (``python -m acp_notebook.demo.agent``), ``store``
keeps its sessions, ``login`` is its login mode (``ACP_DEMO_LOGIN``), ``notebook_client``
calls the chat's ``notebook`` tools like a real agent; ``python -m acp_notebook.demo`` is
a headless conversation with it. It talks to the rest of the package only over the
wire, as any agent does.
"""
