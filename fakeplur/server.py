"""fakeplur as an MCP server: the real server's tool surface, envelopes and gateway, over stdio.

`Fake.dispatch` is the whole protocol-free behaviour (unit-testable without a process);
`main()` wires it to the mcp SDK's low-level Server, which validates nothing by itself.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fakeplur import tools
from fakeplur.config import FakeConfig
from fakeplur.snapshot import ADMIN_TOOL, Snapshot, load_snapshot
from fakeplur.store import Store, content_hash, load_seed
from fakeplur.validation import validate_args

Answer = tuple[str, bool]  # (text, is_error)


def pretty(payload: Any) -> str:
    """Success text: JSON indented by 2, as JSON.stringify(x, null, 2)."""
    return json.dumps(payload, indent=2, ensure_ascii=False)


def compact(payload: Any) -> str:
    """Error text: compact JSON, as JSON.stringify(x)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


class Fake:
    """The fake PLUR server's behaviour for one profile and one store."""

    # How the delay knob waits; a test swaps in a recorder to see the delay without waiting it.
    sleep = staticmethod(asyncio.sleep)

    def __init__(self, config: FakeConfig, snapshot: Snapshot | None = None) -> None:
        self.config = config
        self.snapshot = snapshot or load_snapshot()
        self.listed = self.snapshot.by_name(config.profile)
        self.store = Store.open(config.store_path)
        if config.seed:
            self._seed(load_seed(config.seed))

    def _seed(self, entries: list[Any]) -> None:
        """Add the seeds the store does not hold yet, in any status (a seed forgotten since stays
        forgotten); the file is written only when one was added."""
        with self.store.locked():
            held = {e.get("content_hash") for e in self.store.engrams}
            added = False
            for entry in entries:
                item = {"statement": entry} if isinstance(entry, str) else dict(entry)
                if content_hash(item.get("statement", "")) not in held:
                    held.add(self.store.add_engram(item["statement"], item).get("content_hash"))
                    added = True
            if added:
                self.store.save()

    def tool_list(self) -> list[dict[str, Any]]:
        return self.snapshot.tools(self.config.profile)

    def effective_tool(self, name: str, args: dict[str, Any]) -> str:
        """The tool a call really reaches: the action of a plur_admin call, else the name."""
        if name == ADMIN_TOOL and isinstance(args.get("action"), str):
            return args["action"]
        return name

    async def call(self, name: str, args: dict[str, Any] | None) -> Answer:
        """Delay knob, then reject knob, then the real server's dispatch; logged when asked."""
        args = args if isinstance(args, dict) else {}
        target = self.effective_tool(name, args)
        delay = self.config.delay_for(target)
        if delay > 0:
            self._log_held(target)
            await self.sleep(delay)
        if name in self.config.reject or target in self.config.reject:
            answer = compact({"error": f"fakeplur: {target} rejected by FAKE_PLUR_REJECT", "success": False}), True
        elif self.config.poison and self.config.poison in json.dumps(args, ensure_ascii=False):
            answer = compact({"error": f"fakeplur: {target} refused: its arguments hold FAKE_PLUR_POISON",
                              "success": False}), True
        else:
            answer = self.dispatch(name, args)
        self._log(name, target, args, answer[1])
        return answer

    def _log_held(self, target: str) -> None:
        """A delayed call, as it starts waiting (`<FAKE_PLUR_LOG>.held`): a test can act while it is in flight."""
        if self.config.log_path:
            with open(f"{self.config.log_path}.held", "a", encoding="utf-8") as handle:
                handle.write(target + "\n")

    def _log(self, name: str, target: str, args: dict[str, Any], is_error: bool) -> None:
        """FAKE_PLUR_LOG: one JSON line per call, so a test can count what a client sent."""
        if not self.config.log_path:
            return
        line = json.dumps({"tool": target, "called": name, "args": args, "is_error": is_error}, ensure_ascii=False)
        with open(self.config.log_path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def dispatch(self, name: str, args: dict[str, Any]) -> Answer:
        """Answer one tools/call exactly the way the real server shapes it."""
        tool = self.listed.get(name)
        if tool is None:
            if name in self.snapshot.all_tools:
                return compact({
                    "error": f'Tool "{name}" exists but is not directly callable under the current tool profile.',
                    "success": False,
                    "hint": f'Call it via plur_admin: {{ action: "{name}", args: {{ ... }} }} \u2014 same arguments, '
                    "same validation, same result. To expose all tools directly, set PLUR_TOOL_PROFILE=full.",
                }), True
            return compact({"error": f"Unknown tool: {name}", "success": False}), True
        validated = validate_args(tool["inputSchema"], args)
        if not validated.ok:
            return compact(validated.error_payload), True
        try:
            with self.store.locked():
                if name == ADMIN_TOOL:
                    result = self._admin(validated.data)
                else:
                    result = self._handle(name, validated.data)
        except tools.ToolFailure as exc:
            return compact({"error": str(exc), "success": False}), True
        if isinstance(result, dict) and result.get("_isError") is True:
            return pretty({k: v for k, v in result.items() if k != "_isError"}), True
        return pretty(result), False

    def _handle(self, name: str, data: dict[str, Any]) -> dict[str, Any]:
        handler = tools.HANDLERS.get(name)
        if handler is None:
            raise tools.ToolFailure(f"fakeplur does not implement {name}")
        return handler(self.store, data, self.config.profile)

    def _admin(self, data: dict[str, Any]) -> dict[str, Any]:
        """The lean profile's gateway: same validation and result as a direct call."""
        action = data["action"]
        actions = self.snapshot.admin_actions
        if action == "help":
            return {
                "calling_convention": 'plur_admin { action: "<tool name>", args: { ... } }',
                "actions": [{"action": a, "args_schema": self.snapshot.all_tools[a]["inputSchema"]} for a in actions],
                "standalone_tools": sorted(self.snapshot.core_names | {ADMIN_TOOL}),
            }
        target = self.snapshot.all_tools.get(action)
        if target is None:
            return {"error": f'Unknown action "{action}". Valid actions: help, {", ".join(actions)}',
                    "success": False, "_isError": True}
        if (target.get("annotations") or {}).get("destructiveHint") is True:
            return {"error": f'"{action}" is a destructive operation and cannot be dispatched via plur_admin '
                    f"\u2014 call the {action} tool directly (it is exposed in every profile) so your client sees "
                    "its destructiveHint annotation.", "success": False, "_isError": True}
        inner = data.get("args")
        inner = inner if isinstance(inner, dict) else {}
        validated = validate_args(target["inputSchema"], inner)
        if not validated.ok:
            return {**validated.error_payload, "error": f"{action}: {validated.error_payload['error']}"}
        try:
            return self._handle(action, validated.data)
        except tools.ToolFailure as exc:
            raise tools.ToolFailure(f"{action}: {exc}") from exc


def build_server(fake: Fake) -> Any:
    """The mcp SDK low-level Server around a Fake."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    listed = [
        types.Tool(
            name=t["name"],
            description=t.get("description"),
            input_schema=t["inputSchema"],
            annotations=types.ToolAnnotations.model_validate(t["annotations"]) if t.get("annotations") else None,
        )
        for t in fake.tool_list()
    ]

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        text, is_error = await fake.call(params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    return Server(
        fake.snapshot.server_name,
        version=fake.snapshot.version,
        instructions="fakeplur: an offline stand-in for the PLUR memory server (tests only).",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(fake: Fake) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(fake)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    """Entry point of `python -m fakeplur`: serve over stdio until stdin closes."""
    asyncio.run(serve_stdio(Fake(FakeConfig.from_env())))
