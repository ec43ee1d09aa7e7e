"""Secrets never reach memory (memory.md §4): every statement, summary, spool and pending record
passes here before it is written anywhere.

Two passes:
1. the config redactor (`tmg.redaction.Redactor`): the exact values of configured keys;
2. a detector for common secret shapes, masking the secret and keeping the words around it (so
   "the DB password is in .env: DB_PASSWORD=***" is still a note someone can act on).
A value found by the detector is also remembered for the process, so the same password echoed
bare later ("your password hunter2 is set") is masked too: the user's text is scrubbed before
the answer to it.

Why patterns and not a library: the well-kept detectors (detect-secrets, truffleHog's rules)
import dozens of plugins and entropy scanners, far more than a write path that runs after every
turn needs, and they flag high-entropy words a note may legitimately hold. These shapes cover what
the real PLUR refuses (its `SECRET_PATTERNS`, so a write is never lost to its per-item rejection)
plus the shapes a pasted `.env` or config holds. A pattern is compiled the first time a text holds
one of its words (most answers need none of them).
"""

from __future__ import annotations

import re
from collections.abc import Callable

MASK = "***"

# Each pattern's group "secret" is what is masked; the rest (a key name, a URL's host) stays.
# Each comes with words one of which any match contains (casefolded): a text holding none of them
# is never searched, and a pattern is compiled only when a text first needs it (compiling all of
# them costs a one-shot about 4 ms, and most answers hold no secret shape at all).
_PATTERNS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # Private key blocks, whole (the END line may be missing in a cut text).
    ("private_key", ("-----begin",),
     r"(?P<secret>-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
     r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*\Z))"),
    # Provider keys: OpenAI / Anthropic / Stripe style sk-/pk-/rk- (PLUR's generic_api_key),
    # GitHub, GitLab, Slack, Google.
    ("provider_key", ("sk-", "sk_", "pk-", "pk_", "rk-", "rk_"),
     r"(?<![A-Za-z0-9])(?P<secret>(?:sk|pk|rk)[-_][A-Za-z0-9][A-Za-z0-9_-]{15,})"),
    ("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"(?P<secret>\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}))"),
    ("gitlab_token", ("glpat-",), r"(?P<secret>\bglpat-[A-Za-z0-9_-]{20,})"),
    ("slack_token", ("xox",), r"(?P<secret>\bxox[abposr]-[A-Za-z0-9-]{10,})"),
    ("google_api_key", ("aiza",), r"(?P<secret>\bAIza[0-9A-Za-z_-]{35})"),
    ("aws_access_key", ("akia", "asia"), r"(?P<secret>\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)"),
    ("jwt", ("eyj",), r"(?P<secret>\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?)"),
    ("bearer_token", ("bearer",), r"\bBearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    # URLs with credentials: scheme://user:password@host (the password goes; user and host stay).
    ("url_credentials", ("://",), r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@"),
    # Assignments: PASSWORD=..., DB_PASSWORD: ..., API_KEY=..., TOKEN=..., SECRET=...,
    # aws_secret_access_key = ... (an .env line, a YAML key, a shell export).
    ("assignment", ("passw", "_pwd", "passphrase", "secret", "token", "api", "access", "private", "credential", "auth"),
     r"(?i)\b(?:[A-Z0-9_]*?(?:PASSWORD|PASSWD|_PWD|PASSPHRASE|SECRET|TOKEN|API[_-]?KEY|"
     r"ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CREDENTIALS?|AUTH))[\"']?\s*[=:]\s*[\"']?(?P<secret>[^\s\"',;]{4,})"),
)
_compiled: dict[str, re.Pattern[str]] = {}
# A detected value is remembered and masked wherever it shows up again only when it looks like a
# secret: long enough, letters and digits mixed, not a path. `api_key: string` or `auth: required`
# must not turn "string" and "required" into *** in every later memory.
_REMEMBERED_MIN = 6


def _worth_remembering(value: str) -> bool:
    return (len(value) >= _REMEMBERED_MIN and not value.startswith(("/", "~", "."))
            and any(c.isdigit() for c in value) and any(c.isalpha() for c in value))


def _patterns(text: str) -> list[tuple[str, re.Pattern[str]]]:
    """The patterns that could match `text` (compiled on first need)."""
    folded = text.casefold()  # what IGNORECASE matches, too (the Kelvin sign is a k)
    found = []
    for name, words, rx in _PATTERNS:
        if any(word in folded for word in words):
            compiled = _compiled.get(name)
            if compiled is None:
                compiled = _compiled[name] = re.compile(rx, re.DOTALL if name == "private_key" else 0)
            found.append((name, compiled))
    return found


def find_secrets(text: str) -> list[str]:
    """The names of the secret shapes found in `text` (empty when it looks clean)."""
    return [name for name, rx in _patterns(text) if rx.search(text)]


def mask_secrets(text: str, seen: set[str] | None = None) -> str:
    """`text` with every detected secret replaced by `***` (the words around it kept); each
    secret found is added to `seen` when given."""
    for _name, rx in _patterns(text):
        if seen is not None:
            seen.update(m.group("secret") for m in rx.finditer(text) if _worth_remembering(m.group("secret")))
        text = rx.sub(_masked, text)
    return text


def _masked(match: re.Match[str]) -> str:
    whole, start, end = match.group(0), match.start("secret") - match.start(), match.end("secret") - match.start()
    return whole[:start] + MASK + whole[end:]


def make_scrubber(redact: Callable[[str], str] = lambda s: s) -> Callable[[str], str]:
    """The one function memory's writers call: the config redactor, the values detected so far,
    then the shape detector (which adds what it finds to those values)."""
    seen: set[str] = set()

    def scrub(text: str) -> str:
        text = mask_secrets(redact(text), seen)
        for value in sorted(seen, key=len, reverse=True):
            if value in text:
                text = text.replace(value, MASK)
        return text

    return scrub
