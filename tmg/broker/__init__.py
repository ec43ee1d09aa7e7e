"""The memory broker: one long-lived process per user that keeps memory servers warm.

PLUR speaks only stdio and takes most of a second to start; a one-shot that spawns it pays that
every run. The broker (`daemon.py`, started by `entry.py`) owns one stdio child per distinct
server spec (`child.py`) and serves MCP JSON-RPC to every tmg process over a private Unix socket;
`client.py` is the small client tmg uses (no mcp SDK import on the hot path), `launch.py` finds or
starts the broker (memory.md §9).
"""
