"""Secrets named by services' own headers and settings, and named in longer prose (issue 27 D6,
red team 45): Azure's ``Ocp-Apim-Subscription-Key`` and ``x-functions-key``, Datadog's
``DD-APPLICATION-KEY``, WeCom's ``EncodingAESKey``, Vault's unseal key, a licence key, a
wallet's seed phrase; "the password was changed to …". Each name in the shapes a request log,
a config and a JSON body write it; the value never survives and the line around it does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_redaction_variants import PREFIXES, SUFFIXES, secret_values
from veridiag.redaction import redact

#: Names a request log or a config gives a secret (the test's own sample, from the services'
#: documentation; the vocabulary may hold more).
_NAMES = st.sampled_from(
    [
        "Ocp-Apim-Subscription-Key",
        "subscription_key",
        "x-functions-key",
        "DD-APPLICATION-KEY",
        "dd_app_key",
        "X-Admin-Key",
        "EncodingAESKey",
        "encoding_aes_key",
        "aes_key",
        "enc_key",
        "unseal_key",
        "vault.unsealKey",
        "sign_key",
        "signKey",
        "license_key",
        "LicenseKey",
        "licence_key",
        "seed_phrase",
        "mnemonic",
        "recovery_codes",
        "wallet_key",
        "psk",
        "wpa_psk",
        "pre-shared-key",
        "key-string",
        "community_string",
    ]
)


def _cased(name: str, how: str) -> str:
    return {"as written": name, "upper": name.upper(), "lower": name.lower()}[how]


@settings(max_examples=200, deadline=None)
@given(
    _NAMES,
    st.sampled_from(["as written", "upper", "lower"]),
    secret_values,
    st.sampled_from(["{k}: {v}", "{k}={v}", '"{k}": "{v}"', "{k} = '{v}'", "-H '{k}: {v}'", "{k}：{v}"]),
    PREFIXES,
    SUFFIXES,
)
def test_a_service_named_secret_loses_its_value(  # noqa: PLR0917 (one argument per strategy)
    name: str, how: str, value: str, form: str, prefix: str, suffix: str
) -> None:
    line = prefix + form.format(k=_cased(name, how), v=value) + suffix
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


#: What is said between a secret's name and its value, one phrase after another.
_SAID = st.lists(
    st.sampled_from(["was", "is", "has been", "now", "changed to", "set to", "reset to", "is now", "updated to"]),
    min_size=2,
    max_size=3,
).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["password", "the password", "root password", "api key", "token", "the admin password"]),
    _SAID,
    secret_values,
    PREFIXES,
)
def test_a_secret_named_in_a_longer_sentence_loses_its_value(key: str, said: str, value: str, prefix: str) -> None:
    line = f"{prefix}{key} {said} {value}"
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix), (line, redacted)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["密码", "数据库密码", "令牌", "访问令牌", "密钥"]),
    st.lists(
        st.sampled_from(["已", "已经", "已被", "是", "改为", "重置为", "更新为", "设置为"]), min_size=2, max_size=3
    ).map("".join),
    st.sampled_from(["", " "]),
    secret_values,
    PREFIXES,
)
def test_a_secret_named_in_a_chinese_sentence_loses_its_value(
    key: str, said: str, blank: str, value: str, prefix: str
) -> None:
    line = f"{prefix}{key}{said}{blank}{value}"
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix), (line, redacted)


_HEX = "0123456789abcdef"


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["shpat_", "shpca_", "shppa_", "shpss_", "dapi", "pul-"]),
    st.text(_HEX, min_size=32, max_size=40).filter(lambda body: any(c.isdigit() for c in body)),
    st.sampled_from(["{t}", "token {t}", "using {t} for deploy", '"{t}"']),
    PREFIXES,
    SUFFIXES,
)
def test_a_service_token_with_a_hex_body_loses_it(
    prefix_word: str, body: str, form: str, prefix: str, suffix: str
) -> None:
    """Shopify, Databricks and Pulumi write their tokens as a prefix and hex, which no entropy
    detector reads as a secret (hex is every trace id's alphabet too)."""
    line = prefix + form.format(t=prefix_word + body) + suffix
    redacted = redact(line)
    assert body not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


def test_names_that_hold_no_secret_keep_their_values() -> None:
    for line in (
        "partition_key: orders-2026-07",
        "cache key=order:88121 hit",
        "idempotency_key: 550e8400-e29b-41d4-a716-446655440000",
        "routing_key=payment.failed",
        "license_type: enterprise",
        "the password was changed yesterday",
        "password has been reset by admin",
        "密码已过期，请重置",
        "令牌已经失效 3 次",
    ):
        assert redact(line) == line, line


_PASSWORD_WORDS = st.sampled_from(["password", "passwd", "token", "secret", "api_key", "db_password", "PASSWORD"])


@settings(max_examples=150, deadline=None)
@given(
    _PASSWORD_WORDS,
    secret_values.filter(lambda v: not set(v) & set("'\"[]<>")),
    st.sampled_from(
        [
            "{k}=b'{v}'",
            '{k}: u"{v}"',
            "'{k}': b'{v}'",
            "{k}=rb'{v}'",
            '{k} = f"{v}"',
            "{k}[{v}]",
            "{k}<{v}>",
            "user[pay] {k}[{v}] host[db-1]",
        ]
    ),
    PREFIXES,
    SUFFIXES,
)
def test_a_value_written_as_code_or_in_brackets_loses_it(
    key: str, value: str, form: str, prefix: str, suffix: str
) -> None:
    """A Python literal's prefix (``b'…'``, ``u"…"``) is no value, and a log format's
    ``name[value]`` names its value."""
    line = prefix + form.format(k=key, v=value) + suffix
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["password", "secret", "PASSWORD"]),
    st.sampled_from(["0", "7"]),
    secret_values,
    st.sampled_from(["username admin {k} {t} {v}", " {k} {t} {v}", "enable {k} {t} {v}"]),
    PREFIXES,
)
def test_a_router_config_line_loses_its_secret(key: str, kind: str, value: str, form: str, prefix: str) -> None:
    """Cisco IOS writes how a secret is stored between its name and its value (0: in clear,
    7: a reversible encoding)."""
    line = prefix + form.format(k=key, t=kind, v=value)
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix), (line, redacted)


def test_brackets_and_counts_after_a_name_are_kept() -> None:
    for line in (
        "password[min_length] = 12",
        "token[0] expired",
        "password 0 attempts left",
        "secret 5 minutes ago",
        "getPassword(user) called",
        "UserController.getToken 0.00KiB (self 3.1ms)",
        "refreshToken 7.25ms p99",
    ):
        assert redact(line) == line, line


@settings(max_examples=100, deadline=None)
@given(
    secret_values.filter(lambda v: "\\" not in v),
    st.sampled_from(["，请检查配置", "；已重试 3 次", "！", "？"]),
    # what makes a line read decoded: an escape, an invisible or a full-width character
    st.sampled_from(["\\n", "\u200b", "ｘ", "%20"]),
    st.sampled_from(["--with-token registry-1:5000", "token {v}", "password={v}"]),
)
def test_cjk_sentence_punctuation_ends_a_value_however_the_line_reads(
    value: str, sentence: str, trigger: str, form: str
) -> None:
    """A line read decoded keeps ``，`` as it is: read as ASCII, the sentence after it joined
    the value and went with it."""
    line = f"echo 'ok{trigger}' 数据库连接失败：{form.format(v=value)}{sentence}"
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.endswith(sentence), (line, redacted)
