"""The one mapping from an MCP_SERVERS entry to a server to start (doctor and memory share it)."""

from __future__ import annotations

from tmg.config.model import McpServerConfig
from tmg.mcp.spec import spec_from_config


def test_a_stdio_entry_gets_its_env_over_a_minimal_base_and_never_a_provider_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-2")
    monkeypatch.setenv("PATH", "/usr/bin")
    entry = McpServerConfig(name="plur", command="node", args=("plur.js",), env={"PLUR_TOOL_PROFILE": "full"},
                            dir="/srv", timeout=5)
    spec = spec_from_config(entry, "/tmp/err.log")
    assert (spec.name, spec.command, spec.args, spec.cwd, spec.errlog) == (
        "plur", "node", ("plur.js",), "/srv", "/tmp/err.log")
    assert spec.env["PLUR_TOOL_PROFILE"] == "full" and spec.env["PATH"] == "/usr/bin"
    assert "sk-secret" not in " ".join(spec.env.values())
    assert not any(k.endswith("_API_KEY") for k in spec.env)


def test_a_url_entry_is_an_http_server_without_a_process():
    spec = spec_from_config(McpServerConfig(name="remote", url="https://mcp.example/mcp"))
    assert spec.url == "https://mcp.example/mcp" and spec.command is None and spec.env == {}


def test_no_dir_and_no_errlog_mean_none():
    spec = spec_from_config(McpServerConfig(name="x", command="srv"))
    assert spec.cwd is None and spec.errlog is None


def test_env_and_headers_stay_out_of_the_repr_that_debug_output_and_tracebacks_show():
    token = "ghp_secret_token_1234"
    stdio = spec_from_config(McpServerConfig(name="gh", command="srv", env={"GITHUB_TOKEN": token}))
    remote = spec_from_config(McpServerConfig(name="remote", url="https://mcp.example/mcp",
                                              headers={"Authorization": f"Bearer {token}"}))
    assert stdio.env["GITHUB_TOKEN"] == token  # still there for the child
    for spec in (stdio, remote):
        shown = repr(spec)
        assert spec.name in shown and token not in shown and "GITHUB_TOKEN" not in shown
    from tmg.broker.child import Spec

    warm = Spec.from_wire({"name": "gh", "command": "srv", "env": {"GITHUB_TOKEN": token}})
    assert "srv" in repr(warm) and token not in repr(warm)
