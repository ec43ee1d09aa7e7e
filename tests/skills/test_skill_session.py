"""Skills in process: lenient SKILL.md parsing, discovery and its cache, activation kept by the
session, and the system message the transformer builds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tmg.compose import build_pipeline
from tmg.config.model import Config
from tmg.context.pipeline import TurnContext
from tmg.skills.discovery import SkillScanner
from tmg.skills.session import SessionSkills
from tmg.skills.skill import SkillError, parse_skill
from tmg.skills.tool import SkillTools

P = Path("/s/x/SKILL.md")


def write(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def good(name: str, description: str = "Does a thing.", body: str = "Steps.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


# -- parsing -------------------------------------------------------------------------------


def test_front_matter_keeps_other_keys_and_the_body():
    s = parse_skill("---\nname: pdf\ndescription: Read PDFs.\nlicense: MIT\nmetadata:\n  v: 1\n---\n# PDF\nUse it.\n",
                    P, "user")
    assert (s.name, s.description, s.body) == ("pdf", "Read PDFs.", "# PDF\nUse it.")
    assert s.extra == {"license": "MIT", "metadata": {"v": 1}}


def test_an_unquoted_colon_in_the_description_is_read_as_text():
    s = parse_skill("---\nname: review\ndescription: Review a diff: style, tests.\n---\nbody", P, "user")
    assert s.description == "Review a diff: style, tests."


def test_front_matter_yaml_refuses_is_still_read_line_by_line():
    s = parse_skill("---\nname: review\ndescription: Review: a diff\nmetadata:\n  author: me\n---\nbody", P, "user")
    assert (s.name, s.description) == ("review", "Review: a diff")


def test_a_folded_multiline_description_is_one_line():
    s = parse_skill("---\nname: a\ndescription: >\n  first line\n  second line\n---\n", P, "user")
    assert s.description == "first line second line"


@pytest.mark.parametrize("text, expected", [
    ("# no front matter\n", "no front matter"),
    ("---\nname: a\ndescription: b\n", "not closed"),
    ("---\nname: a\n---\nbody", "no description"),
    ("---\ndescription: only this\n---\n", "no name"),
    ("---\nname: my skill\ndescription: b\n---\n", "not usable"),
])
def test_an_unusable_skill_md_says_what_is_wrong_and_names_the_file(text, expected):
    with pytest.raises(SkillError, match=expected) as info:
        parse_skill(text, P, "user")
    assert str(P) in str(info.value)


def test_a_crlf_file_with_a_byte_order_mark_parses(tmp_path):
    write(tmp_path / "tmg" / "skills", "w", "\ufeff---\r\nname: w\r\ndescription: Windows.\r\n---\r\nBody\r\n")
    scanner = SkillScanner({"HOME": str(tmp_path / "h"), "XDG_CONFIG_HOME": str(tmp_path)}, tmp_path / "cwd",
                           lambda _f: False)
    assert scanner.scan().skills["w"].body == "Body"


# -- discovery -----------------------------------------------------------------------------


@pytest.fixture
def places(tmp_path):
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    cwd = tmp_path / "project"
    cwd.mkdir()
    return env, cwd, tmp_path / "xdg" / "tmg" / "skills", cwd / ".agents" / "skills"


def test_the_catalog_is_in_name_order_and_unchanged_files_are_not_parsed_again(places):
    env, cwd, user, _ = places
    for name in ("zeta", "alpha", "mid"):
        write(user, name, good(name))
    scanner = SkillScanner(env, cwd, lambda _f: True)
    first = scanner.scan()
    assert first.names() == ["alpha", "mid", "zeta"]
    assert scanner.scan() is first  # nothing changed: the same catalog, nothing re-read

    path = write(user, "alpha", good("alpha", "Changed."))
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    second = scanner.scan()
    assert second is not first and second.skills["alpha"].description == "Changed."
    assert second.skills["zeta"] is first.skills["zeta"]  # the unchanged one came from the cache


def test_project_skills_need_trust_and_trust_is_asked_only_when_there_are_some(places):
    env, cwd, user, project = places
    asked = []
    write(user, "u", good("u"))
    scanner = SkillScanner(env, cwd, lambda f: asked.append(f) or False)
    assert scanner.scan().names() == ["u"] and asked == []
    write(project, "p", good("p"))
    catalog = SkillScanner(env, cwd, lambda f: asked.append(f) or False).scan()
    assert catalog.names() == ["u"] and catalog.untrusted == [project] and asked == [cwd]
    assert SkillScanner(env, cwd, lambda _f: True).scan().names() == ["p", "u"]


def test_a_project_skill_beats_a_user_skill_of_the_same_name(places):
    env, cwd, user, project = places
    write(user, "deploy", good("deploy", "user's"))
    write(project, "deploy", good("deploy", "project's"))
    catalog = SkillScanner(env, cwd, lambda _f: True).scan()
    assert catalog.skills["deploy"].description == "project's"
    (shadowed,) = catalog.shadowed
    assert shadowed.skill.description == "user's"


# -- the session ---------------------------------------------------------------------------


def session(places, tmp_path, warned=None, recorded=None) -> SessionSkills:
    env, cwd, _, _ = places
    return SessionSkills(SkillScanner(env, cwd, lambda _f: True), tmp_path / "session",
                         warn=(warned if warned is not None else []).append,
                         record=(recorded if recorded is not None else []).append)


def test_a_bad_skill_is_reported_once_per_session_not_per_prompt(places, tmp_path):
    _, _, user, _ = places
    write(user, "bad", "no front matter")
    warned: list[str] = []
    skills = session(places, tmp_path, warned)
    write(user, "good", good("good"))  # the catalog changes; the bad one is not said again
    skills.refresh()
    skills.refresh()
    assert len(warned) == 1 and "bad/SKILL.md" in warned[0]
    assert skills.catalog.names() == ["good"]


def test_activation_is_kept_by_the_session_and_not_loaded_twice(places, tmp_path):
    _, _, user, _ = places
    (tmp_path / "session").mkdir()
    write(user, "deploy", good("deploy", body="Ship it."))
    (user / "deploy" / "scripts").mkdir()
    (user / "deploy" / "scripts" / "ship.sh").write_text("#!/bin/sh\n")
    recorded: list[str] = []
    skills = session(places, tmp_path, recorded=recorded)
    assert skills.activate("deploy", "model").status == "activated"
    assert skills.activate("deploy", "user").status == "already"
    assert skills.activate("nope", "model").status == "failed"
    assert recorded == ["skill deploy activated by the model"]
    assert skills.active["deploy"].files == ("scripts/ship.sh",)

    resumed = session(places, tmp_path)
    assert list(resumed.active) == ["deploy"] and resumed.active["deploy"].body == "Ship it."
    write(user, "deploy", good("deploy", body="Ship it, then check."))
    resumed.refresh()
    assert resumed.activate("deploy", "user").status == "refreshed"
    assert session(places, tmp_path).active["deploy"].body == "Ship it, then check."


def test_dollar_name_activates_and_a_typo_says_one_line(places, tmp_path):
    _, _, user, _ = places
    write(user, "deploy", good("deploy"))
    warned: list[str] = []
    skills = session(places, tmp_path, warned)
    assert skills.leading_invocation("$HOME is wrong") is None and warned == []
    assert skills.leading_invocation("costs $deploy") is None
    assert skills.leading_invocation("$deplyo now") is None
    assert warned == ["no skill named deplyo; did you mean $deploy? (the prompt is sent as typed, without a skill)"]
    outcome = skills.leading_invocation("$deploy now")
    assert outcome is not None and outcome.status == "activated"


async def test_the_system_message_has_the_catalog_then_active_bodies_and_is_stable(places, tmp_path):
    _, _, user, _ = places
    write(user, "b-skill", good("b-skill", "Second.", "B BODY"))
    write(user, "a-skill", good("a-skill", "First.", "A BODY"))
    skills = session(places, tmp_path)
    pipeline = build_pipeline(skills=skills)

    async def system(prompt_id: int) -> str:
        ctx = TurnContext([{"role": "user", "content": "q"}], Config(person="You help."), prompt_id, 1)
        refined = await pipeline.run(ctx)
        return refined.payload[0]["content"]

    first = await system(1)
    assert first.startswith("You help.\n\n# Skills")
    assert first.index("- a-skill: First.") < first.index("- b-skill: Second.")
    assert "BODY" not in first
    assert await system(2) == first  # byte-identical from prompt to prompt

    skills.activate("b-skill", "user")
    skills.activate("a-skill", "model")
    text = await system(3)
    assert text.startswith(first)  # the catalog part is unchanged; bodies follow it
    assert text.index("B BODY") < text.index("A BODY") and text.count("B BODY") == 1


def test_the_tool_is_offered_only_with_skills_and_its_name_is_an_enum(places, tmp_path):
    _, _, user, _ = places
    skills = session(places, tmp_path)
    tools = SkillTools(skills)
    assert tools.schemas() == []
    write(user, "x", good("x"))
    skills.refresh()
    (schema,) = tools.schemas()
    assert schema["function"]["parameters"]["properties"]["name"]["enum"] == ["x"]


def test_a_huge_skill_file_is_refused_not_read_whole(places, tmp_path):
    _, _, user, _ = places
    write(user, "big", good("big", body="x" * 400_000))
    warned: list[str] = []
    skills = session(places, tmp_path, warned)
    assert skills.catalog.names() == [] and "larger than" in warned[0]


async def test_the_model_reads_a_file_of_the_skill_through_the_tool_and_nothing_outside_it(places, tmp_path):
    _, _, user, _ = places
    write(user, "deploy", good("deploy", body="See reference.md."))
    (user / "deploy" / "reference.md").write_text("THE REFERENCE")
    (user / "secret.txt").write_text("NOT FOR THE MODEL")
    (user / "deploy" / "link.txt").symlink_to(user / "secret.txt")
    tools = SkillTools(session(places, tmp_path))
    result = await tools.call("activate_skill", {"name": "deploy", "file": "reference.md"}, 5)
    assert result.content == "THE REFERENCE" and not result.is_error
    for escape in ("../secret.txt", "link.txt", str(user / "secret.txt")):
        result = await tools.call("activate_skill", {"name": "deploy", "file": escape}, 5)
        assert result.is_error and "NOT FOR THE MODEL" not in result.content
    # A plain read for the permission engine: no path of tmg's own config folder to guard as secret
    # (read_file above is what confines it to the skill's folder).
    action = tools.action("activate_skill", {"name": "deploy", "file": "reference.md"})
    assert action.effect == "read" and action.paths == () and action.sensitive is None
