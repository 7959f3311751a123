"""The ``notebook`` MCP server: the agent sees the kernel's variables, the notebook's
cells (with ids and revisions) and last error, runs code in the kernel, tells the
kernel's state, interrupts or restarts it (DESIGN.md, "Notebook tools"), and edits and
runs the notebook's cells in its live document, each edit reviewed (DESIGN.md, "Agent
edits": ``cell_edits`` plans them, ``documents`` is where they land, ``file_document``
the saved file).

``variables`` is the one variable reader (the composer's ``@`` mentions, ``mentions``,
use it too, as does ``attachments``, which turns Python objects into prompt blocks);
``kernel_side.answer`` runs a kernel-side tool; ``mcp_endpoint.ToolHost`` serves the
tools; ``local_side`` and ``server_side`` are the two backends; ``proxy`` is the stdio
entry for agents without HTTP MCP. Imports ``wire`` and ``agent``.
"""
