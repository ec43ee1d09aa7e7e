"""The permission engine: allow, ask or deny for every tool call, built-in or MCP (SPEC §7).

The order: rules (the user's PERMISSIONS.DENY/ASK/ALLOW, a project's beside them when a ./tmg.yaml
is the config (an untrusted one's ALLOW withheld), and the user's saved "always" decisions), then the mode (`--permissions` or PERMISSIONS.MODE), then defaults
(reads allowed; writes, commands, fetching a URL and unannotated MCP tools ask; files that hold
secrets ask). Plan mode is read-only until the user approves the model's plan (`set_mode`). A URL
that names a loopback or private address needs a rule naming it, or the user's answer, in every mode.
Deny beats ask beats allow. A shell command is judged part by part (tmg.permissions.shell):
every simple command in it must be allowed, one denied part denies the whole, and a line that
cannot be read part by part asks. A server marked REQUIRES_CONSENT asks on every call.

"Ask" goes to the asker (the REPL's prompt); without one (a one-shot, no terminal) it is a
refusal: the model is told why, stderr gets one line naming the rule or flag that would allow it.
Every decision goes to `record` (the transcript).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol

from tmg.permissions.action import PermissionGate, ToolAction, Verdict
from tmg.permissions.rules import (RANK, Decision, Rule, RuleError, command_matches, parse_rule, path_candidates,
                                   path_matches, url_matches, url_target)
from tmg.permissions.store import DecisionStore
from tmg.tools.sensitive import SensitivePaths

MODES = ("default", "accept-edits", "read-only", "plan", "yolo")
Mode = Literal["default", "accept-edits", "read-only", "plan", "yolo"]
# The modes in which nothing that writes or runs happens.
_READ_ONLY = ("read-only", "plan")
# Tools whose first argument is usually a subcommand: "always" for `git status -s` saves
# `git status`, not every git command.
_SUBCOMMANDED = {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "podman", "kubectl", "pip", "pip3", "uv",
                 "poetry", "apt", "apt-get", "brew", "gh", "systemctl", "dotnet", "mvn", "gradle", "bundle",
                 "make", "just", "npx", "bun", "deno", "rustup", "conda", "helm", "terraform"}


@dataclass(frozen=True)
class Judgement:
    decision: Decision
    reason: str  # for the transcript and the prompt: "allowed by rule shell(ls)", "running a command asks by default"
    proposals: tuple[str, ...] = ()  # rules that "yes, always" would save (none: "always" is not offered)
    how_to_allow: str = ""  # the one line for a refusal without a terminal


@dataclass(frozen=True)
class Answer:
    kind: Literal["once", "always", "no"]
    note: str = ""  # the user's words to the model, with "no"


@dataclass(frozen=True)
class Question:
    action: ToolAction
    judgement: Judgement
    mode: str


class Asker(Protocol):
    async def __call__(self, question: Question) -> Answer: ...


@dataclass
class _Target:
    kind: Literal["command", "path", "url", "call"]
    words: tuple[str, ...] = ()
    url: str = ""
    paths: tuple[str, ...] = ()  # the candidates of one path (as written, as it really is)
    judged_only: bool = False
    rule: Rule | None = None


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # rules that do not parse, said once


def config_rules(config: Any) -> RuleSet:
    """The rules of `config`'s PERMISSIONS block and, when it is a project's, of the user's own
    config file (with where each came from). Which file a rule is in does not rank it: deny
    beats ask beats allow across both."""
    out = RuleSet()
    for block in (getattr(config, "user_permissions", None), getattr(config, "permissions", None)):
        if block is None:
            continue
        source = block.source or getattr(config, "source", None)
        where = f" in {source}" if source else ""
        for decision, texts in (("deny", block.deny), ("ask", block.ask), ("allow", block.allow)):
            for text in texts:
                try:
                    out.rules.append(parse_rule(text, decision, f"PERMISSIONS.{decision.upper()}{where}"))
                except RuleError as exc:
                    out.problems.append(f"PERMISSIONS.{decision.upper()}{where}: {exc}")
    return out


class PermissionEngine(PermissionGate):
    def __init__(
        self,
        config: Callable[[], Any],
        *,
        cwd: str,
        env: dict[str, str] | Any,
        store: DecisionStore | None = None,
        mode: str | None = None,
        asker: Asker | None = None,
        record: Callable[[str], None] = lambda _t: None,
        refused: Callable[[str], None] = lambda _t: None,
        warn: Callable[[str], None] = lambda _t: None,
    ) -> None:
        self._config = config
        self._cwd = os.path.realpath(cwd)
        self._home = os.path.expanduser("~") if not env.get("HOME") else env["HOME"]
        self._store = store
        self._mode_flag = mode
        self._mode_said = "--permissions"  # what set the mode flag: the command line, /plan, an approved plan
        self.asker = asker
        self._record = record
        self._refused = refused
        self._warn = warn
        self._sensitive = SensitivePaths({**env, "HOME": self._home})  # the tools' own classifier: one list of secret files
        self._rules_key: tuple[Any, int] | None = None  # (the config, the store's generation) they came from
        self._rules: list[Rule] = []
        self._told: set[str] = set()

    # -- what holds now ----------------------------------------------------------------------

    def mode(self) -> str:
        if self._mode_flag:
            return self._mode_flag
        block = getattr(self._config(), "permissions", None)
        return getattr(block, "mode", "default") or "default"

    def set_mode(self, mode: str, source: str) -> None:
        """Switch the mode for the rest of the session (/plan, an approved plan); ``source``
        says what switched it, for /permissions and refusals."""
        if mode not in MODES:
            raise ValueError(f"no permission mode {mode!r}")
        self._mode_flag, self._mode_said = mode, source
        self._record(f"permission mode {mode} ({source})")

    @property
    def store(self) -> DecisionStore:
        assert self._store is not None
        return self._store

    def describe(self) -> list[str]:
        """What holds now, for /permissions: the mode, the config's rules, the saved decisions."""
        lines = [f"permissions: mode {self.mode()} ({self.mode_source()})"]
        config = self._config()
        layered = getattr(config, "user_permissions", None) is not None  # the user's file and a project's
        for decision in ("deny", "ask", "allow"):
            rules = [r.text + (f" ({r.origin.partition(' in ')[2]})" if layered else "")
                     for r in config_rules(config).rules if r.decision == decision]
            if rules:
                lines.append(f"  {decision}: {', '.join(rules)}")
        if self._store is not None:
            lines.extend(self._store.listing())
        return lines

    def mode_source(self) -> str:
        if self._mode_flag:
            return self._mode_said
        origin = getattr(self._config(), "origin", lambda _p: "")("PERMISSIONS.MODE")
        # The user's own file, when a project's tmg.yaml is the config (tmg.config.loader).
        return f"PERMISSIONS.MODE in {origin[5:]}" if origin.startswith("file /") else "PERMISSIONS.MODE"

    def rules(self) -> list[Rule]:
        """The config's rules and the saved decisions that hold in this folder (cached until
        either changes: a reload, a revoke)."""
        config = self._config()
        saved = self._saved()
        generation = self._store.generation if self._store is not None else 0
        if self._rules_key is None or self._rules_key[0] is not config or self._rules_key[1] != generation:
            found = config_rules(config)
            for problem in found.problems:
                if problem not in self._told:
                    self._told.add(problem)
                    self._warn(f"{problem}; the rule is ignored")
            rules = found.rules
            for entry in saved:
                if entry.applies_in(self._cwd):
                    try:
                        rules.append(parse_rule(entry.rule, "allow" if entry.decision == "allow" else "deny",
                                                f"your saved decisions ({self._store.path})"))
                    except RuleError:
                        pass
            self._rules, self._rules_key = rules, (config, generation)
        return self._rules

    def _saved(self) -> list:
        if self._store is None:
            return _NO_SAVED
        try:
            return self._store.entries()
        except Exception as exc:  # noqa: BLE001 - a damaged file is said once; the config's rules still hold
            text = str(exc)
            if text not in self._told:
                self._told.add(text)
                self._warn(text)
            return _NO_SAVED

    # -- judging -----------------------------------------------------------------------------

    def judge(self, action: ToolAction) -> Judgement:
        mode = self.mode()
        rules = [r for r in self.rules() if r.names(action.tool)]
        problem: str | None = None
        if action.command is not None:
            from tmg.permissions.shell import split_command

            split = split_command(action.command)
            targets = [_Target("command", c.words, judged_only=c.judged_only) for c in split.commands]
            problem = split.problem
            if split.writes and problem is None:
                problem = f"it writes to {', '.join(split.writes)} by redirection"
        elif action.paths:
            targets = [_Target("path", paths=path_candidates(p, self._cwd, self._home)) for p in action.paths]
        elif action.url is not None:
            targets = [_Target("url", url=action.url)]
        else:
            targets = [_Target("call")]
        for target in targets:
            target.rule = _strongest(rules, target, self._cwd, self._home)

        denied = next((t.rule for t in targets if t.rule is not None and t.rule.decision == "deny"), None)
        if denied is not None:
            return Judgement("deny", f"denied by rule {denied.text} ({denied.origin})",
                             how_to_allow=f"rule {denied.text} in {denied.origin} denies it")
        if mode == "plan" and action.effect in ("write", "run", "unknown"):
            return self._mode_denies(action)  # not even an allow rule: the plan comes first
        if action.outside_sandbox:  # never a rule's, a mode's or a saved answer's to allow (tmg.tools.sandbox)
            return _outside_sandbox(mode, self._mode_denies(action))
        sensitive = action.sensitive or next(
            (r for t in targets for p in t.paths if (r := self._sensitive.reason(p))), None)
        if action.requires_consent:
            if mode in _READ_ONLY and action.effect != "read":
                return self._mode_denies(action)
            return Judgement("ask", f"MCP server {action.server} requires consent for every call",
                             how_to_allow=f"MCP server {action.server} has REQUIRES_CONSENT: true; run tmg "
                                          "in a terminal to be asked, or set REQUIRES_CONSENT: false for it")
        asked = next((t.rule for t in targets if t.rule is not None and t.rule.decision == "ask"), None)
        if asked is not None:
            return Judgement("ask", f"rule {asked.text} ({asked.origin}) asks",
                             how_to_allow=f"rule {asked.text} in {asked.origin} asks first; run tmg in a "
                                          "terminal to be asked")
        if problem is not None:
            if mode == "yolo":
                return Judgement("allow", "allowed by yolo mode")
            if mode in _READ_ONLY:
                return self._mode_denies(action)
            return Judgement("ask", f"the command cannot be checked part by part: {problem}",
                             how_to_allow=f"the command cannot be checked part by part ({problem}); run tmg "
                                          "in a terminal to be asked, or --permissions yolo")
        needing = [t for t in targets if not t.judged_only and (t.rule is None or t.rule.decision != "allow")]
        # A file that holds secrets, or a URL of a private address, needs a rule naming it (a
        # glob): `read_file` or `web_fetch` allowed whole, to quiet the prompts, does not reach
        # into ~/.ssh or the user's local services.
        guarded = sensitive or action.private
        broad = guarded and any(t.rule is not None and t.rule.spec is None for t in targets)
        if not needing and not broad and any(not t.judged_only for t in targets):
            used = sorted({t.rule.text for t in targets if t.rule is not None})
            return Judgement("allow", f"allowed by rule {', '.join(used)}")
        if mode == "yolo" and not action.private:
            return Judgement("allow", "allowed by yolo mode")
        if mode in _READ_ONLY and action.effect != "network":  # a fetch changes nothing here: it asks
            if action.effect == "read" and not sensitive:
                return Judgement("allow", f"reads are allowed in {mode} mode")
            return self._mode_denies(action)
        if mode == "accept-edits" and action.effect == "write" and not sensitive:
            return Judgement("allow", "allowed by accept-edits mode")
        if action.effect == "read" and not sensitive:
            return Judgement("allow", "reads are allowed by default")
        proposals = tuple(dict.fromkeys(self._proposal(action, t, bool(sensitive))
                                      for t in (needing or [t for t in targets if not t.judged_only])))
        if action.private:
            why = f"{action.private}: fetching it asks first"
        elif sensitive:
            why = f"{sensitive}: reading it asks first" if action.effect == "read" else f"{sensitive}: changing it asks first"
        else:
            why = {"write": "changing files asks by default", "run": "running a command asks by default",
                   "network": "fetching from the web asks by default",
                   "sample": "an MCP server's use of your model asks by default"}.get(
                action.effect, "the tool's server does not say it only reads, so it asks by default")
        return Judgement("ask", why, proposals, how_to_allow=self._how_to_allow(proposals))

    def rule_names_url(self, tool: str, url: str) -> bool:
        """A rule naming this URL allows ``tool`` to fetch it (a bare `web_fetch` does not): what
        a fetch needs for a host that resolves to, or redirects to, a private address."""
        best = _strongest([r for r in self.rules() if r.names(tool)], _Target("url", url=url), self._cwd, self._home)
        return best is not None and best.decision == "allow" and best.spec is not None

    def _mode_denies(self, action: ToolAction) -> Judgement:
        if self.mode() == "plan":
            return Judgement("deny", "denied by plan mode (only reads until the user approves a plan)",
                             how_to_allow=f"plan mode ({self.mode_source()}) runs only what reads; propose the plan "
                                          "with exit_plan_mode, and once the user approves it the changes can be made")
        return Judgement("deny", "denied by read-only mode (nothing that writes or runs)",
                         how_to_allow=f"read-only mode ({self.mode_source()}) allows nothing that writes or runs; "
                                      "use --permissions default to be asked")

    def _proposal(self, action: ToolAction, target: _Target, sensitive: bool) -> str:
        if target.kind == "command":
            words = target.words
            keep = 2 if (words[0] in _SUBCOMMANDED and len(words) > 1 and not words[1].startswith("-")) else 1
            import shlex

            return f"{action.tool}({shlex.join(words[:keep])})"
        if target.kind == "url":
            found = url_target(target.url)
            where = found[1].partition("/")[0] if found else target.url
            return f"{action.tool}({where}/**)"
        if target.kind == "path":
            path = target.paths[0]
            if sensitive or action.effect == "read":
                return f"{action.tool}({path})"
            return f"{action.tool}({os.path.dirname(path)}/**)"
        return action.tool

    def _how_to_allow(self, proposals: tuple[str, ...]) -> str:
        rules = ", ".join(proposals)
        return (f"to allow it, add {rules} to PERMISSIONS.ALLOW in your config, answer \"always\" in an "
                "interactive tmg, or run with --permissions yolo")

    # -- the gate ----------------------------------------------------------------------------

    async def check(self, action: ToolAction) -> Verdict:
        judgement = self.judge(action)
        what = _what(action)
        if judgement.decision == "allow":
            self._record(f"{what} {judgement.reason}")
            return Verdict(True, judgement.reason)
        if judgement.decision == "deny":
            self._record(f"{what} {judgement.reason}")
            self._refused(f"refused {what}: {judgement.how_to_allow}")
            return Verdict(False, judgement.reason, _model_note(what, judgement.reason, judgement.how_to_allow))
        if self.asker is None:
            self._record(f"{what} refused ({judgement.reason}; no terminal to ask)")
            self._refused(f"refused {what} ({judgement.reason}; no terminal to ask): {judgement.how_to_allow}")
            return Verdict(False, f"{judgement.reason}; no terminal to ask",
                           _model_note(what, f"{judgement.reason}, and this run cannot ask the user",
                                       judgement.how_to_allow))
        answer = await self.asker(Question(action, judgement, self.mode()))
        if answer.kind == "no":
            said = f" with a note: {answer.note}" if answer.note else ""
            self._record(f"{what} asked ({judgement.reason}) and declined{said}")
            note = f"the user declined {what}" + (f" and says: {answer.note}" if answer.note else "")
            return Verdict(False, "declined by the user", note)
        if answer.kind == "always" and judgement.proposals and self._store is not None:
            for rule in judgement.proposals:
                self._store.add(rule, self._cwd)
            self._record(f"{what} asked ({judgement.reason}) and accepted always "
                         f"(saved {', '.join(judgement.proposals)})")
            return Verdict(True, f"accepted always ({', '.join(judgement.proposals)})")
        self._record(f"{what} asked ({judgement.reason}) and accepted once")
        return Verdict(True, "accepted once")


_NO_SAVED: list = []


def _strongest(rules: list[Rule], target: _Target, cwd: str, home: str) -> Rule | None:
    best: Rule | None = None
    for rule in rules:
        if best is not None and RANK[rule.decision] <= RANK[best.decision]:
            continue
        if rule.spec is None:
            hit = True
        elif target.kind == "command":
            hit = command_matches(rule, target.words, loose_name=rule.decision != "allow")
        elif target.kind == "path":
            hits = [path_matches(rule, p, cwd, home) for p in target.paths]
            hit = all(hits) if rule.decision == "allow" else any(hits)
        elif target.kind == "url":
            hit = url_matches(rule, target.url)
        else:
            hit = False
        if hit:
            best = rule
    return best


def _outside_sandbox(mode: str, read_only: Judgement) -> Judgement:
    if mode == "read-only":
        return read_only
    return Judgement("ask", "it would run OUTSIDE the OS sandbox, able to write anywhere you can and to use the "
                            "network (asked every time)",
                     how_to_allow="a command outside the sandbox is asked about every time; run tmg in a terminal "
                                  "to be asked, or add the folder it needs to SANDBOX.WRITABLE (SANDBOX.NETWORK: "
                                  "true for the network)")


def _what(action: ToolAction) -> str:
    """The call in a few words: "shell `touch x`", "write_file /a/b", "mcp_fs_write"."""
    if action.command is not None:
        command = action.command if len(action.command) <= 120 else action.command[:117] + "..."
        return f"{action.tool} `{command}`"
    if action.paths:
        return f"{action.tool} {', '.join(action.paths)}"
    if action.url is not None:
        return f"{action.tool} {action.url if len(action.url) <= 200 else action.url[:197] + '...'}"
    return action.tool


def _model_note(what: str, why: str, how: str) -> str:
    return (f"the user's permission settings did not allow {what}: {why}. Do not try to get around this; "
            f"tell the user what you wanted to do and why. ({how})")

