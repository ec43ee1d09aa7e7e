"""fakeplur: an offline stand-in for the PLUR memory MCP server (`python -m fakeplur`).

Derived from the real server, not from tmg: its tools and input schemas are the real server's
tools/list snapshot (`data/plur-tools.json`), it validates and answers with the real envelopes,
and `tests/contract` checks it against the live `@plur-ai/mcp`. Modules: `snapshot` (the data),
`validation` (the real argument checks), `store` (engrams and episodes, JSON file), `ranking`
(inject selection and text), `tools` (what each tool does), `config` (env knobs), `server`
(dispatch, gateway, MCP wiring). See README.md for the knobs.
"""
