"""Password hashes in the modular crypt format (issue 27 D6, red team 45): an ``/etc/shadow`` or
``.htpasswd`` line, a user table's dump, a config's ``password_hash`` — ``$6$salt$digest``,
``$2b$12$…``, ``$argon2id$v=19$m=…$salt$digest``, Django's ``pbkdf2_sha256$…`` — is cracked
offline, so its salt and digest go wherever it stands, whole (a piece of one left is a piece
to crack); the scheme and the line around it stay."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_redaction_variants import PREFIXES, SUFFIXES
from veridiag.redaction import redact

_CRYPT = string.ascii_letters + string.digits + "./"
_B64 = string.ascii_letters + string.digits + "+/"


def _chars(alphabet: str, size: int) -> st.SearchStrategy[str]:
    # a digest holds a digit and both cases (a random one nearly always does)
    return st.text(alphabet, min_size=size, max_size=size).filter(
        lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s)
    )


@st.composite
def crypt_hashes(draw: st.DrawFn) -> tuple[str, str]:
    """A hash as its scheme writes it, and the part that is secret (salt and digest)."""
    schemes = ["md5", "apr1", "sha256", "sha512", "bcrypt", "yescrypt", "argon2", "pbkdf2", "django"]
    scheme = draw(st.sampled_from(schemes))
    salt = draw(_chars(_CRYPT, 16))
    if scheme in ("md5", "apr1"):
        prefix, secret = ("$1$" if scheme == "md5" else "$apr1$"), f"{salt[:8]}${draw(_chars(_CRYPT, 22))}"
    elif scheme in ("sha256", "sha512"):
        rounds = draw(st.sampled_from(["", "rounds=5000$", "rounds=656000$"]))
        size = 43 if scheme == "sha256" else 86
        prefix = ("$5$" if scheme == "sha256" else "$6$") + rounds
        secret = f"{salt}${draw(_chars(_CRYPT, size))}"
    elif scheme == "bcrypt":
        prefix = draw(st.sampled_from(["$2a$", "$2b$", "$2y$"])) + draw(st.sampled_from(["10$", "12$", "14$"]))
        secret = draw(_chars(_CRYPT, 53))
    elif scheme == "yescrypt":
        prefix, secret = "$y$j9T$", f"{salt[:22]}${draw(_chars(_CRYPT, 43))}"
    elif scheme == "argon2":
        prefix = draw(st.sampled_from(["$argon2id$", "$argon2i$", "$argon2d$"])) + "v=19$m=65536,t=3,p=4$"
        secret = f"{draw(_chars(_B64, 22))}${draw(_chars(_B64, 43))}"
    elif scheme == "pbkdf2":
        prefix = draw(st.sampled_from(["$pbkdf2-sha256$29000$", "$pbkdf2-sha512$25000$", "$pbkdf2$131000$"]))
        secret = f"{salt[:22]}${draw(_chars(_CRYPT, 43))}"
    else:
        prefix = draw(st.sampled_from(["pbkdf2_sha256$600000$", "pbkdf2_sha1$260000$"]))
        secret = f"{salt[:22]}${draw(_chars(_B64, 43))}="
    return prefix + secret, secret


_PLACES = st.sampled_from(
    [
        "{h}",
        "root:{h}:19000:0:99999:7:::",
        "admin:{h}",
        "password_hash={h}",
        '{{"user": "pay", "hash": "{h}"}}',
        "INSERT INTO users VALUES (3, 'pay', '{h}');",
        "migrated user pay to {h} (rehash on login)",
    ]
)


@settings(max_examples=300, deadline=None)
@given(crypt_hashes(), _PLACES, PREFIXES, SUFFIXES)
def test_a_crypt_hash_loses_its_salt_and_digest_wherever_it_stands(
    written: tuple[str, str], place: str, prefix: str, suffix: str
) -> None:
    hashed, secret = written
    line = prefix + place.format(h=hashed) + suffix
    redacted = redact(line)
    pieces = [piece for piece in secret.split("$") if len(piece) >= 8]
    left = [piece[i : i + 8] for piece in pieces for i in range(len(piece) - 7) if piece[i : i + 8] in redacted]
    assert not left, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


def test_dollar_signs_that_are_no_hash_are_kept() -> None:
    for line in (
        "charged $1$ fee",
        "export PATH=$HOME/bin:$PATH",
        "price $6$ per unit, $12.50 total",
        "echo $2 $5 $6",
        "awk '{print $1$2}' access.log",
        "regex ^\\$[0-9]+\\$ matched 3 lines",
    ):
        assert redact(line) == line, line
