"""Tools the model may call: the built-in set, and (later) those of MCP servers."""
