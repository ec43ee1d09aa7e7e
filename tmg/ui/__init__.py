"""Rendering: answers (streamed Markdown or plain text), notices, tool logs. The UI renders
engine events; it never drives the engine."""
