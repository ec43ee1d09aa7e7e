"""Which way a PLUR tool is reached on this server: directly, or through `plur_admin`.

The real server's default (lean) profile hides plur_inject_hybrid, plur_capture,
plur_learn_batch and plur_timeline behind the gateway; the full profile lists them all.
The surface is read from tools/list at connect time, so tmg works with both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

ADMIN_TOOL = "plur_admin"


class ToolUnavailable(LookupError):
    """The server neither lists the tool nor offers the `plur_admin` gateway."""


class ToolSurface(NamedTuple):
    """The tool names a server listed, and how to route a call to any PLUR tool."""

    listed: frozenset[str]

    @classmethod
    def detect(cls, tool_names: Iterable[str]) -> ToolSurface:
        return cls(frozenset(tool_names))

    @property
    def has_gateway(self) -> bool:
        return ADMIN_TOOL in self.listed

    def is_direct(self, tool: str) -> bool:
        return tool in self.listed

    def can_call(self, tool: str) -> bool:
        return self.is_direct(tool) or self.has_gateway

    def route(self, tool: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The (name, arguments) that reach `tool` with `payload` on this server.

        Raises:
            ToolUnavailable: neither listed nor reachable through the gateway.
        """
        if self.is_direct(tool):
            return tool, payload
        if self.has_gateway:
            return ADMIN_TOOL, {"action": tool, "args": payload}
        raise ToolUnavailable(f"the memory server offers neither {tool} nor {ADMIN_TOOL}")
