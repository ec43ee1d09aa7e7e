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
    assert scrub("your password hunter2-canary is set") == "your password *** is set"
    assert make_scrubber()("your password hunter2-canary is set") == "your password hunter2-canary is set"


def test_only_secret_looking_values_are_remembered_beyond_their_line() -> None:
    """Words after `api_key:` or `auth:` in prose are masked where they stand, but later memories
    keep "string", "required" and paths; a password with digits is masked wherever it returns."""
    scrub = make_scrubber()
    scrub("the api_key: string field; auth: required; PWD=/home/me/project; DB_PASSWORD=hunter22x")
    later = scrub("The field is a string and is required; code lives in /home/me/project; pw hunter22x")
    assert later == "The field is a string and is required; code lives in /home/me/project; pw ***"


def _every_pattern_masked(text: str) -> str:
    """mask_secrets without its prefilter: every pattern searched on every text."""
    import re

    from tmg.memory import scrub

    for name, _words, rx in scrub._PATTERNS:
        text = re.compile(rx, re.DOTALL if name == "private_key" else 0).sub(scrub._masked, text)
    return text


@pytest.mark.parametrize("text", [s[1] for s in SHAPES] + [s[1].upper() for s in SHAPES] + [
    "TO\u212aEN=abc123def456 (a Kelvin sign: IGNORECASE matches it as a k)",
    "PA\u017fSWORD=hunter22 (a long s)",
    "Straße token: Abc123Def456 and sk_live_abcdefghijklmnopqrstu",
    "plain words, nothing to see",
    "Auth = required",
    "the passphrase: correct-horse-battery",
])
def test_only_patterns_that_cannot_match_are_skipped(text) -> None:
    """A pattern is searched only when the text holds one of its words: skipping never changes
    what is masked (a word list that missed a spelling the pattern matches would leak)."""
    assert mask_secrets(text) == _every_pattern_masked(text)
