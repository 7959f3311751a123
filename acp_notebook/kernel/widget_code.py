"""The widget's code as each chat's model carries it: the bundle, or a loader for it.

Every anywidget model stores its ``_esm``, so a notebook of 20 chats saved the 120 KB
bundle 20 times and every page load compiled it 20 times. Where the server extension
runs (server mode) it serves the bundle once, as a static file; the model then carries a
loader that imports it from there, cached by the browser and evaluated once per page.
A page that cannot reach that file (a frontend without Jupyter's page config, such as
VS Code on a remote server) asks the kernel for the bundle over the widget's comm.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

STATIC = Path(__file__).parents[1] / "static"  # the package's, where the build puts it
BUNDLE = STATIC / "widget.js"
# Where the server extension serves STATIC (ExtensionApp.static_url_prefix), under base_url.
STATIC_PREFIX = "static/acp_notebook/"
# The widget's request for the bundle over the comm, and the kernel's answer.
CODE_REQUEST = "widget:code"

NOT_BUILT = (
    "export default { render({ el }) { el.textContent = "
    "'acp_notebook: the widget bundle is not built (pip install . builds it).'; } };"
)

# Loads the bundle from the server (one fetch and one evaluation per page), else from
# the kernel. ``__URL__`` is the bundle's path under base_url, with its content hash.
LOADER = """\
const config = document.getElementById("jupyter-config-data");
let widget = null;
try {
  const base = config ? JSON.parse(config.textContent).baseUrl : null;
  if (typeof base === "string") widget = (await import(new URL(base + __URL__, location.href).href)).default;
} catch (error) {
  console.warn("acp_notebook: widget code from the server failed, asking the kernel", error);
}
function fromKernel(model) {
  return new Promise((resolve, reject) => {
    const onMessage = async (message) => {
      if (message?.type !== __REQUEST__) return;
      model.off("msg:custom", onMessage);
      const url = URL.createObjectURL(new Blob([message.code], { type: "text/javascript" }));
      try { resolve((await import(url)).default); } catch (error) { reject(error); } finally { URL.revokeObjectURL(url); }
    };
    model.on("msg:custom", onMessage);
    model.send({ type: __REQUEST__ });
  });
}
export default {
  async render(props) {
    widget ??= await fromKernel(props.model);
    return widget.render(props);
  },
};
"""


def bundle_text() -> str:
    """The built bundle, or a module that says it is missing."""
    return BUNDLE.read_text(encoding="utf-8") if BUNDLE.exists() else NOT_BUILT


@cache
def loader() -> str:
    """The loader of the bundle as it is now (its hash in the URL defeats stale caches)."""
    digest = hashlib.sha256(bundle_text().encode()).hexdigest()[:16]
    return LOADER.replace("__URL__", json.dumps(f"{STATIC_PREFIX}widget.js?v={digest}")).replace(
        "__REQUEST__", json.dumps(CODE_REQUEST)
    )


def bundle_esm() -> str | Path:
    """The class default of ``_esm``: the bundle (anywidget reads the file)."""
    return BUNDLE if BUNDLE.exists() else NOT_BUILT


def server_esm() -> str | None:
    """A server-mode chat's ``_esm``: the loader, where there is a bundle to load."""
    return loader() if BUNDLE.exists() else None
