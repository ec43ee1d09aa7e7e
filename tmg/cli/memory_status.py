"""`tmg memory status` lists one memory server per store.

The broker starts a memory server per working folder (PLUR reads a `.plur.yaml` from its cwd),
so chats in two folders share one store through two processes. Listed apart they read as two
servers of one store, and the broker's line counted both; here a store's processes are one entry.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tmg.broker.control import BrokerState


def one_per_store(state: BrokerState) -> BrokerState:
    """``state`` with the memory servers of one store merged (their pids, calls and starts)."""
    if state.status is None:
        return state
    groups: dict[Any, list[dict[str, Any]]] = {}
    for server in state.status.get("servers", []):
        memory = server.get("kind", "memory") == "memory"  # a WARM tool server has no store
        key = (server["name"] or server["command"], server["store"]) if memory else id(server)
        groups.setdefault(key, []).append(server)
    servers = []
    for same in groups.values():
        one = dict(same[0])
        if len(same) > 1:
            one.update(pid=" and ".join(str(s["pid"]) for s in same) + " (a process per working folder)",
                       alive=all(s["alive"] for s in same), calls=sum(s["calls"] for s in same),
                       starts=sum(s["starts"] for s in same))
        servers.append(one)
    return replace(state, status=dict(state.status, servers=servers))
