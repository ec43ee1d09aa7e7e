"""MCP sampling and resources in a real terminal: the REPL asks before a server uses the model,
showing the server's words, and a prompt's `@server:uri` is read as in a one-shot."""

from __future__ import annotations

import re

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_results import everything_server, tool_message
from e2e.tmux import Terminal, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

PROMPT = r"^default · openai/mock-model"
TRIGGER = "mcp_everything_trigger-sampling-request"


@pytest.fixture
def term(tmg):
    t = Terminal(width=140, height=40)
    yield t
    t.close()


def launch(term: Terminal, tmg) -> None:
    tmg.write_config("MCP_SERVERS:\n" + everything_server() + "    SAMPLING: true\n" +
                     f"PERMISSIONS:\n  ALLOW: [{TRIGGER}]\n")
    term.start_tmg(tmg, prompt=PROMPT, TMG_MCP_WAIT="60")


def test_the_repl_asks_before_a_server_uses_the_model_showing_its_words(term, tmg, llm):
    llm.enqueue(ToolCall(TRIGGER, {"prompt": "name a colour", "maxTokens": 20}), Text("teal"), Text("it said teal"))
    launch(term, tmg)
    term.ask("sample something")
    screen = term.wait_for(r"allow\? \[y/s/a/n/m\]")
    assert ("tmg asks: sampling_everything wants to ask your model (an MCP server's use of your model asks by "
            "default)") in screen
    assert "user: Resource trigger-sampling-request context: name a colour" in screen
    assert "(answer of at most 20 tokens, sent back to the server)" in screen
    assert '"this session" and "always" allow: sampling_everything' in screen
    assert len(llm.requests) == 1  # nothing goes to the model before the answer
    term.type("y")  # one key answers
    term.wait_for("it said teal")
    assert llm.requests[1]["messages"][-1]["content"] == "Resource trigger-sampling-request context: name a colour"
    assert '"text": "teal"' in tool_message(llm.requests[2])["content"]


def test_a_repl_prompt_naming_a_resource_sends_its_text(term, tmg, llm):
    llm.enqueue(Text("read it"))
    launch(term, tmg)
    term.ask("what does @everything:demo://resource/dynamic/text/3 say")
    term.wait_for("read it")
    sent = [m["content"] for m in llm.requests[0]["messages"] if m["role"] == "user"][-1]
    assert sent.startswith("what does @everything:demo://resource/dynamic/text/3 say\n\n--- resource ")
    assert re.search(r"Resource 3: This is a plaintext resource", sent)


def test_tab_completes_a_servers_name_and_its_resource_uris(term, tmg, llm):
    llm.enqueue(Text("read it"))
    launch(term, tmg)
    term.type("what is in @every")
    term.send("Tab")
    term.wait_for(r"what is in @everything:")
    term.type("demo://resource/static/document/archi")
    term.send("Tab")
    term.wait_for(r"@everything:demo://resource/static/document/architecture\.md")
    term.send("Enter")
    term.wait_for("read it")
    sent = [m["content"] for m in llm.requests[0]["messages"] if m["role"] == "user"][-1]
    assert "# Everything Server – Architecture" in sent
