"""A statement's words apart by any blank a reader sees as one (issue 27 D6): an escaped blank in a
JSON log's string (``\\t``, ``\\n``, ``\\r``, ``\\u0020``, ``\\u3000``) or a Unicode space (U+00A0,
U+2002–U+200A, U+202F, U+3000) between a command's or a SQL clause's words still carries its
secret; and a secret typed without a prompt or an assignment — Redis ``auth`` in lower case
opening a statement, a one-dash option named as a secret (PuTTY's ``-pw``) — goes when shaped like
one, while prose sharing those words stays. Strategies generate the grammars (the statements'
and the clients' own), the blanks at every gap, and the text around them."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_redaction_forms import command_lines
from tests.test_redaction_statements import GRAMMARS, passwords, users
from veridiag.redaction import redact
from veridiag.redaction.keys import key_kind, vocabulary

#: Blanks as a JSON string escapes them (``ensure_ascii`` writes U+3000 as ``\u3000``), and as
#: the characters themselves.
ESCAPED_BLANKS = ["\\t", "\\n", "\\r", "\\u0020", "\\u3000", "\\t\\t", " \\n"]
UNICODE_BLANKS = ["\u00a0", *(chr(c) for c in range(0x2002, 0x200B)), "\u202f", "\u3000", "\u3000\u3000"]
_GAP = "\ue000"  # a private-use character marking where a blank goes


@st.composite
def curl_users(draw: st.DrawFn) -> tuple[str, str]:
    """``curl -u user:secret`` (``--user``, ``--proxy-user``) among other options."""
    value = draw(passwords)
    option = draw(st.sampled_from(["-u", "--user", "--proxy-user"]))
    others = draw(st.sampled_from(["", "-sS ", "-X POST "]))
    return f"curl {others}{option} {draw(users)}:{value} https://api.example.com/v1", value


STATEMENTS = st.one_of(*(strategy for strategy, _suffixes in GRAMMARS.values()), command_lines(), curl_users())


@settings(max_examples=400, deadline=None)
@given(STATEMENTS, st.data())
def test_a_statements_words_apart_by_an_escaped_blank_still_carry_its_secret(
    case: tuple[str, str], data: st.DataObject
) -> None:
    """The statement as a JSON log's escaped field, each blank between its words written as an
    escape: the grammars read the field as its reader does."""
    text, value = case
    gapped = text.replace(" ", _GAP)
    document = json.dumps({"ts": "2026-07-07T10:00:00Z", "sql": gapped}, ensure_ascii=False)
    pieces = document.split(_GAP)
    # a statement followed by its next line ("AUTH …\nOK") is told from it by the line break alone
    choices = [b for b in ESCAPED_BLANKS if "\n" not in text or not ("\\n" in b or "\\r" in b)]
    blanks = data.draw(st.lists(st.sampled_from(choices), min_size=len(pieces) - 1, max_size=len(pieces) - 1))
    written = pieces[0] + "".join(blank + piece for blank, piece in zip(blanks, pieces[1:], strict=True))
    redacted = redact(written)
    assert value not in redacted and value not in json.loads(redacted)["sql"], (written, redacted)


@settings(max_examples=400, deadline=None)
@given(STATEMENTS, st.data(), st.sampled_from(["", "2026-07-07 10:00:01 WARN ops - ran: ", "失败："]))
def test_a_statements_words_apart_by_a_unicode_space_still_carry_its_secret(
    case: tuple[str, str], data: st.DataObject, prefix: str
) -> None:
    """Each blank between the statement's words a space a Chinese keyboard or a copy from a web
    page writes (full width, no-break, en/em/thin): the line reads as ASCII blanks."""
    text, value = case
    pieces = text.split(" ")
    blanks = data.draw(st.lists(st.sampled_from(UNICODE_BLANKS), min_size=len(pieces) - 1, max_size=len(pieces) - 1))
    line = prefix + pieces[0] + "".join(blank + piece for blank, piece in zip(blanks, pieces[1:], strict=True))
    redacted = redact(line)
    assert value not in redacted and redacted.startswith(prefix), (line, redacted)


#: Names a one-dash option may carry that name a secret whole (``-pw``, ``-password``, ``-token``).
_SECRET_OPTION_NAMES = sorted(
    {
        word.lower()
        for words in vocabulary().kinds.values()
        for word in words
        if word.isascii() and word.isalpha() and len(word) > 1 and key_kind(word) is not None
    }
)


#: A user an ``auth`` names: not a word the vocabulary reads as how it went ("AUTH OK" is a
#: reply, whatever follows it; "auth ok Zq722222" had been drawn).
_named_users = users.filter(lambda user: user not in {word.lower() for word in vocabulary().outcomes})


@st.composite
def typed_secrets(draw: st.DrawFn) -> tuple[str, str]:
    """A secret typed without a prompt or an assignment: Redis ``auth [user] secret`` in lower
    case opening a statement (a ``.rediscli_history`` line, a JSON field, after ``;``), or a
    one-dash option named as a secret among other options."""
    value = draw(passwords)
    if draw(st.booleans()):
        verb = draw(st.sampled_from(["auth", "Auth"]))
        arguments = draw(st.sampled_from([value, f"{draw(_named_users)} {value}", f"'{value}'"]))
        lead = draw(st.sampled_from(["", "  ", '{"cmd": "', "set -e; ", "history: '", "(", "ping && "]))
        return f"{lead}{verb} {arguments}", value
    name = draw(st.sampled_from(_SECRET_OPTION_NAMES))
    option = draw(st.sampled_from([f"-{name} {value}", f"-{name}={value}", f"-{name} '{value}'", f'-{name} "{value}"']))
    command = draw(st.sampled_from(["plink", "pscp -r", "java -jar app.jar", "./backup.sh", "auth", "login admin"]))
    others = draw(st.lists(st.sampled_from(["-batch", "-P 22", "-v", "root@db-1"]), max_size=2))
    at = draw(st.integers(0, len(others)))
    return " ".join([command, *others[:at], option, *others[at:]]), value


@settings(max_examples=300, deadline=None)
@given(typed_secrets(), st.sampled_from(["", " host=db-1 took=2950ms", "\nOK"]))
def test_a_secret_typed_without_a_prompt_or_a_sign_goes(case: tuple[str, str], suffix: str) -> None:
    text, value = case
    redacted = redact(text + suffix)
    assert value not in redacted and redacted.endswith(suffix), (text, redacted)


@st.composite
def lines_sharing_those_words(draw: st.DrawFn) -> str:
    """Lines with ``auth``, ``pw`` or a one-dash option and no secret: words, counts, addresses,
    durations, variables, a flag cluster."""
    word = draw(st.sampled_from(["ldap", "kerberos", "none", "alice", "okta", "required"]))
    number = draw(st.integers(0, 99999))
    forms = [
        f"auth {word}",
        f"auth from 10.0.{number % 256}.{number % 200}",
        f"auth failed for user {word}",
        f"auth took {number}ms",
        "auth $REDIS_PASSWORD",
        f"Failed auth from 192.168.1.{number % 256} port {number}",
        f"grep -Pw 'err[0-9]+' app-{number}.log",
        f"cmd -pw {number % 9000 + 1000}",
        f"cmd -pw {number}ms",
        "cmd -pw ${PW}",
        f"ls -pw /var/log/{word}",
        f"the pw field was empty for {word}",
        f"reset your pw at https://sso.example.com/reset (ticket {number % 1000})",
        f"pw policy {word}, min length 12",
        f"{word}: pw expired {number % 90} days ago",
    ]
    return draw(st.sampled_from(["", "2026-07-07T10:00:00.157Z INFO sso [main] - ", '{"msg": "'])) + draw(
        st.sampled_from(forms)
    )


@settings(max_examples=300, deadline=None)
@given(lines_sharing_those_words(), st.sampled_from([" ", "\u3000", "\u00a0", "\\t"]))
def test_lines_sharing_those_words_are_unchanged(line: str, blank: str) -> None:
    """Whatever blank stands between their words."""
    written = line.replace(" ", blank) if blank != " " else line
    assert redact(written) == written
