"""Real-time collaboration (jupyter-collaboration) in the tests' Jupyter servers: off
unless a test asks for it.

Installing jupyter-collaboration enables its server extensions (jupyter_server_config.d)
and its JupyterLab extensions for every server of the environment; the tests' servers
run without it by default, so the page paths they test are the ones without RTC.
"""

from __future__ import annotations

# The shared document (jupyter_server_ydoc) and the file ids its rooms are named by.
SERVER_EXTENSIONS = ("jupyter_server_ydoc", "jupyter_server_fileid")
# The pages' side: the shared models' provider and the collaborators' UI.
LAB_EXTENSIONS = ("@jupyter/docprovider-extension", "@jupyter/collaboration-extension")


def server_extensions(on: bool) -> dict[str, bool]:
    """``ServerApp.jpserver_extensions`` entries that turn collaboration on or off."""
    return dict.fromkeys(SERVER_EXTENSIONS, on)


def page_config(on: bool) -> dict[str, dict[str, bool]]:
    """A ``labconfig/page_config.json`` that turns the pages' collaboration on or off."""
    return {"disabledExtensions": dict.fromkeys(LAB_EXTENSIONS, not on)}
