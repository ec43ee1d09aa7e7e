"""Paging through a server's lists (tools/list, resources/list), following its cursors."""

from __future__ import annotations

from typing import Any

from tmg.mcp.outcome import ToolSpec


async def pages(list_page: Any) -> Any:
    """Each page of a paginated list request (`session.list_tools`, `session.list_resources`),
    following the server's cursors."""
    from mcp_types import PaginatedRequestParams

    cursor: str | None = None
    while True:
        listed = await list_page(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        yield listed
        cursor = listed.next_cursor
        if not cursor:
            return


async def list_all_tools(session: Any) -> dict[str, ToolSpec]:
    """tools/list, every page."""
    tools: dict[str, ToolSpec] = {}
    async for listed in pages(session.list_tools):
        for tool in listed.tools:
            execution = getattr(tool, "execution", None)
            if getattr(execution, "task_support", None) == "required":
                continue  # callable only as a task, which tmg does not run: every call would fail
            annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
            tools[tool.name] = ToolSpec(
                tool.name, dict(tool.input_schema or {}), tool.description or "", annotations
            )
    return tools
