"""Markdown as a chat shows a model's answer: a single line break stays a line break.

CommonMark joins the lines of a paragraph into one (a "soft break" renders as a space), which
flattens poems, addresses, command lists and logs; piped output keeps them as sent, and chat
front-ends keep them too. Only paragraphs have soft breaks: code blocks, tables, headings and
list structure render as before.
"""

from __future__ import annotations

from typing import Any

from rich.markdown import Markdown


class ChatMarkdown(Markdown):
    def __init__(self, markup: str, **options: Any) -> None:
        super().__init__(markup, **options)
        for token in self.parsed:  # block tokens; an inline token's children are its text
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"
