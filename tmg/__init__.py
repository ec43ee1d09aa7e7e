"""tmg: a terminal chat agent with automatic long-term memory."""

__version__ = "0.1.0"
