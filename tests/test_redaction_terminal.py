"""Secrets in text written for a terminal (issue 27 D6, red team 45): a coloured log line
(``\\x1b[1mpassword\\x1b[0m: …``), a key or value broken by an ANSI escape sequence — raw, as a
JSON or Python escape, or after the sanitiser turned its ESC into U+FFFD (what an alert's text
holds when it reaches redaction) — still names its secret, and the line around it stays."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_redaction_variants import PREFIXES, SUFFIXES, secret_values
from veridiag.contracts.sanitize import clean_text
from veridiag.redaction import redact
from veridiag.redaction.keys import vocabulary

_KEYS = sorted(
    {
        word
        for words in vocabulary().kinds.values()
        for word in words
        if word.isascii() and " " not in word and word not in vocabulary().not_alone and len(word) >= 3
    }
)

#: An escape sequence's introducer as a log carries it: the ESC itself, a JSON or Python escape
#: of it, or U+FFFD where the sanitiser replaced it.
_INTRODUCERS = st.sampled_from(["\x1b", "\\u001b", "\\u001B", "\\x1b", "\ufffd"])


@st.composite
def escape_sequences(draw: st.DrawFn) -> str:
    """A CSI sequence: colours and styles (SGR, ``m``), erase and cursor moves (``K``, ``G``)."""
    params = draw(st.lists(st.integers(0, 107).map(str), max_size=4).map(";".join))
    return draw(_INTRODUCERS) + "[" + params + draw(st.sampled_from("mmmKG"))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(_KEYS),
    st.data(),
    escape_sequences(),
    secret_values,
    st.sampled_from(["{k}={v}", "{k}: {v}", "{k} = {v}", "{k}={v}", "{k}=>{v}"]),
    PREFIXES,
    SUFFIXES,
)
def test_an_escape_sequence_inside_a_key_hides_no_secret(  # noqa: PLR0917 (one argument per strategy)
    key: str, data: st.DataObject, escape: str, value: str, form: str, prefix: str, suffix: str
) -> None:
    at = data.draw(st.integers(1, len(key) - 1))
    broken = key[:at] + escape + key[at:]
    line = prefix + form.format(k=broken, v=value) + suffix
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(_KEYS),
    escape_sequences(),
    escape_sequences(),
    secret_values,
    st.sampled_from(["{a}{k}{b}={v}", "{a}{k}{b}: {v}", "{k}={a}{v}{b}", "{a}{k}{b}{a}: {b}{v}"]),
    PREFIXES,
)
def test_a_coloured_key_or_value_hides_no_secret(  # noqa: PLR0917 (one argument per strategy)
    key: str, before: str, after: str, value: str, form: str, prefix: str
) -> None:
    line = prefix + form.format(a=before, k=key, b=after, v=value)
    for shown in (line, clean_text(line)):  # as a tool returns it, and as an alert's text reaches redaction
        redacted = redact(shown)
        assert value not in redacted, (shown, redacted)
        assert redacted.startswith(prefix), (shown, redacted)


def test_a_coloured_line_without_a_secret_is_kept() -> None:
    for line in (
        "\x1b[32mINFO\x1b[0m payment-service order=88121 took=2950ms",
        "\ufffd[1mpassword\ufffd[0m policy: min length 12",
        "\x1b[31mERROR\x1b[0m login failed for user=pay: password authentication failed",
    ):
        assert redact(line) == line
