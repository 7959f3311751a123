"""The ``notebook`` MCP server: the agent sees the kernel's variables, the notebook's
cells and last error, and runs code in the kernel (DESIGN.md, "Notebook tools").

``variables.list_variables`` / ``inspect_variable`` are the one variable reader (the
composer's ``@`` mentions use it too); ``kernel.answer`` runs a kernel-side tool;
``mcp_server.ToolHost`` serves the tools; ``local`` and ``server`` are the two
backends; ``proxy`` is the stdio entry for agents without HTTP MCP.
"""
