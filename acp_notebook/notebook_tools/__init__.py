"""The ``notebook`` MCP server: the agent sees the kernel's variables, the notebook's
cells and last error, and runs code in the kernel (DESIGN.md, "Notebook tools").

``variables`` is the one variable reader (the composer's ``@`` mentions, ``mentions``,
use it too, as does ``attachments``, which turns Python objects into prompt blocks);
``kernel_side.answer`` runs a kernel-side tool; ``mcp_endpoint.ToolHost`` serves the
tools; ``local_side`` and ``server_side`` are the two backends; ``proxy`` is the stdio
entry for agents without HTTP MCP. Imports ``wire`` and ``agent``.
"""
