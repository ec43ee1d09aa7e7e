"""``activate_skill``: the model loads a skill's instructions when a request matches it.

A tool source rather than a fixed tool: it is offered only while there are skills, and its
``name`` parameter is an enum of the skills known now, so a model cannot invent one.
"""

from __future__ import annotations

from typing import Any

from tmg.permissions.action import ToolAction
from tmg.skills.session import SessionSkills
from tmg.skills.transformer import ACTIVATE_TOOL
from tmg.tools.registry import ToolResult, ToolSource


class SkillTools(ToolSource):
    def __init__(self, skills: SessionSkills) -> None:
        self._skills = skills

    def schemas(self) -> list[dict[str, Any]]:
        names = self._skills.catalog.names()
        if not names:
            return []
        return [{"type": "function", "function": {
            "name": ACTIVATE_TOOL,
            "description": "Load a skill's instructions (see 'Skills' in the system message) into the system "
                           "message for the rest of this session. Call it once, before doing a task the skill covers. "
                           "With `file`, return that file of the skill's folder instead (a reference its "
                           "instructions name).",
            "parameters": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "enum": names, "description": "The skill's name"},
                    "file": {"type": "string", "description": "Optional: a path relative to the skill's folder"},
                },
                "required": ["name"],
            },
        }}]

    def owns(self, name: str) -> bool:
        return name == ACTIVATE_TOOL

    async def settle(self) -> None:
        return None

    def action(self, name: str, arguments: dict[str, Any]) -> ToolAction:
        # Reads only within a known skill's folder (read_file confines it there), and a user
        # skill lives in tmg's own config folder, which the engine would otherwise guard as secret.
        return ToolAction(name, "read")

    async def call(self, name: str, arguments: dict[str, Any], timeout: float) -> ToolResult:
        skill, file = str(arguments.get("name", "")), arguments.get("file")
        if file:
            outcome = self._skills.read_file(skill, str(file))
        else:
            outcome = self._skills.activate(skill, "model")
        return ToolResult(outcome.line, is_error=not outcome.ok)
