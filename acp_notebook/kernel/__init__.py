"""What runs in the notebook's kernel: ``Chat``, its two transports, magics, transcript.

``Chat`` is the widget and the Python API; it reaches the bridge over a socket to the
server extension (server mode) or hosts the bridge itself (local mode). Imports
``wire``, ``agent``, ``bridge`` and ``notebook_tools``.
"""
