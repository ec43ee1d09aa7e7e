"""Secrets never reach memory: the scrubber masks configured values and common secret shapes,
keeping the words around them (memory.md §4)."""

from __future__ import annotations

import pytest

from tmg.redaction import Redactor
from tmg.memory.scrub import MASK, find_secrets, make_scrubber, mask_secrets

SHAPES = [
    ("openai", "my key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z, keep it", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
    ("anthropic", "ANTHROPIC key sk-ant-api03-abcdefghijklmnopqrstuv_wxyz0123", "sk-ant-api03-abcdefghijklmnopqrstuv_wxyz0123"),
    ("password line", "DB_HOST=db\nDB_PASSWORD=hunter2\nDB_USER=app", "hunter2"),
    ("token line", "export GITHUB_TOKEN='abc123def456'", "abc123def456"),
    ("yaml api key", "API_KEY: 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    ("github pat", "use ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 here", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("aws access key", "AWS key AKIAIOSFODNN7EXAMPLE in the config", "AKIAIOSFODNN7EXAMPLE"),
    ("aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    ("url credentials", "connect to postgres://app:s3cr3tpass@db.internal:5432/app", "s3cr3tpass"),
    ("bearer", "curl -H 'Authorization: Bearer abcdefghijklmnop1234567890'", "abcdefghijklmnop1234567890"),
    ("private key", "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nthanks",
     "b3BlbnNzaC1rZXktdjEAAAAA"),
]


@pytest.mark.parametrize("name,text,secret", SHAPES, ids=[s[0] for s in SHAPES])
def test_each_common_shape_is_found_and_masked(name, text, secret) -> None:
    assert find_secrets(text)
    masked = mask_secrets(text)
    assert secret not in masked and MASK in masked


def test_the_words_around_a_secret_are_kept() -> None:
    assert mask_secrets("DB_PASSWORD=hunter2 is in .env") == "DB_PASSWORD=*** is in .env"
    assert mask_secrets("postgres://app:pw1234@db/app") == "postgres://app:***@db/app"
    assert mask_secrets("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nafter") == "***\nafter"


@pytest.mark.parametrize("text", [
    "Never indent YAML with tabs.",
    "The password policy requires 12 characters.",
    "Set the token budget to 2000 in the config.",
    "Use https://example.com/docs for the API reference.",
    "From now on, always answer in French.",
    "task-runner and desk-lamp are fine words",
])
def test_ordinary_notes_are_left_alone(text) -> None:
    assert find_secrets(text) == [] and mask_secrets(text) == text


def test_the_scrubber_masks_configured_values_first() -> None:
    redactor = Redactor(["plain-config-value-42"])
    scrub = make_scrubber(redactor)
    assert scrub("the key plain-config-value-42 and TOKEN=zzz999") == "the key *** and TOKEN=***"


def test_a_detected_value_is_masked_when_it_shows_up_bare_later() -> None:
    scrub = make_scrubber()
    assert scrub("DB_PASSWORD=hunter2-canary") == "DB_PASSWORD=***"
    assert scrub("Got it: hunter2-canary is set") == "Got it: *** is set"
    assert make_scrubber()("Got it: hunter2-canary is set") == "Got it: hunter2-canary is set"


def test_a_password_or_passphrase_said_in_prose_is_remembered_whatever_its_letters() -> None:
    scrub = make_scrubber()
    assert scrub("my passphrase is correct horse battery staple") == "my passphrase is ***"
    assert scrub("the wifi password is swordfish") == "the wifi password is ***"
    assert scrub("Saved: correct horse battery staple. I will not say swordfish again.") == \
        "Saved: ***. I will not say *** again."


def test_only_secret_looking_values_are_remembered_beyond_their_line() -> None:
    """Placeholders and predicates after `api_key:` or `auth:` are not masked at all, a path is
    not remembered, and a password with digits is masked wherever it returns."""
    scrub = make_scrubber()
    assert scrub("the api_key: string field; auth: required; PWD=/home/me/project; DB_PASSWORD=hunter22x") == \
        "the api_key: string field; auth: required; PWD=/home/me/project; DB_PASSWORD=***"
    later = scrub("The field is a string and is required; code lives in /home/me/project; pw hunter22x")
    assert later == "The field is a string and is required; code lives in /home/me/project; pw ***"


PROSE = [
    ("the staging password is Tr0ub4dor&3", "the staging password is ***"),
    ("pw: hunter2", "pw: ***"),
    ("my passphrase is correct horse battery staple", "my passphrase is ***"),
    ("The password for the staging db is Winter2024!", "The password for the staging db is ***"),
    ("the admin password was changed to Lemon#Tree7", "the admin password was changed to ***"),
    ("the PIN is 4821", "the PIN is ***"),
    ("our office door code is Brass-Otter-5150, note it down", "our office door code is ***, note it down"),
    ("the gate code: 7740#", "the gate code: ***"),
    ("the bike lock combination is 3-9-1-4", "the bike lock combination is ***"),
    ("password: \"two words here\"", "password: \"***\""),
    ("le mot de passe est Soleil2024", "le mot de passe est ***"),
    ("das Passwort ist Sommer2023!", "das Passwort ist ***"),
    ("la contraseña es Perro#2021", "la contraseña es ***"),
    ("git clone https://alice:ghtok9876abcd@github.com/acme/repo.git", "git clone https://alice:***@github.com/acme/repo.git"),
    ("postgres://u:p@ss@host/db", "postgres://u:***@host/db"),
    ("Driver={ODBC};Uid=sa;Pwd=Odbc!Pass9;", "Driver={ODBC};Uid=sa;Pwd=***;"),
    ("mysql -u root -pHunter2Go prod", "mysql -u root -p*** prod"),
    ("{\"clientSecret\": \"Gr33n-Apple\"}", "{\"clientSecret\": \"***\"}"),
]


@pytest.mark.parametrize("text,masked", PROSE, ids=[p[0][:30] for p in PROSE])
def test_secrets_said_in_prose_urls_and_pairs_are_masked_and_their_words_kept(text, masked) -> None:
    assert mask_secrets(text) == masked


@pytest.mark.parametrize("text", [
    "the password field is required",
    "reset your password",
    "token bucket",
    "the token is expired, log in again",
    "the password is in .env",
    "First pass: parse the file.",
    "password: ${DB_PASSWORD}",
    "token = get_token()",
    "max_tokens: 2000",
    "postgres://db.internal:5432/app",
    "connect GPIO pin 13 to the LED",
    "das Passwort ist falsch",
    "the alarm code is on the whiteboard",
    "the error code is 404",
    "the zip code is 90210",
])
def test_prose_about_secrets_is_not_a_secret(text) -> None:
    assert find_secrets(text) == [] and mask_secrets(text) == text


def _every_pattern_masked(text: str) -> str:
    """mask_secrets without its prefilter: every shape searched on every text."""
    import re

    from tmg.memory import scrub

    for shape in scrub._PATTERNS:
        text = scrub.mask_shape(shape, re.compile(shape.rx, shape.flags), text)
    return text


def _corpus() -> list[dict]:
    from bench.scrub_quality import load

    return load()


@pytest.mark.parametrize("text", [s[1] for s in SHAPES] + [s[1].upper() for s in SHAPES] + [
    "TO\u212aEN=abc123def456 (a Kelvin sign: IGNORECASE matches it as a k)",
    "PA\u017fSWORD=hunter22 (a long s)",
    "Straße token: Abc123Def456 and sk_live_abcdefghijklmnopqrstu",
    "plain words, nothing to see",
    "Auth = required",
    "the passphrase: correct-horse-battery",
    "DAS PAſSWORT IST Sommer2023!",
])
def test_only_patterns_that_cannot_match_are_skipped(text) -> None:
    """A pattern is searched only when the text holds one of its words: skipping never changes
    what is masked (a word list that missed a spelling the pattern matches would leak)."""
    assert mask_secrets(text) == _every_pattern_masked(text)


def test_skipping_changes_nothing_on_the_whole_corpus() -> None:
    texts = [item["text"] for item in _corpus()]
    differ = [t for t in texts + [t.upper() for t in texts] if mask_secrets(t) != _every_pattern_masked(t)]
    assert differ == []


def test_the_corpus_scores_every_tuning_line_right_and_the_held_out_part_above_its_floor() -> None:
    """bench/scrub_quality.py's figures as a guard: the lines the rules were shaped on all come
    out right; the held-out part (docs/memory-quality.md: 0.98 precision, 0.89 recall) does not slip."""
    from bench.scrub_quality import score

    scores = score(_corpus())
    assert scores["tune"].misses == []
    assert scores["heldout"].precision >= 0.95 and scores["heldout"].recall >= 0.85
