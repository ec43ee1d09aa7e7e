"""The permission engine: allow, ask or deny for every tool call, built-in or MCP (SPEC §7).

The order, first match decides:
1. deny: a rule of PERMISSIONS.DENY (the user's, a project's beside them when a ./tmg.yaml is the
   config, and saved decisions), wherever the command stands in the line (tmg.permissions.lines);
2. the mode's limits: `read-only` refuses whatever writes or runs, whatever a rule allows (a
   command that only reads still runs), and so does `plan` until the user approves the model's
   plan (`set_mode`); then a command to run outside the OS sandbox asks every time;
3. tmg's control files (its config, trust and permission stores, TMG_HOME, .git/hooks, skills:
   tmg.permissions.control): a change asks in every mode, yolo too, unless a rule names the file;
4. a server marked REQUIRES_CONSENT, then an ask rule: asks;
5. a line that cannot be read part by part: asks (yolo runs it);
6. allow: config rules, saved "always" answers and this session's "yes for this session", each
   covering every part of the call (a command that may run hidden code or names a secret file
   needs a rule naming all of it; a bare tool rule does not reach secret files);
7. the mode: yolo runs it; accept-edits runs a built-in file edit inside the working folder;
8. defaults: reads run, and so do commands that only read (`git status`, `ls`); writes, commands,
   fetching a URL, secret files and MCP tools not annotated read-only ask. A URL of a loopback or
   private address needs a rule naming it, or the user's answer, in every mode.

"Ask" goes to the asker (the REPL's prompt); without one (a one-shot) it is a refusal: the model
is told why, stderr gets one line naming the rule or flag that would allow it. Every decision
goes to `record` (the transcript).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Literal, Protocol

from tmg.permissions.action import Judgement, PermissionGate, ToolAction, Verdict
from tmg.permissions.control import ControlFiles
from tmg.permissions.places import Places
from tmg.permissions.rules import Rule, parse_rule
from tmg.permissions.rulesets import config_rules, saved_rules
from tmg.permissions.sensitive import SensitivePaths
from tmg.permissions.store import DecisionStore

MODES = ("default", "accept-edits", "read-only", "plan", "yolo")
Mode = Literal["default", "accept-edits", "read-only", "plan", "yolo"]


@dataclass(frozen=True)
class Answer:
    kind: Literal["once", "session", "always", "no"]
    note: str = ""  # the user's words to the model, with "no"


@dataclass(frozen=True)
class Question:
    action: ToolAction
    judgement: Judgement
    mode: str


class Asker(Protocol):
    async def __call__(self, question: Question) -> Answer: ...


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
        unasked: str | None = None,
    ) -> None:
        self._config = config
        self._cwd = os.path.realpath(cwd)
        self._home = os.path.expanduser("~") if not env.get("HOME") else env["HOME"]
        self._env = {**env, "HOME": self._home}
        self._store = store
        self._mode_flag = mode
        self._mode_said = "--permissions"  # what set the mode flag: the command line, /plan, an approved plan
        self.asker = asker
        self._record = record
        self._refused = refused
        self._warn = warn
        self._unasked = unasked or "no terminal to ask"  # why nobody is asked (a one-shot on a terminal says so)
        self._sources: tuple[Any, ...] | None = None  # the config files in use, when _places was made
        self._rules_key: tuple[Any, int, int] | None = None  # (the config, the store's generation, session rules)
        self._rules: list[Rule] = []
        self._indexes: dict[str, Any] = {}  # tool -> its rules, indexed (tmg.permissions.lines.RuleIndex)
        self._places: Places | None = None
        self._session: list[Rule] = []  # "yes for this session"
        self._told: set[str] = set()
        self.refusals = 0  # calls refused so far, plan mode's own refusals aside (a one-shot with any exits 1)
        self._in_force: Any = None  # the config whose PERMISSIONS hold (a widening reload waits: widening.py)
        self._held: Any = None  # a newer config that would allow more, until the user says yes
        self._held_why: list[str] = []
        self._declined: set[int] = set()  # configs the user said no to (by id while held)
        self._acted = False  # a tool that writes or runs was allowed: a reload may be the model's doing

    # -- what holds now ----------------------------------------------------------------------

    def config(self) -> Any:
        """The config whose PERMISSIONS hold: the live one, unless a reload that would let tools
        do more came after a tool ran (then the one before it, until the user says yes)."""
        from tmg.permissions.widening import widened

        live = self._config()
        if self._in_force is None or live is self._in_force:
            self._in_force = self._in_force or live
            return self._in_force
        if live is self._held:
            return self._in_force
        more = widened(self._in_force, live) if self._acted else []
        if not more:
            self._in_force, self._held = live, None
            return live
        self._held, self._held_why = live, more
        where = live.source or "your config"
        self._say_once(f"PERMISSIONS in {where} changed while tools were running and would allow more "
                       f"({'; '.join(more)}): not applied until you say yes at a prompt (or restart tmg)")
        return self._in_force

    def mode(self) -> str:
        return self._mode_flag or self.config().permissions.mode or "default"

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
        config = self.config()
        layered = config.user_permissions is not None  # the user's file and a project's
        for decision in ("deny", "ask", "allow"):
            rules = [r.text + (f" ({r.origin.partition(' in ')[2]})" if layered else "")
                     for r in config_rules(config).rules if r.decision == decision]
            if rules:
                lines.append(f"  {decision}: {', '.join(rules)}")
        if self._session:
            lines.append(f"  allowed for this session: {', '.join(r.text for r in self._session)}")
        if self._store is not None:
            lines.extend(self._store.listing())
        return lines

    def mode_source(self) -> str:
        if self._mode_flag:
            return self._mode_said
        origin = self.config().origin("PERMISSIONS.MODE")
        # The user's own file, when a project's tmg.yaml is the config (tmg.config.loader).
        return f"PERMISSIONS.MODE in {origin[5:]}" if origin.startswith("file /") else "PERMISSIONS.MODE"

    def rules(self) -> list[Rule]:
        """The config's rules, the saved decisions that hold in this folder and this session's
        (cached until one changes: a reload, a revoke, an answer)."""
        config = self.config()
        entries = self._saved()  # a stat of the file when it has not changed
        key = (config, self._store.generation if self._store is not None else 0, len(self._session))
        if self._rules_key is None or self._rules_key[0] is not key[0] or self._rules_key[1:] != key[1:]:
            found = config_rules(config)
            for problem in found.problems:
                self._say_once(f"{problem}; the rule is ignored")
            saved = saved_rules(entries, self._cwd, self._store.path if self._store else "", self._say_once)
            self._rules = found.rules + saved + self._session
            self._indexes = {}
            sources = (config.source, config.user_permissions.source if config.user_permissions else None)
            if sources != self._sources:
                self._sources = sources
                self._places = Places(self._cwd, self._home, SensitivePaths(self._env, sources),
                                      ControlFiles(self._env, self._cwd, sources))
            self._rules_key = key
        return self._rules

    def _saved(self) -> list:
        if self._store is None:
            return []
        try:
            return self._store.entries()
        except Exception as exc:  # noqa: BLE001 - a damaged file is said once; the config's rules still hold
            self._say_once(str(exc))
            return []

    def _say_once(self, text: str) -> None:
        if text not in self._told:
            self._told.add(text)
            self._warn(text)

    # -- judging -----------------------------------------------------------------------------

    def judge(self, action: ToolAction) -> Judgement:
        from tmg.permissions.judging import judge
        from tmg.permissions.lines import RuleIndex

        rules = self.rules()
        index = self._indexes.get(action.tool)
        if index is None:  # the tool's rules, indexed once per change of the rules
            index = self._indexes[action.tool] = RuleIndex([r for r in rules if r.names(action.tool)])
        assert self._places is not None
        return judge(action, index, self.mode(), self._places, self._mode_denies)

    def rule_names_url(self, tool: str, url: str) -> bool:
        """A rule naming this URL allows ``tool`` to fetch it (a bare `web_fetch` does not): what
        a fetch needs for a host that resolves to, or redirects to, a private address."""
        from tmg.permissions.judging import strongest_url_rule

        best = strongest_url_rule([r for r in self.rules() if r.names(tool)], url)
        return best is not None and best.decision == "allow" and best.spec is not None

    def _mode_denies(self, action: ToolAction) -> Judgement:
        if self.mode() == "plan":
            return Judgement("deny", "denied by plan mode (only reads until the user approves a plan)",
                             how_to_allow=f"plan mode ({self.mode_source()}) runs only what reads; propose the plan "
                                          "with exit_plan_mode, and once the user approves it the changes can be made")
        return Judgement("deny", "denied by read-only mode (nothing that writes or runs)",
                         how_to_allow=f"read-only mode ({self.mode_source()}) allows nothing that writes or runs; "
                                      "use --permissions default to be asked")

    # -- the gate ----------------------------------------------------------------------------

    async def check(self, action: ToolAction) -> Verdict:
        self.config()
        if self._held is not None and id(self._held) not in self._declined and self.asker is not None:
            await self._confirm_widening()
        judgement = self.judge(action)
        what = _what(action)
        if judgement.decision == "allow":
            self._acted = self._acted or action.effect != "read"
            self._record(f"{what} {judgement.reason}")
            return Verdict(True, judgement.reason)
        if judgement.decision == "deny":
            self.refusals += self.mode() != "plan"  # plan mode refusing a write is the mode at work, not a failure
            self._record(f"{what} {judgement.reason}")
            self._refused(f"refused {what}: {judgement.how_to_allow}")
            return Verdict(False, judgement.reason, _model_note(what, judgement.reason, judgement.how_to_allow))
        if self.asker is None:
            self.refusals += 1
            self._record(f"{what} refused ({judgement.reason}; {self._unasked})")
            self._refused(f"refused {what} ({judgement.reason}; {self._unasked}): {judgement.how_to_allow}")
            return Verdict(False, f"{judgement.reason}; {self._unasked}",
                           _model_note(what, f"{judgement.reason}, and this run cannot ask the user",
                                       judgement.how_to_allow))
        answer = await self.asker(Question(action, judgement, self.mode()))
        if answer.kind == "no":
            said = f" with a note: {answer.note}" if answer.note else ""
            self._record(f"{what} asked ({judgement.reason}) and declined{said}")
            note = f"the user declined {what}" + (f" and says: {answer.note}" if answer.note else "")
            return Verdict(False, "declined by the user", note)
        self._acted = self._acted or action.effect != "read"
        if answer.kind in ("always", "session") and judgement.proposals:
            saved = ", ".join(judgement.proposals)
            if answer.kind == "always" and self._store is not None:
                for rule in judgement.proposals:
                    self._store.add(rule, self._cwd)
                self._record(f"{what} asked ({judgement.reason}) and accepted always (saved {saved})")
                return Verdict(True, f"accepted always ({saved})")
            self._session.extend(parse_rule(r, "allow", "this session") for r in judgement.proposals)
            self._record(f"{what} asked ({judgement.reason}) and accepted for this session ({saved})")
            return Verdict(True, f"accepted for this session ({saved})")
        self._record(f"{what} asked ({judgement.reason}) and accepted once")
        return Verdict(True, "accepted once")

    async def _confirm_widening(self) -> None:
        """Ask the user whether the held config's wider PERMISSIONS may apply."""
        assert self.asker is not None and self._held is not None
        held, where = self._held, str(self._held.source or "your config")
        action = ToolAction(where, "widen", paths=(where,), preview="\n".join(self._held_why))
        question = Question(action, Judgement("ask", "it changed while tools were running; yes applies it now"),
                            self.mode())
        answer = await self.asker(question)
        if answer.kind == "no":
            self._declined.add(id(held))
            self._record(f"PERMISSIONS in {where} would allow more ({'; '.join(self._held_why)}); kept the old ones")
            return
        self._in_force, self._held = held, None
        self._record(f"PERMISSIONS in {where} now allow more ({'; '.join(self._held_why)}): the user said yes")


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

