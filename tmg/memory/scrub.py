"""Secrets never reach memory (memory.md §4): every statement, summary, spool and pending record
passes here before it is written anywhere.

Two passes:
1. the config redactor (`tmg.redaction.Redactor`): the exact values of configured keys;
2. a detector for secret shapes, masking the secret and keeping the words around it (so
   "the DB password is in .env: DB_PASSWORD=***" is still a note someone can act on):
   - key shapes (provider keys, GitHub/GitLab/Slack/Google/AWS tokens, JWTs, private key blocks);
   - credentials in URLs (`postgres://u:***@host`, `https://***@github.com`) and on command lines
     (`mysql -p...`, `sshpass -p ...`, `curl -u user:...`, `Authorization: Basic ...`);
   - secret-like `key=value` / `key: value` pairs of any name and style (`DB_PASSWORD=`,
     `api_secret:`, `"clientSecret": "..."`, `Pwd=` in a connection string);
   - secrets said in prose: a password, passphrase, PIN, secret, token or key that "is", "=" or
     ":" something ("the staging password is ***", "pw: ***", "my passphrase is ***"), also in
     French, German, Spanish, Portuguese, Italian and Dutch ("le mot de passe est ***"), and a
     code that opens something ("our office door code is ***", "the gate code: ***").
   A value is masked only when it looks like one: "the password field is required", "the token
   is expired", `password: ${DB_PASSWORD}`, `auth: required` or `token = get_token()` stay as
   they are (a stop list of predicates, placeholders and code). The corpus behind these rules and
   their precision and recall: `bench/data/scrub_corpus.json`, `bench/scrub_quality.py`,
   docs/memory-quality.md.
A value found is also remembered for the process, so the same password echoed bare later ("your
password hunter2 is set", "Got it: correct horse battery staple") is masked too: the user's text
is scrubbed before the answer to it.

Why patterns and not a library: the well-kept detectors (detect-secrets, truffleHog's rules)
import dozens of plugins and entropy scanners, far more than a write path that runs after every
turn needs, and they flag high-entropy words a note may legitimately hold; none reads prose.
A pattern is searched only when a text holds one of its words, and compiled the first time one
does (most answers need none of them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

MASK = "***"

_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
# A bare value: up to whitespace, a quote, ',' or ';', without the punctuation that ends a sentence.
_BARE = r"[^\s\"'`,;\u201c\u201d\u2018\u2019]+?(?=[.,;:)\]}>]*(?:[\s\"'`,;]|\Z))"
# A value in quotes, or bare. Used as `{value}` in the patterns below (`q` names the quote).
_VALUE = (rf"(?P<q>[{_QUOTES}])?(?P<secret>(?(q)[^{_QUOTES}\n]+|{_BARE}))(?(q)[{_QUOTES}])")
# "the password FOR THE STAGING DB is": up to three words after a preposition, in any language covered.
_PREPS = r"(?:for|of|to|on|at|in|from|du|de|des|pour|für|fur|vom|von|del|para|do|da|per|della|van|voor)"
_QUALIFIER = rf"(?:\s+{_PREPS}(?:\s+[\w.@/-]+){{1,3}}?)?(?:\s+(?:now|here|currently|still|again))?"
# Longest first: "was changed to X" must not stop at "was" (its value "changed" would be refused).
_COPULA = (r"\s*(?:(?:(?:(?:is|was|has\s+been|got)\s+)?(?:changed|set|reset|updated)\s+to|(?:is|was)\s+(?:now|still)"
           r"|will\s+be|should\s+be|would\s+be|is|was|are|becomes|equals|est|c['\u2019]est|ist|lautet|hei(?:ß|ss)t"
           r"|es|é|è|eh)\b\s*[:=]?|:=|=(?!=)|:(?!//))\s*")
_PASSWORD_WORDS = r"passw(?:or)?d|passcode|passwort|kennwort|mot\s+de\s+passe|contrase(?:ñ|n)a|senha|wachtwoord"
_PASS_WORDS = r"pass|pw|pwd"  # short, and words of their own ("first pass: parse"): a made-up value only
_TOKEN_WORDS = (r"(?:(?:api|access|auth|bearer|refresh|session|personal\s+access|client|vault|signing|webhook)"
                r"[\s_-]?)?(?:token|secret)|(?:api|access|secret|private|signing|license|licence)[\s_-]?key|apikey")

# Words a value may be without being a secret: predicates ("required", "wrong"), determiners,
# prepositions, types and literals of code and config. Casefolded.
_STOP = frozenset("""
a an the this that it its my your our their his her same different another new old other
not no none null nil undefined true false yes on off ok okay fine good bad
required optional mandatory needed necessary empty blank missing wrong correct incorrect invalid valid
expired set unset stored saved hashed encrypted encoded kept held changed reset rotated revoked
stolen forgotten broken leaked written taken chosen frozen
too very still now also just only weak strong long short simple secure safe unsafe insecure
secret hidden visible sensitive case-sensitive unknown known ready available unavailable enabled disabled
supported unsupported in at of for from to into with by via as is are was be been here there below above
following attached shown given provided sent inside outside out what which whatever something nothing
string str int integer number bool boolean bytes any object list dict array type text value char
password passwords pass pw secret token key passphrase xxx xxxx changeme
obligatoire requis incorrect faux invalide vide trop court erforderlich falsch ungültig abgelaufen leer zu kurz
richtig obligatoria obligatorio incorrecta incorrecto requerida inválida vacía demasiado obrigatória
obrigatório incorreta inválida vazia expirada obbligatoria errata sbagliata scaduta verplicht onjuist fout
verlopen leeg
""".split())
# How a sentence about a passphrase goes on when it does not say the phrase ("is not set", "is in the vault").
_NOT_A_PHRASE = frozenset("""
not no never too very still also now just only in at on of for from to into with by via as is are was be been
here there below above required optional missing empty wrong incorrect invalid unknown kept held
""".split())
_PREDICATE_ENDINGS = ("ed", "ing", "ly", "able", "ible", "ive", "ous", "ful", "less")
_MIN_SECRET = 3
_REMEMBERED_MIN = 6


def _words_only(value: str) -> bool:
    return all(part.isalpha() for part in value.split("-"))


def _plausible(value: str) -> bool:
    """Could be a secret: not a stop word, a predicate ("expired"), a placeholder (`${X}`,
    `<your-key>`, `****`), a path, or code (`get_token()`, `os.environ[...]`)."""
    folded = value.casefold()
    if len(value) < _MIN_SECRET or folded in _STOP:
        return False
    if value[0] in "$%{<[/~" or set(value) <= set("*xX.\u2022\u2026#-_") or any(c in value for c in "()[]"):
        return False
    return not (_words_only(value) and folded.endswith(_PREDICATE_ENDINGS))


def _shaped(value: str) -> bool:
    """Looks made up rather than said: plausible, six characters or more, with a digit, a symbol
    or a capital inside (`hunter2`, `Tr0ub4dor&3`, `kx9!mQ2z`; not `reset` or `prompt`)."""
    return (_plausible(value) and len(value) >= 6
            and any(c.isdigit() or not c.isalnum() or c.isupper() for c in value[1:]))


def _phrase(value: str) -> bool:
    """A passphrase: several words, unless the first says it is about the phrase, not the phrase
    ("not set", "stored in the keychain", "in the vault")."""
    words = value.split()
    if len(words) == 1:
        return _plausible(value)
    first = words[0].casefold()
    return not (first in _NOT_A_PHRASE or first.endswith(_PREDICATE_ENDINGS))


def _pin(value: str) -> bool:
    return value.isdigit() and 4 <= len(value) <= 12


# What an access code opens: a door code, not an error, country or zip code.
_ACCESS_THINGS = (r"door|front\s+door|office|building|gate|garage|alarm|access|entry|entrance|lock|lockbox|safe|keypad"
                  r"|security|locker|unlock|key\s?safe|wifi|wi-fi|wlan|vault|bike\s+lock|padlock")


def _access_code(value: str) -> bool:
    """An access code's value: digits ("4471"), or made up (`Kx-2291`), not "on the whiteboard"."""
    return _pin(value.rstrip("#*")) or _shaped(value)


def _basic(value: str) -> bool:
    """A base64 `user:password`: padded to a multiple of 4, and not a plain word ("Basic Configuration")."""
    return len(value) % 4 == 0 and any(c.isdigit() or c in "+/=" or c.isupper() for c in value[1:])


def _mixed(value: str) -> bool:
    """Worth masking wherever it shows up again: letters and digits mixed (not `string`, a path)."""
    return (len(value) >= _REMEMBERED_MIN and value[0] not in "/~."
            and any(c.isdigit() for c in value) and any(c.isalpha() for c in value))


def _said(value: str) -> bool:
    """A value the user called a password or passphrase: remembered whatever its letters."""
    return len(value) >= _REMEMBERED_MIN


class _Shape(NamedTuple):
    name: str
    words: tuple[str, ...]  # a match contains one of them (casefolded): else the text is not searched
    rx: str
    flags: int = 0
    value: Callable[[str], bool] | None = None  # the value must pass this to be masked
    remember: Callable[[str], bool] = _mixed


_I = re.IGNORECASE
_PATTERNS: tuple[_Shape, ...] = (
    # Private key blocks, whole (the END line may be missing in a cut text).
    _Shape("private_key", ("-----begin",),
           r"(?P<secret>-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
           r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*\Z))", re.DOTALL),
    # Provider keys: OpenAI / Anthropic / Stripe style sk-/pk-/rk- (PLUR's generic_api_key),
    # GitHub, GitLab, Slack, Google, AWS, JWTs, bearer and basic credentials.
    _Shape("provider_key", ("sk-", "sk_", "pk-", "pk_", "rk-", "rk_"),
           r"(?<![A-Za-z0-9])(?P<secret>(?:sk|pk|rk)[-_][A-Za-z0-9][A-Za-z0-9_-]{15,})"),
    _Shape("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
           r"(?P<secret>\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}))"),
    _Shape("gitlab_token", ("glpat-",), r"(?P<secret>\bglpat-[A-Za-z0-9_-]{20,})"),
    _Shape("slack_token", ("xox",), r"(?P<secret>\bxox[abposr]-[A-Za-z0-9-]{10,})"),
    _Shape("google_api_key", ("aiza",), r"(?P<secret>\bAIza[0-9A-Za-z_-]{35})"),
    _Shape("aws_access_key", ("akia", "asia"), r"(?P<secret>\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)"),
    _Shape("jwt", ("eyj",), r"(?P<secret>\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?)"),
    _Shape("bearer_token", ("bearer",), r"\bBearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    _Shape("basic_auth", ("basic",), r"\bBasic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
           value=_basic),
    # URLs with credentials: scheme://user:password@host (the password goes; user and host stay;
    # the password may hold an '@'), and a token as the whole user part (`https://TOKEN@host`).
    _Shape("url_credentials", ("://",), r"\b[a-z][a-z0-9+.-]*://[^\s:/@]*:(?P<secret>[^\s/]+)@(?=[^\s/@])",
           value=_plausible),
    _Shape("url_token", ("://",), r"\b[a-z][a-z0-9+.-]*://(?P<secret>[A-Za-z0-9_-]{20,})@"),
    # Command lines: `mysql -pSECRET`, `sshpass -p SECRET`, `curl -u user:SECRET`.
    _Shape("mysql_password", ("mysql",), r"\bmysql(?:dump|admin)?\b[^\n]*?\s-p(?P<secret>[^\s'\"]+)"),
    _Shape("sshpass", ("sshpass",), rf"\bsshpass\s+-p\s*{_VALUE}"),
    _Shape("curl_user", ("curl",), r"\bcurl\b[^\n]*?\s(?:-u|--user)\s*['\"]?[^\s:'\"]+:(?P<secret>[^\s'\"]+)"),
    # Assignments of any secret-like name: PASSWORD=..., DB_PASSWORD: ..., "apiKey": "...",
    # aws_secret_access_key = ..., client-secret: ..., Pwd= in a connection string.
    _Shape("assignment",
           ("pass", "pwd", "secret", "token", "api", "access", "private", "signing", "encryption", "credential",
            "auth"),
           r"(?<![A-Za-z0-9])[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|_pass|pwd|secret|token|api[_-]?key"
           r"|access[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key|credentials?|auth)"
           rf"[\"']?\s*(?::=|=(?!=)|:(?!//))\s*{_VALUE}", _I, _plausible),  # not `PWD=/home/me`
    # A Kubernetes-style pair: `- name: DB_PASSWORD` then `value: "..."`.
    _Shape("name_value", ("value",),
           r"name:\s*[\"']?[\w.-]*?(?:password|passwd|secret|token|api[_-]?key|credentials?)[\"']?\s*\n\s*value:\s*"
           rf"{_VALUE}", _I, _plausible),
    # Prose: "the staging password is ...", "pw: ...", "le mot de passe est ...".
    _Shape("prose_password", ("passw", "passe", "passcode", "kennwort", "contrase", "senha", "wachtwoord"),
           rf"(?<![\w-])(?:{_PASSWORD_WORDS}){_QUALIFIER}{_COPULA}{_VALUE}", _I, _plausible, _said),
    _Shape("prose_pass", ("pass", "pw"), rf"(?<![\w-])(?:{_PASS_WORDS}){_QUALIFIER}{_COPULA}{_VALUE}", _I,
           _shaped, _said),
    _Shape("prose_passphrase", ("phrase", "mnemonic"),
           rf"(?<![\w-])(?:pass\s?phrase|(?:seed|recovery|secret)\s+phrase|mnemonic){_QUALIFIER}{_COPULA}"
           rf"(?P<q>[{_QUOTES}])?(?P<secret>(?(q)[^{_QUOTES}\n]+|[^\n.,;!?{_QUOTES}]+?))(?(q)[{_QUOTES}])"
           r"(?=\s*(?:[\n.,;!?]|\Z))", _I, _phrase, _said),
    _Shape("prose_token", ("token", "secret", "key"),
           rf"(?<![\w-])(?:{_TOKEN_WORDS}){_QUALIFIER}{_COPULA}{_VALUE}", _I, _shaped),
    _Shape("prose_pin", ("pin", "pass"),
           r"(?<![\w-])(?:PIN|(?i:pin)[\s-]?(?i:code|number)|(?i:passcode))"
           rf"(?i:{_QUALIFIER}{_COPULA})(?P<secret>\d+)(?!\d)", 0, _pin),
    # A code that opens something: "our office door code is 4471#", "the gate code: Kx-2291".
    _Shape("prose_access_code", ("code", "combination", "combo"),
           rf"(?<![\w-])(?:{_ACCESS_THINGS})[\s-]?(?:code|combination|combo)s?{_QUALIFIER}{_COPULA}{_VALUE}", _I,
           _access_code, _said),
    # No verb at all: "password hunter22x", "login bob password b0bsecret", "the password `kx9!mQ2z`".
    _Shape("bare_password", ("pass", "pw", "kennwort", "senha", "wachtwoord"),
           rf"(?<![\w-])(?:password|passwort|passwd|pw|pwd|passcode|kennwort|senha|wachtwoord)\s+{_VALUE}",
           _I, _shaped, _said),
)
_compiled: dict[str, re.Pattern[str]] = {}


def _patterns(text: str) -> list[tuple[_Shape, re.Pattern[str]]]:
    """The shapes that could match `text` (compiled on first need)."""
    folded = text.casefold()  # what IGNORECASE matches, too (the Kelvin sign is a k)
    found = []
    for shape in _PATTERNS:
        if any(word in folded for word in shape.words):
            compiled = _compiled.get(shape.name)
            if compiled is None:
                compiled = _compiled[shape.name] = re.compile(shape.rx, shape.flags)
            found.append((shape, compiled))
    return found


def _secret(shape: _Shape, match: re.Match[str]) -> str | None:
    """The secret a match found, or None when its value does not look like one."""
    value = match.group("secret")
    if not value or value == MASK or MASK in value:
        return None
    return value if shape.value is None or shape.value(value) else None


def find_secrets(text: str) -> list[str]:
    """The names of the secret shapes found in `text` (empty when it looks clean)."""
    return [shape.name for shape, rx in _patterns(text) if any(_secret(shape, m) for m in rx.finditer(text))]


def mask_shape(shape: _Shape, rx: re.Pattern[str], text: str, seen: set[str] | None = None) -> str:
    """`text` with what `shape` finds masked (each secret found is added to `seen` when given)."""

    def masked(match: re.Match[str]) -> str:
        secret = _secret(shape, match)
        if secret is None:
            return match.group(0)
        if seen is not None and shape.remember(secret):
            seen.add(secret)
        whole, base = match.group(0), match.start()
        return whole[: match.start("secret") - base] + MASK + whole[match.end("secret") - base:]

    return rx.sub(masked, text)


def mask_secrets(text: str, seen: set[str] | None = None) -> str:
    """`text` with every detected secret replaced by `***` (the words around it kept); each
    secret found is added to `seen` when given."""
    for shape, rx in _patterns(text):
        text = mask_shape(shape, rx, text, seen)
    return text


def make_scrubber(redact: Callable[[str], str] = lambda s: s) -> Callable[[str], str]:
    """The one function memory's writers call: the config redactor, the shape detector (which
    adds what it finds to the values seen so far), then every value seen so far."""
    seen: set[str] = set()

    def scrub(text: str) -> str:
        text = mask_secrets(redact(text), seen)
        for value in sorted(seen, key=len, reverse=True):
            if value in text:
                text = text.replace(value, MASK)
        return text

    return scrub
