"""Priority 9: the instruction files (AGENTS.md and its kin, tmg.context.instruction_files) into
the system message, right after the persona.

Early in the system message because they change least: the bytes sent stay identical from one
prompt to the next until a file changes (servers' prefix caches), and what changes more often
(the MCP servers' instructions, the skills) comes after them. Looked at once per prompt, at its
first Refining, with a stat per file, as the config is at each phase boundary: a file saved
between two prompts reaches the next one; a tool loop keeps the text it started with.
"""

from __future__ import annotations

from tmg.context.instruction_files import InstructionFiles
from tmg.context.pipeline import TurnContext, content_text


class InstructionsTransformer:
    name = "instructions"
    priority = 9

    def __init__(self, files: InstructionFiles) -> None:
        self._files = files
        self._prompt_id: int | None = None
        self._said: set[str] = set()  # each cut or skip is said once, not at every prompt
        self._section = ""  # the text of the files last looked at, formatted once per change

    async def apply(self, ctx: TurnContext) -> None:
        if ctx.prompt_id != self._prompt_id:
            self._prompt_id = ctx.prompt_id
            if self._files.refresh():
                self._section = self._files.current.section()
                for line in self._files.current.notices():
                    if line not in self._said:
                        self._said.add(line)
                        ctx.notices.append(line)
        section = self._section
        if not section:
            return
        if ctx.messages and ctx.messages[0].get("role") == "system":
            text = content_text(ctx.messages[0]).rstrip()
            ctx.messages[0] = {"role": "system", "content": f"{text}\n\n{section}" if text else section}
        else:
            ctx.messages.insert(0, {"role": "system", "content": section})
