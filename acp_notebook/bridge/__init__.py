"""The bridge: a kernel's chats, one ACP session each, and the hub around them.

A chat session maps ACP traffic to stream events and carries out what its ledger (the
pending requests, sans-I/O) decides: one deadline, one answer, one resolved event per
request; history keeps what a reattaching client gets back; the elicitation reducer
turns a form schema into bounded fields; the hub validates client requests, gates them
on the chat's owner by a table of request kinds and fans events out to subscriptions;
ports are what it needs of the notebook tools and the kernel, as types they satisfy;
session owners note who started each ACP session, so that only they continue it; the
sign-in runs the agent's auth methods when it refuses to work without one.
Runs in the Jupyter server (server mode) or a kernel thread (local mode). Imports
``wire`` and ``agent``.
"""
