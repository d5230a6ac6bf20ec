"""A log template named in a sentence starts where it says something: its leading varying
fields (trace ids, request ids) tell which request, not what happened."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veridiag.text.render import telling_part

_LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ_.-", min_size=1, max_size=10)
_FIELD = st.one_of(
    _LABEL.map(lambda label: f"{label}: <*>"),
    _LABEL.map(lambda label: f"{label}=<*>"),
    st.sampled_from(["<*>", "[<*>]", "(<*>)", "<*>,"]),
)
_TELLING = st.sampled_from(
    [
        "Servlet.service() threw exception [No instances available for <*>]",
        "Connection is not available, request timed out after <*>ms",
        "订单 <*> 支付失败: 余额不足",
        "Failed to connect to redis at <*>",
    ]
)


@given(fields=st.lists(_FIELD, min_size=1, max_size=4), telling=_TELLING)
def test_leading_varying_fields_are_not_what_a_sentence_names(fields: list[str], telling: str) -> None:
    template = " ".join(fields) + " " + telling
    assert telling_part(template) == telling


@given(template=st.text(max_size=80))
def test_what_is_named_is_always_part_of_the_template_and_never_nothing(template: str) -> None:
    named = telling_part(template)
    assert named in template and (named or not template)
    assert named.endswith(template[len(template) - len(named) :])


@given(fields=st.lists(_FIELD, min_size=1, max_size=4))
def test_a_template_of_only_varying_fields_is_named_whole(fields: list[str]) -> None:
    template = " ".join(fields)
    assert telling_part(template) == template


_PACKAGE = st.lists(st.sampled_from(["java", "lang", "org", "springframework", "redis", "exceptions"]), max_size=3)
_RAISED = st.sampled_from(["IllegalStateException", "ValueError", "SQLTransientConnectionException", "SoapFault"])
_MESSAGE = st.sampled_from(["No instances available for <*>", "Connection is not available after <*>ms", "余额不足"])
_AROUND = st.sampled_from(["Request processing failed; nested exception is ", "Caused by: ", "handler threw ", ""])


@given(fields=st.lists(_FIELD, max_size=3), before=_AROUND, package=_PACKAGE, raised=_RAISED, message=_MESSAGE)
def test_a_template_naming_an_exception_is_named_from_the_innermost_one(
    fields: list[str], before: str, package: list[str], raised: str, message: str
) -> None:
    """ "… nested exception is java.lang.IllegalStateException: No instances …" is named from
    the exception, its class without its package, message and all — whatever wraps it."""
    qualified = ".".join([*package, raised])
    outer = "Servlet.service() threw exception [RuntimeException: wrapped; "
    template = " ".join(fields) + f" {outer}{before}{qualified}: {message}"
    assert telling_part(template) == f"{raised}: {message}"
