"""Agent Skills through the real tmg: discovery, the catalog in the system message, activation by
``$name``, by the model's ``activate_skill`` and by ``/name`` in the REPL, folder trust, and a bad
SKILL.md that must never cost the chat."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.tmux import Terminal, flat, tmux_available

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

DEPLOY_BODY = "Run ./scripts/ship.sh staging, then check https://staging.example.test/health. MARKER-DEPLOY-7"


def skill(root: Path, folder: str, front: str, body: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n\n{body}\n")
    return path


def deploy(root: Path) -> Path:
    return skill(root, "deploy", "name: deploy\ndescription: Ship the app to staging. Use when asked to deploy.",
                 DEPLOY_BODY)


def system_text(request) -> str:
    first = request["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def skill_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "skill" in line.lower()]


def trust_here(tmg) -> None:
    r = tmg.run("trust")
    assert r.code == 0, r.err


def test_a_trusted_projects_skill_is_in_the_catalog_and_its_body_is_not(tmg, llm):
    deploy(tmg.work / ".agents" / "skills")
    trust_here(tmg)
    llm.enqueue(Text("hello"))
    r = tmg.run("hi")
    assert r.code == 0, r.err
    assert r.out == "hello\n"
    assert skill_lines(r.err) == []
    system = system_text(llm.requests[0])
    assert "- deploy: Ship the app to staging. Use when asked to deploy." in system
    assert "MARKER-DEPLOY-7" not in json.dumps(llm.requests[0])  # progressive disclosure: not yet
    (tool,) = [t for t in llm.requests[0]["tools"] if t["function"]["name"] == "activate_skill"]
    assert tool["function"]["parameters"]["properties"]["name"]["enum"] == ["deploy"]
    # The next prompt sends the same system message, byte for byte (a server's prefix cache holds).
    llm.enqueue(Text("again"))
    assert tmg.run("and again").code == 0
    assert system_text(llm.requests[1]) == system


def test_dollar_name_in_a_one_shot_puts_the_body_in_the_request_and_the_session_keeps_it(tmg, llm):
    deploy(tmg.work / ".agents" / "skills")
    trust_here(tmg)
    llm.enqueue(Text("deploying"), Text("still here"), Text("again"))
    r = tmg.run("$deploy ship the login fix")
    assert r.code == 0, r.err
    system = system_text(llm.requests[0])
    assert DEPLOY_BODY in system
    assert f"Folder: {os.path.realpath(tmg.work / '.agents' / 'skills' / 'deploy')}" in system \
        or f"Folder: {tmg.work / '.agents' / 'skills' / 'deploy'}" in system
    assert llm.requests[0]["messages"][-1]["content"] == "$deploy ship the login fix"

    # The next one-shot resumes the session: the body is there without asking again, once.
    r = tmg.run("and the docs?")
    assert r.code == 0, r.err
    assert system_text(llm.requests[1]).count("MARKER-DEPLOY-7") == 1
    # Asking again does not load it twice.
    r = tmg.run("$deploy once more")
    assert r.code == 0, r.err
    assert json.dumps(llm.requests[2]["messages"]).count("MARKER-DEPLOY-7") == 1

    transcript = tmg.run("-t")
    assert "skill deploy activated by you" in transcript.out
    # The body is the session's, not a turn's: nothing that shortens the turns can drop it.
    (folder,) = tmg.session_dirs()
    assert "MARKER-DEPLOY-7" not in (folder / "history.jsonl").read_text()
    assert "MARKER-DEPLOY-7" in (folder / "skills.jsonl").read_text()


def test_in_an_untrusted_folder_project_skills_are_not_loaded_and_one_line_says_so(tmg, llm):
    deploy(tmg.work / ".agents" / "skills")
    skill(tmg.work / ".tmg" / "skills", "lint", "name: lint\ndescription: Lint the code.", "Run ruff.")
    llm.enqueue(Text("plain answer"))
    r = tmg.run("$deploy now")
    assert r.code == 0, r.err
    assert r.out == "plain answer\n"
    (line,) = skill_lines(r.err)
    assert "not trusted" in line and f"tmg trust {tmg.work}" in line
    assert ".agents/skills" in line and ".tmg/skills" in line
    request = json.dumps(llm.requests[0])
    assert "deploy" not in system_text(llm.requests[0]) and "MARKER-DEPLOY-7" not in request
    assert "activate_skill" not in tool_names(llm.requests[0])


def test_the_model_calling_activate_skill_gets_the_body_and_a_second_call_loads_nothing_twice(tmg, llm):
    deploy(tmg.home.parent / "xdg" / "tmg" / "skills")  # a user skill: no trust needed
    llm.enqueue(ToolCall("activate_skill", {"name": "deploy"}), Text("following the skill"))
    r = tmg.run("please deploy")
    assert r.code == 0, r.err
    assert r.out == "following the skill\n"
    assert "MARKER-DEPLOY-7" not in json.dumps(llm.requests[0])
    second = llm.requests[1]
    assert DEPLOY_BODY in system_text(second)
    result = second["messages"][-1]
    assert result["role"] == "tool" and "skill deploy activated" in result["content"]

    llm.enqueue(ToolCall("activate_skill", {"name": "deploy"}), Text("ok"))
    r = tmg.run("deploy again")
    assert r.code == 0, r.err
    last = llm.requests[3]
    assert "already active" in last["messages"][-1]["content"]
    assert json.dumps(last["messages"]).count("MARKER-DEPLOY-7") == 1


def test_a_bad_skill_md_gives_one_line_with_its_path_and_the_chat_works(tmg, llm):
    user_skills = tmg.home.parent / "xdg" / "tmg" / "skills"
    bad = user_skills / "broken" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("# just a heading, no front matter\n")
    # An unquoted ': ' inside the description is not YAML, but is read all the same.
    skill(user_skills, "review", "name: review\ndescription: Review a diff: style, tests, docs.", "Check it.")
    llm.enqueue(Text("fine"))
    r = tmg.run("hello")
    assert r.code == 0, r.err
    assert r.out == "fine\n"
    (line,) = skill_lines(r.err)
    assert str(bad) in line and "front matter" in line
    assert "- review: Review a diff: style, tests, docs." in system_text(llm.requests[0])


def test_a_project_skill_shadows_a_user_skill_of_the_same_name(tmg, llm):
    skill(tmg.home.parent / "user-home" / ".agents" / "skills", "deploy",
          "name: deploy\ndescription: The user's own deploy.", "USER-BODY")
    deploy(tmg.work / ".agents" / "skills")
    trust_here(tmg)
    llm.enqueue(Text("ok"))
    r = tmg.run("$deploy")
    assert r.code == 0, r.err
    system = system_text(llm.requests[0])
    assert "MARKER-DEPLOY-7" in system and "USER-BODY" not in system
    listed = tmg.run("skills")
    assert listed.code == 0, listed.err
    assert "deploy" in listed.out and "project .agents/skills" in listed.out
    assert "not used: deploy from user ~/.agents/skills" in listed.out


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_repl_lists_skills_and_slash_name_activates_one(tmg, llm):
    deploy(tmg.work / ".agents" / "skills")
    skill(tmg.home.parent / "xdg" / "tmg" / "skills", "notes", "name: notes\ndescription: Keep release notes.",
          "NOTES-BODY")
    trust_here(tmg)
    llm.enqueue(Text("on it"))
    term = Terminal(width=160, height=40)
    try:
        term.start_tmg(tmg, prompt=r"default · openai/mock-model >")
        term.ask("/skills")
        screen = term.wait_for(r"notes\s+Keep release notes")
        assert "deploy" in screen and "project .agents/skills" in screen
        assert "xdg/tmg/skills" in flat(screen)  # however the path wraps
        term.ask("/deploy ship it")
        term.wait_for(r"on it")
        assert DEPLOY_BODY in system_text(llm.requests[0])
        assert "NOTES-BODY" not in json.dumps(llm.requests[0])
        assert llm.requests[0]["messages"][-1]["content"] == "/deploy ship it"
        term.ask("/skills")
        term.wait_for(r"project \.agents/skills; active")
        term.type("/notes")  # no request: the skill is activated, nothing is sent
        term.send("Enter")
        term.wait_for(r"skill notes is active")
        assert len(llm.requests) == 1
    finally:
        term.close()
