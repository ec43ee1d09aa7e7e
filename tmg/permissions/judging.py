"""The order of the permission engine's decision, for one call (tmg.permissions.engine says it in
words): deny, the mode's limits, control files, consent servers and ask rules, unreadable lines,
allow rules, the mode, then the defaults.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from tmg.permissions.action import Judgement, ToolAction
from tmg.permissions.lines import CommandPart, RuleIndex, read_line
from tmg.permissions.places import Places
from tmg.permissions.proposal import FetchTarget, propose
from tmg.permissions.rules import RANK, Rule, path_candidates, path_matches, url_matches

READ_ONLY_MODES = ("read-only", "plan")  # nothing that writes or runs (plan: until the user approves a plan)


@dataclass
class _Facts:
    denied: Rule | None = None
    asked: Rule | None = None
    allowed: bool = False  # every part that needs an allow has one that covers it
    used: list[str] = field(default_factory=list)  # the allow rules that did
    needing: list = field(default_factory=list)  # what still needs an allow: command parts, paths, or the call
    problem: str | None = None
    secret: str | None = None  # "path: why"
    control: str | None = None  # "path: why": a control file it may change, not named by a rule
    reads_only: bool = False  # it changes nothing (a read, or a command that only reads)
    looks: bool = False  # a shell line of commands that only read (runs without a question)
    inside_edit: bool = False  # a built-in file tool's edit inside the working folder


def judge(action: ToolAction, index: RuleIndex, mode: str, places: Places,
          mode_denies: Callable[[ToolAction], Judgement]) -> Judgement:
    """The judgement of `action` by the rules of its tool (`index`), the mode and the defaults."""
    rules = index.rules
    facts = (_line(action, index, places) if action.command is not None
             else _paths(action, rules, places) if action.paths
             else _url(action, rules) if action.url is not None else _call(action, rules))
    if facts.denied is not None:
        rule = facts.denied
        return Judgement("deny", f"denied by rule {rule.text} ({rule.origin})",
                         how_to_allow=f"rule {rule.text} in {rule.origin} denies it")
    if mode in READ_ONLY_MODES and not facts.reads_only and action.effect != "network":  # a fetch changes nothing here
        return mode_denies(action)
    if action.outside_sandbox:  # never a rule's, a mode's or a saved answer's to allow (tmg.tools.sandbox)
        return mode_denies(action) if mode in READ_ONLY_MODES else _OUTSIDE_SANDBOX
    if facts.control is not None:
        return Judgement("ask", f"{facts.control}: changing it asks in every mode",
                         why_no_always="tmg's control files are changed only with a yes each time",
                         how_to_allow="tmg's control files change only with your yes at a prompt, in every mode "
                                      "(or edit the file yourself); run tmg in a terminal to be asked")
    if action.requires_consent:
        return Judgement("ask", f"MCP server {action.server} requires consent for every call",
                         how_to_allow=f"MCP server {action.server} has REQUIRES_CONSENT: true; run tmg "
                                      "in a terminal to be asked, or set REQUIRES_CONSENT: false for it")
    if facts.asked is not None:
        rule = facts.asked
        return Judgement("ask", f"rule {rule.text} ({rule.origin}) asks",
                         how_to_allow=f"rule {rule.text} in {rule.origin} asks first; run tmg in a terminal to be asked")
    if facts.problem is not None:
        if mode == "yolo":
            return Judgement("allow", "allowed by yolo mode")
        secret = f"; {facts.secret}" if facts.secret else ""
        return Judgement("ask", f"the command cannot be checked part by part: {facts.problem}{secret}",
                         how_to_allow=f"the command cannot be checked part by part ({facts.problem}); run tmg "
                                      "in a terminal to be asked, or --permissions yolo")
    if facts.allowed:
        return Judgement("allow", f"allowed by rule {', '.join(sorted(set(facts.used)))}")
    if mode == "yolo" and not action.private:  # a private address needs a rule naming it, or a yes
        return Judgement("allow", "allowed by yolo mode")
    if mode == "accept-edits" and facts.inside_edit:
        return Judgement("allow", "allowed by accept-edits mode")
    if facts.looks:
        return Judgement("allow", "a command that only reads, inside the working folder")
    if action.effect == "read" and facts.secret is None:
        return Judgement("allow", f"reads are allowed in {mode} mode" if mode in READ_ONLY_MODES
                         else "reads are allowed by default")
    proposal = propose(action, facts.needing, places, [r for r in rules if r.decision == "deny"])
    return Judgement("ask", _why(action, facts), proposal.rules,
                     how_to_allow=_how_to_allow(proposal.rules), why_no_always=proposal.why_not)


_OUTSIDE_SANDBOX = Judgement(
    "ask", "it would run OUTSIDE the OS sandbox, able to write anywhere you can and to use the network (asked every "
           "time)",
    how_to_allow="a command outside the sandbox is asked about every time; run tmg in a terminal to be asked, or add "
                 "the folder it needs to SANDBOX.WRITABLE (SANDBOX.NETWORK: true for the network)",
    why_no_always="a command outside the sandbox is asked about every time")


def _why(action: ToolAction, facts: _Facts) -> str:
    if action.private:
        return f"{action.private}: fetching it asks first"
    if facts.secret:
        verb = "reading" if action.effect == "read" else "a command naming" if action.command is not None else "changing"
        return f"{facts.secret}: {verb} it asks first"
    part = next((p for p in facts.needing if isinstance(p, CommandPart)), None)
    if part is not None and part.command.hidden:
        missed = f"; the rule {part.missed.text} does not name all of it" if part.missed else ""
        return f"{part.command.hidden}{missed}"
    return {"write": "changing files asks by default", "run": "running a command asks by default",
            "network": "fetching from the web asks by default",
            "sample": "an MCP server's use of your model asks by default"}.get(
        action.effect, "the tool's server does not say it only reads, so it asks by default")


def _how_to_allow(proposals: tuple[str, ...]) -> str:
    if not proposals:
        return "run tmg in a terminal to be asked, or --permissions yolo"
    return (f"to allow it, add {', '.join(proposals)} to PERMISSIONS.ALLOW in your config, answer \"always\" in an "
            "interactive tmg, or run with --permissions yolo")


def _line(action: ToolAction, index: RuleIndex, places: Places) -> _Facts:
    reading = read_line(action.command or "", index, places)
    facts = _Facts(problem=reading.problem, secret=reading.secret, control=reading.control)
    for part in reading.parts:
        rule = part.rule
        if rule is not None and rule.decision == "deny" and facts.denied is None:
            facts.denied = rule
        elif rule is not None and rule.decision == "ask" and facts.asked is None:
            facts.asked = rule
        elif rule is not None and rule.decision == "allow":
            facts.used.append(rule.text)
        elif not part.command.judged_only and not part.looks:  # a command that only reads needs no rule
            facts.needing.append(part)
    if facts.control is None:  # a command that may change one, unless the user's rule names it word for word
        facts.control = next((p.control for p in reading.parts if p.control and not _named_whole(p.rule, p)), None)
    own = [p for p in reading.parts if not p.command.judged_only]
    facts.allowed = bool(facts.used) and not facts.needing and reading.secret in (None, *(p.secret for p in own))
    facts.looks = reading.looks_only
    facts.reads_only = reading.looks_only
    return facts


def _named_whole(rule: Rule | None, part: CommandPart) -> bool:
    return rule is not None and rule.decision == "allow" and rule.spec is not None and rule.words == part.command.words


def _paths(action: ToolAction, rules: list[Rule], places: Places) -> _Facts:
    facts = _Facts()
    places = places.fresh()
    cwd, home = places.cwd, places.home
    facts.secret = (f"{action.paths[0]}: {action.sensitive}" if action.sensitive
                    else next((s for p in action.paths if (s := places.secret(p))), None))
    changes = action.effect != "read"
    for path in action.paths:
        candidates = path_candidates(path, cwd, home)
        rule = _strongest(rules, candidates, cwd, home)
        if rule is not None and rule.decision == "deny":
            facts.denied = facts.denied or rule
        elif rule is not None and rule.decision == "ask":
            facts.asked = facts.asked or rule
        elif rule is not None and not (facts.secret and rule.spec is None):
            facts.used.append(rule.text)  # a tool allowed whole does not reach into ~/.ssh
        else:
            facts.needing.append(candidates[0])
        control = places.control(candidates[0]) if changes else None
        if control and not any(r.decision == "allow" and _names_exactly(r, candidates, cwd, home) for r in rules):
            facts.control = facts.control or control
    facts.allowed = not facts.needing
    facts.reads_only = not changes and facts.secret is None
    facts.inside_edit = (action.server is None and action.effect == "write" and facts.secret is None
                         and facts.control is None and all(places.inside(p) for p in action.paths))
    return facts


def _call(action: ToolAction, rules: list[Rule]) -> _Facts:
    facts = _Facts(reads_only=action.effect == "read")
    best = None
    for rule in rules:
        if rule.spec is None and (best is None or RANK[rule.decision] > RANK[best.decision]):
            best = rule
    if best is not None and best.decision == "deny":
        facts.denied = best
    elif best is not None and best.decision == "ask":
        facts.asked = best
    elif best is not None:
        facts.used.append(best.text)
        facts.allowed = True
    else:
        facts.needing.append(None)
    return facts


def _url(action: ToolAction, rules: list[Rule]) -> _Facts:
    facts = _Facts()
    rule = strongest_url_rule(rules, action.url or "")
    if rule is not None and rule.decision == "deny":
        facts.denied = rule
    elif rule is not None and rule.decision == "ask":
        facts.asked = rule
    elif rule is not None and not (action.private and rule.spec is None):  # a bare web_fetch: not localhost
        facts.used.append(rule.text)
        facts.allowed = True
    else:
        facts.needing.append(FetchTarget(action.url or ""))
    return facts


def strongest_url_rule(rules: list[Rule], url: str) -> Rule | None:
    """The strongest rule covering ``url``; of two allows, one naming it beats a bare one."""
    best: Rule | None = None
    for rule in rules:
        if best is not None and (RANK[rule.decision] < RANK[best.decision] or (
                RANK[rule.decision] == RANK[best.decision] and (best.spec is not None or rule.spec is None))):
            continue
        if rule.spec is None or url_matches(rule, url):
            best = rule
    return best


def _strongest(rules: list[Rule], candidates: tuple[str, ...], cwd: str, home: str) -> Rule | None:
    best: Rule | None = None
    for rule in rules:
        if best is not None and RANK[rule.decision] <= RANK[best.decision]:
            continue
        if rule.spec is None:
            hit = True
        else:
            hits = [path_matches(rule, p, cwd, home) for p in candidates]
            hit = all(hits) if rule.decision == "allow" else any(hits)
        if hit:
            best = rule
    return best


def _names_exactly(rule: Rule, candidates: tuple[str, ...], cwd: str, home: str) -> bool:
    """A path rule without wildcards naming this file: the user's own word that it may change."""
    if rule.spec is None or any(c in rule.spec for c in "*?["):
        return False
    return all(path_matches(rule, p, cwd, home) and os.path.basename(rule.spec) == os.path.basename(p)
               for p in candidates)
