"""Drive claude-code and any Agent Client Protocol agent from a notebook cell."""

from __future__ import annotations

__version__ = "0.1.0"
