"""Command hooks (HOOKS in the config) in Claude Code's protocol: a command run at an event with
JSON on stdin, whose exit code and JSON output may block, rewrite or add context. docs/hooks.md."""
