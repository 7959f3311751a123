"""One agent process and its ACP conversation.

JSON-RPC framing (sans-I/O), the connection to the agent subprocess under its reaper,
the catalogue of named agents, the ``initialize`` handshake, the agent's sign-in methods
(``auth_methods.py``), continuing and listing sessions, and the user's MCP servers in
ACP's shape. Imports only ``wire``.
"""
