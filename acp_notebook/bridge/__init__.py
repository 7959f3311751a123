"""The bridge: a kernel's chats, one ACP session each, and the hub around them.

A chat session maps ACP traffic to stream events and owns every pending request's one
deadline; history keeps what a reattaching client gets back; the elicitation reducer
turns a form schema into bounded fields; the hub validates client requests, gates them
on the chat's owner and fans events out to subscribers. Runs in the Jupyter server
(server mode) or a kernel thread (local mode). Imports ``wire`` and ``agent``.
"""
