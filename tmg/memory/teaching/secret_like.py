"""Whether a statement looks like it holds a secret: such a statement is never learned, masked or
not (it would be pinned and sent with every later prompt). Stricter than the memory scrubber
(tmg.memory.scrub), which masks what it finds and keeps the words around it: a password said in
prose ("the staging pw is Wint3r-88"), a key-shaped token, or credentials in a URL are enough."""

from __future__ import annotations

import re

# The words for a password or a credential both checks know, in the corpora's languages.
_CREDENTIAL = (r"password|passwort|wachtwoord|senha|hasło|haslo|şifre|sifre|lösenord|losenord|adgangskode|passord"
               r"|salasana|heslo|parola|contrase[ñn]a|clave|secret|token|credentials?")
_SECRET_WORD = (rf"(?:{_CREDENTIAL}|passwd|kennwort|pass ?phrase|pw|pwd|pin|api[ _-]?key|apikey|mot de passe|şifresi"
                r"|jelszó|пароль)")
_SECRET_VALUE = re.compile(rf"\b{_SECRET_WORD}\b(?:[^.,;:=\n]{{0,30}}?(?:\b(?:is|was|est|ist|es|är|er|é|è|jest|je|zijn"
                           r"|era|sono|to|wynosi)\b|=|:))?\s*"
                           r"[\"'`]?(?P<value>[^\s\"'`]{4,})", re.IGNORECASE)
# A word for a credential anywhere in the statement, and a token shaped like one (letters and
# digits, 8 or more): "always use this key when you write curl examples: CorpusKey0123456789".
_CREDENTIAL_WORD = re.compile(rf"\b(?:{_CREDENTIAL}|key|keys|tokens|clé|cle|schlüssel|chave|sleutel|nyckel|klucz"
                              r"|anahtar|auth)\b", re.IGNORECASE)
_TOKEN_SHAPED = re.compile(r"(?<![\w/.-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{8,}")
_KEY_SHAPED = re.compile(r"(?<![\w/.-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{24,}|://[^\s/:@]+:[^\s/@]+@")


def looks_secret(text: str) -> bool:
    """A password, token or key in `text`, written in prose ("the staging pw is Wint3r-88") or
    key-shaped: such a statement is never pinned, masked or not."""
    for match in _SECRET_VALUE.finditer(text):
        value = match.group("value").rstrip(".,;:!?)")
        if len(value) >= 4 and (any(c.isdigit() for c in value) or any(not c.isalnum() for c in value)
                                or value != value.lower()):
            return True
    if _CREDENTIAL_WORD.search(text) and _TOKEN_SHAPED.search(text):
        return True
    return _KEY_SHAPED.search(text) is not None
