"""Where the rules come from: the config's PERMISSIONS blocks and the saved decisions.

A rule that does not parse is said once, with the file it is in; the others still hold. A saved
deny that no longer parses does not vanish: until it is fixed, every call of the tool it names
asks (what it denied is not allowed by anything less than a person's yes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from tmg.permissions.rules import Rule, RuleError, parse_rule
from tmg.permissions.store import Saved

_TOOL = re.compile(r"^\s*([A-Za-z0-9_*?\[\]-]+)")


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # rules that do not parse, said once


def config_rules(config: Any) -> RuleSet:
    """The rules of `config`'s PERMISSIONS block and, when it is a project's, of the user's own
    config file (with where each came from). Which file a rule is in does not rank it: deny
    beats ask beats allow across both."""
    out = RuleSet()
    for block in (config.user_permissions, config.permissions):
        if block is None:
            continue
        source = block.source or config.source
        where = f" in {source}" if source else ""
        for decision, texts in (("deny", block.deny), ("ask", block.ask), ("allow", block.allow)):
            for text in texts:
                try:
                    out.rules.append(parse_rule(text, decision, f"PERMISSIONS.{decision.upper()}{where}"))
                except RuleError as exc:
                    out.problems.append(f"PERMISSIONS.{decision.upper()}{where}: {exc}")
    return out


def saved_rules(entries: list[Saved], cwd: str, path: object, warn: Callable[[str], None]) -> list[Rule]:
    """The saved decisions that hold in `cwd`, as rules. A saved allow of a whole interpreter,
    executor or destructive program (`shell(rm)`, `shell(git)`: what tmg's prompt saved before it
    learnt better) is not applied: it is said once, with how to keep it on purpose."""
    from tmg.permissions.proposal import never_whole

    origin = f"your saved decisions ({path})"
    out = []
    for entry in entries:
        if not entry.applies_in(cwd):
            continue
        decision = "allow" if entry.decision == "allow" else "deny"
        try:
            rule = parse_rule(entry.rule, decision, origin)
            if decision == "allow" and rule.spec is not None and len(rule.words) == 1 and never_whole(rule.words[0]):
                warn(f"the saved decision {rule.text} in {path} would allow every {rule.words[0]} command; it is "
                     f"not applied (put it in PERMISSIONS.ALLOW of your config if you mean it, or tmg permissions "
                     f"--revoke {rule.text!r})")
                continue
            out.append(rule)
        except RuleError as exc:
            if decision == "allow":
                warn(f"a saved decision in {path} does not parse ({exc}); it is ignored "
                     f"(tmg permissions --revoke {entry.rule!r} drops it)")
                continue
            tool = _TOOL.match(entry.rule)
            name = tool.group(1) if tool else "*"
            warn(f"a saved deny in {path} does not parse ({exc}); until it is fixed, every {name} call asks")
            out.append(Rule(entry.rule, "ask", name, None, f"{origin}, a deny that no longer parses"))
    return out
