"""Redaction: config secrets never reach history, transcript, logs or the screen.

What is masked is a secret's text inside string *values*: message text, tool arguments and
results, error texts. Never JSON syntax, keys, or fields that only say what a record is (role,
ids, type, usage): a secret that happens to equal one of them must not corrupt a record.

A secret is masked only when masking it is safe. Under :data:`MIN_MASKABLE` characters, or a word
that tmg's own records and ordinary text are full of (``assistant``, ``content``, ``null``...),
masking it would rewrite unrelated text everywhere, and such a value protects nothing anyway:
``tmg doctor`` names each configured secret that is left unmasked for this reason.

Each secret is masked in every form an error text may quote it in: raw, repr- or bytes-escaped
(``b'Bearer sk-...'``), JSON-escaped.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Iterable

MASK = "***"

# Shorter values turn up by chance in ordinary text (and a key this short is no protection).
MIN_MASKABLE = 8

# Words tmg's records, the chat format and HTTP carry everywhere: a "secret" equal to one of them
# (a HEADERS value `assistant`, an API_KEY `password` for a local server) cannot be masked
# without rewriting unrelated text. Compared case-insensitively.
COMMON_VALUES = frozenset({
    "assistant", "developer", "function", "functions", "tool_calls", "tool_call_id", "arguments",
    "reasoning", "finish_reason", "completion", "completions", "anonymous", "undefined", "localhost",
    "password", "username", "changeme", "optional", "required", "disabled", "enabled",
    "application/json", "text/event-stream", "text/plain", "keep-alive", "no-cache", "not-needed",
    "placeholder", "your-api-key",
})

# Fields of a stored record that say what it is, never what was said: kept as they are.
STRUCTURAL_KEYS = frozenset({"role", "id", "tool_call_id", "type", "name", "ts", "model", "provider", "turn",
                             "finish_reason", "memory_ids"})


def unmaskable_reason(value: str) -> str | None:
    """Why ``value`` cannot be masked safely (for ``tmg doctor``), or None when it can."""
    value = value.strip()
    if len(value) < MIN_MASKABLE:
        return f"shorter than {MIN_MASKABLE} characters"
    if value.lower() in COMMON_VALUES:
        return "a common word"
    return None


def _forms(secret: str) -> set[str]:
    """The ways a text may quote ``secret``: raw, repr/bytes-escaped, JSON-escaped."""
    forms = {
        secret,
        repr(secret)[1:-1],
        repr(secret.encode("utf-8"))[2:-1],
        secret.encode("unicode_escape").decode("ascii"),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
    }
    return {f for f in forms if f}


class Redactor:
    """Masks configured secrets in text. Its secrets can grow: a reload may bring a new key, and
    old ones stay masked. Safe to call from any thread (``add`` swaps one tuple)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._values: frozenset[str] = frozenset()
        self._forms: tuple[str, ...] = ()
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        fresh = {s.strip() for s in secrets if s and s.strip()} - self._values
        if not fresh:
            return
        self._values = self._values | fresh
        forms = {f for v in self._values if unmaskable_reason(v) is None for f in _forms(v)}
        self._forms = tuple(sorted(forms, key=len, reverse=True))  # longest first: no partial masks

    def __call__(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        return text


def make_redactor(secrets: Iterable[str]) -> Redactor:
    """A redactor for a fixed set of secrets (``tmg config``, ``tmg doctor``)."""
    return Redactor(secrets)


def redact_values(value: Any, redact: Callable[[str], str]) -> Any:
    """A copy of a JSON-like record with ``redact`` applied to its string values only; keys,
    non-strings and :data:`STRUCTURAL_KEYS` fields are left exactly as they are."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: v if k in STRUCTURAL_KEYS else redact_values(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_values(v, redact) for v in value]
    return value


# The secrets of every config this process loaded: the last line printed before exit (an error
# that escaped everything else) is masked with it too.
_PROCESS = Redactor()


def process_redactor() -> Redactor:
    return _PROCESS


# `scheme://user:password@host`: the password, whatever the key is called (DATABASE_URL, ARGS).
_URL_PASSWORD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:(?P<password>[^\s@/]+)@")
# Shapes of well-known tokens: provider keys, GitHub, GitLab, Slack, AWS, Google, JWTs.
_TOKEN_PREFIX = re.compile(r"(sk-|sk_|rk_live|pk_live|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|"
                           r"AKIA|ASIA|AIza|ya29\.|hf_|npm_|eyJ[\w-]{8,}\.)")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-+=.~][A-Za-z0-9_\-+=./~]*")  # base64 too; a path starts with / or ~


def url_passwords(text: str) -> list[str]:
    """The passwords written inside URLs in ``text`` (`postgres://u:PW@host` gives `PW`)."""
    return [m.group("password") for m in _URL_PASSWORD.finditer(text)]


def mask_url_passwords(text: str) -> str:
    """``text`` with each URL's password shown as the mask, whatever its length."""
    return _URL_PASSWORD.sub(lambda m: m.group(0)[: m.start("password") - m.start()] + MASK + "@", text)


def looks_secret(value: str) -> bool:
    """A value that is a credential by its shape, whatever its key is called: a known token
    prefix, or one long random-looking word (letters and digits, no path, no spaces)."""
    value = value.strip()
    if len(value) < 16 or not _TOKEN_CHARS.fullmatch(value) or value.startswith(("~", "./")):
        return False
    if _TOKEN_PREFIX.match(value):
        return True
    # Random, not named: digits among the letters, hardly any separators (words-and-dashes names
    # and dates have many), and characters spread evenly.
    digits = sum(c.isdigit() for c in value)
    separators = sum(c in "-_./" for c in value)
    if len(value) < 24 or not any(c.isalpha() for c in value) or digits < 3 or separators > 2:
        return False
    counts = {c: value.count(c) for c in set(value)}
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 3.5  # a word, a version or a repeated pattern stays well under


def mask(value: str) -> str:
    """A secret shown as its shape only: enough to tell which key is set, never the key."""
    if not value:
        return "(not set)"
    return MASK if len(value) < 12 else f"{value[:3]}…{MASK}"
