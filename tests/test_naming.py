"""Which services a question names: written next to Chinese text, in full-width letters, with
a one-letter typo, or an infrastructure component no data holds — generated, not listed."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veridiag.agents.offline.naming import components, exact_services
from veridiag.agents.offline.planner import OfflinePlanner
from veridiag.agents.offline.skills import aliases
from veridiag.contracts.material import ExecutorScope
from veridiag.contracts.plan import Plan
from veridiag.pipeline.scope import scope_line
from veridiag.text.tokens import english_stopwords, tagged

KNOWN = ["frontend", "cartservice", "payment-service", "ts-order-service", "recommendationservice", "redis-cart"]

#: Text people write around a name: Chinese, CJK and full-width punctuation, spaces (a full-width
#: letter or digit next to a name is part of it, as its ASCII form would be).
AROUND = st.text(
    alphabet=st.sampled_from(list("是不是的问题吗还在报错今天左右？，。：；「」（）！、 　\u3000＃．／")),
    max_size=8,
)


def _full_width(name: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)


@given(
    service=st.sampled_from(KNOWN),
    before=AROUND,
    after=AROUND,
    wide=st.booleans(),
    upper=st.booleans(),
)
def test_a_service_is_found_whatever_cjk_text_or_width_surrounds_it(
    service: str, before: str, after: str, wide: bool, upper: bool
) -> None:
    written = service.upper() if upper else service
    written = _full_width(written) if wide else written
    question = before + written + after
    assert service in exact_services(question, KNOWN), question


@given(
    name=st.from_regex(r"[a-z][a-z0-9]{1,12}(?:[-_][a-z0-9]{1,8}){0,2}", fullmatch=True),
    before=AROUND,
    after=AROUND,
    wide=st.booleans(),
)
def test_any_service_name_is_found_between_any_cjk_text(name: str, before: str, after: str, wide: bool) -> None:
    written = _full_width(name) if wide else name
    assert exact_services(before + written + after, [name, "other-service"]) == [name], before + written + after


def test_the_red_team_questions_name_their_service() -> None:
    assert exact_services("是不是frontend的问题？07:01左右", KNOWN) == ["frontend"]
    assert exact_services("ＦＲＯＮＴＥＮＤ", KNOWN) == ["frontend"]
    assert exact_services("payment-service还在报错吗", KNOWN) == ["payment-service"]
    assert unicodedata.normalize("NFKC", "ＦＲＯＮＴＥＮＤ") == "FRONTEND"


@given(service=st.sampled_from(KNOWN), glued=st.sampled_from(["x", "1", "_", "-a", "Z"]))
def test_a_longer_name_is_not_read_as_the_service_it_contains(service: str, glued: str) -> None:
    """The boundary is any character that cannot be part of a name: letters, digits, _ and -."""
    assert service not in exact_services(f"是不是{service}{glued}的问题", KNOWN)
    assert service not in exact_services(f"是不是{glued}{service} 的问题", [service])


class _Env:
    """What the planner reads: services with data, nothing else."""

    def __init__(self, services: list[str]) -> None:
        self._services = services

    def now(self) -> datetime:
        return END

    def services(self) -> list[str]:
        return self._services

    def data_end(self, service: str | None = None) -> datetime | None:
        return END

    def log_span(self, service: str) -> None:
        return None

    def metric_span(self, service: str, metric: str | None = None) -> None:
        return None

    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]:
        return []


END = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def plan_of(question: str, services: list[str] = KNOWN) -> Plan:
    return OfflinePlanner(_Env(services)).make_plan(question)


@pytest.mark.parametrize(
    "question", ["是不是frontend的问题？07:01左右", "是不是ＦＲＯＮＴＥＮＤ的问题", "is it ＦＲＯＮＴＥＮＤ?"]
)
def test_a_name_against_chinese_or_in_full_width_is_asked_yes_or_no(question: str) -> None:
    plan = plan_of(question)
    assert plan.services == ["frontend"] and plan.services_named_exactly
    assert (plan.intent.kind, plan.intent.about) == ("blame", "frontend")


# -- a one-letter typo ------------------------------------------------------------------------


def _typos(name: str) -> st.SearchStrategy[str]:
    """``name`` with one letter dropped, doubled, changed, or two swapped."""
    at = st.integers(min_value=1, max_value=len(name) - 2)
    return st.one_of(
        at.map(lambda i: name[:i] + name[i + 1 :]),
        at.map(lambda i: name[:i] + name[i] + name[i:]),
        at.map(lambda i: name[:i] + ("q" if name[i] != "q" else "z") + name[i + 1 :]),
        at.map(lambda i: name[:i] + name[i + 1] + name[i] + name[i + 2 :]),
    )


@given(
    asked=st.sampled_from(["recommendationservice", "payment-service", "ts-order-service"]).flatmap(
        lambda name: st.tuples(st.just(name), _typos(name))
    ),
    template=st.sampled_from(["是不是{s}的问题？", "is it {s}?", "{s} 还在报错吗", "why is {s} slow"]),
)
def test_a_one_letter_typo_of_a_long_name_is_read_as_that_service(asked: tuple[str, str], template: str) -> None:
    service, typo = asked
    plan = plan_of(template.format(s=typo))
    if typo == service:  # a doubled letter swapped with itself
        return
    assert plan.services == [service], typo
    assert [(r.written, r.service) for r in plan.read_as] == [(typo, service)]
    assert typo not in plan.unknown_services
    if plan.intent.kind == "blame":
        assert plan.intent.about == service


SAFE = "bcdfghjklmnpqrstvwxz2456789"


@st.composite
def _pods(draw: st.DrawFn) -> tuple[str, str]:
    """A known service and the name of one of its pods, as Kubernetes generates it: a
    Deployment's ``<name>-<hash>-<suffix>``, a DaemonSet's ``<name>-<suffix>``, a StatefulSet's
    ``<name>-<ordinal>``."""
    service = draw(st.sampled_from(KNOWN))
    suffix = draw(st.text(alphabet=SAFE, min_size=5, max_size=5))
    shape = draw(st.sampled_from(["deployment", "daemonset", "statefulset"]))
    if shape == "deployment":
        pod = f"{service}-{draw(st.text(alphabet=SAFE, min_size=8, max_size=10))}-{suffix}"
    elif shape == "daemonset":
        pod = f"{service}-{suffix}"
    else:
        pod = f"{service}-{draw(st.integers(min_value=0, max_value=12))}"
    return service, pod


@given(
    asked=_pods(),
    template=st.sampled_from(
        ["is {s} to blame?", "是不是 {s} 的问题？", "pod {s} 还在报错吗", "why is {s} slow at 10:00", "{s}是罪魁祸首吗"]
    ),
)
def test_a_pod_named_in_the_question_is_read_as_its_service(asked: tuple[str, str], template: str) -> None:
    """ "is cartservice-579f59597d-wc2lz to blame?" asks about cartservice — the data holds the
    pod's telemetry under its workload, as the importers put it — not about a service without
    data: the plan names the service, says how it read the pod, and a blame question is about it."""
    service, pod = asked
    plan = plan_of(template.format(s=pod))
    assert plan.services == [service], pod
    assert [(r.written, r.service) for r in plan.read_as] == [(pod, service)]
    assert pod not in plan.unknown_services and pod.lower() not in plan.unknown_services
    if plan.intent.kind == "blame":
        assert plan.intent.about == service


def test_a_recomendationservice_is_read_and_said_so() -> None:
    plan = plan_of("recomendationservice 有问题吗")
    assert plan.services == ["recommendationservice"]
    assert plan.read_as[0].written == "recomendationservice"


@pytest.mark.parametrize(
    ("question", "known"),
    [
        ("is node-12 down?", ["node-11", "node-13"]),  # instances differ by a digit only
        ("is node-1234 down?", ["node-1235"]),
        ("is cart down?", ["carts"]),  # too short to guess
        ("is service-c down?", ["service-a", "service-b"]),  # two as close: no guess
        ("is paymentservices down?", ["payment-service"]),  # two edits away
    ],
)
def test_no_service_is_guessed_from_a_short_word_a_digit_or_two_close_names(question: str, known: list[str]) -> None:
    plan = plan_of(question, known)
    assert plan.services == [] and plan.read_as == []


# -- a component no data holds ----------------------------------------------------------------


@given(
    component=st.sampled_from(
        ["mysql", "Redis", "kafka", "PostgreSQL", "ＭｏｎｇｏＤＢ", "etcd", "zookeeper", "nginx"]
    ),
    template=st.sampled_from(
        ["Is it {c}?", "是不是 {c} 的问题", "是不是{c}的问题？", "could {c} be the cause", "{c}挂了吗"]
    ),
)
def test_a_component_without_data_is_a_service_without_data_and_no_suspect(component: str, template: str) -> None:
    plan = plan_of(template.format(c=component), ["frontend", "cartservice", "payment-service"])
    named = unicodedata.normalize("NFKC", component).lower().replace("postgresql", "postgres")
    assert plan.unknown_services == [named]
    # asked about, as a service without data (the headline says it has none, never yes or no)
    assert plan.services == [] and plan.intent.suspects in ([], [named]), plan.intent


def test_a_component_that_is_a_service_with_data_is_that_service() -> None:
    plan = plan_of("is it mysql?", ["mysql", "frontend"])
    assert plan.services == ["mysql"] and plan.unknown_services == [] and plan.intent.about == "mysql"
    carried = plan_of("是不是 redis 的问题", KNOWN)
    assert carried.unknown_services == [] and carried.pointed_services == ["redis-cart"]


# -- what the scope line says of it -------------------------------------------------------------


def test_the_scope_line_says_which_service_a_misspelt_word_was_read_as() -> None:
    plan = plan_of("recomendationservice 有问题吗")
    scope = ExecutorScope(examined=("recommendationservice", "frontend"), surveyed=True)
    assert "「recomendationservice」按 recommendationservice 理解" in (scope_line(plan, scope, "zh") or "")
    english = plan_of("is recomendationservice ok?")
    assert 'Read "recomendationservice" as recommendationservice.' in (scope_line(english, scope, "en") or "")


def test_one_caller_is_not_called_the_1_services() -> None:
    near = ExecutorScope(examined=("frontend", "cartservice"), neighbours=("cartservice",))
    line = scope_line(plan_of("is frontend ok?"), near, "en") or ""
    assert "1 services" not in line and "the service it calls or is called by (cartservice)" in line, line


# -- "still failing?" reads the newest data ---------------------------------------------------


@pytest.mark.parametrize("question", ["payment-service还在报错吗", "is payment-service still failing?", "还在报错吗"])
def test_a_still_question_reads_the_newest_hour_of_data(question: str) -> None:
    plan = plan_of(question)
    assert (plan.start, plan.end) == ("2026-07-07T11:00:00Z", "2026-07-07T12:00:00Z")
    assert plan.time.kind == "newest" and plan.time.phrase and plan.explicit_time is False
    scope = ExecutorScope(examined=("payment-service",), surveyed=True)
    assert "over the newest hour of data, 2026-07-07 11:00 – 2026-07-07 12:00" in (scope_line(plan, scope, "en") or "")
    assert "最新一小时的数据 2026-07-07 11:00 – 2026-07-07 12:00" in (scope_line(plan, scope, "zh") or "")


def test_a_still_question_with_a_time_reads_that_time() -> None:
    plan = plan_of("was payment-service still failing at 09:00?")
    assert plan.time.kind != "newest" and (plan.time.at or "").startswith("2026-07-07T09:00")


# -- a word standing where a blame question puts its suspect ----------------------------------

BLAME = [
    "is {w} to blame?",
    "Is it {w}?",
    "是不是{w}的问题？",
    "是不是 {w} 的问题",
    "could {w} be the cause?",
    "blame {w}",
]


@given(
    word=st.one_of(
        st.from_regex(r"[a-z]{3,10}(?:service|svc|api|db|server|app)", fullmatch=True),
        st.from_regex(r"[a-z]{2,8}[-_][a-z0-9]{2,8}", fullmatch=True),
        st.from_regex(r"[A-Z][a-z]{2,8}(?:Service|Api|Server)", fullmatch=True),
        st.sampled_from(["frontend", "backend"]),
    ),
    template=st.sampled_from(BLAME),
)
def test_a_name_shaped_word_where_the_suspect_stands_is_asked_about_without_data(word: str, template: str) -> None:
    """No data has heard of it, but the question's grammar asks about it: it is said to have no
    data first and is answered neither yes nor no."""
    plan = plan_of(template.format(w=word), ["cartservice", "payment-service"])
    if word.lower() in {"cartservice", "payment-service"}:
        return
    assert word in plan.unknown_services, plan
    assert plan.intent.kind == "blame" and word in plan.intent.suspects, plan.intent


@given(
    word=st.sampled_from(["slow", "down", "broken", "it", "this", "the network", "v1.2", "flaky", "api", "db"]),
    template=st.sampled_from(BLAME),
)
def test_a_word_not_shaped_like_a_name_is_no_suspect_without_data(word: str, template: str) -> None:
    plan = plan_of(template.format(w=word), ["cartservice", "payment-service"])
    assert plan.unknown_services == [], plan.unknown_services


def test_a_word_that_is_part_of_a_known_name_is_never_said_to_have_no_data() -> None:
    plan = plan_of("is frontend to blame?", ["frontend-web", "cartservice"])
    assert plan.unknown_services == [], plan.unknown_services


# -- a service asked about by its kind ("the database", 网关) ----------------------------------


@given(
    kind=st.sampled_from([("database", "mysql"), ("数据库", "mysql"), ("网关", "api-gateway"), ("cache", "redis")]),
    template=st.sampled_from(
        ["is it the {w}?", "是不是{w}的问题？", "{w}有问题吗", "is the {w} to blame?", "{w} 是根因吗"]
    ),
)
def test_a_kind_word_that_points_to_one_service_is_asked_yes_or_no_about_it(
    kind: tuple[str, str], template: str
) -> None:
    """ "is it the database?" asks about the one database the data holds as "is it mysql?" does:
    the first sentence says yes, no or cannot tell of it, not a general cause."""
    word, service = kind
    plan = plan_of(template.format(w=word), ["frontend", "mysql", "api-gateway", "redis", "order-service"])
    assert (plan.intent.kind, plan.intent.about) == ("blame", service), plan.intent


def test_a_kind_word_that_points_to_several_services_names_none_of_them() -> None:
    plan = plan_of("is it the database?", ["frontend", "mysql", "orders-db"])
    assert plan.intent.kind != "blame" or plan.intent.about is None


@given(
    kind=st.sampled_from(["搜索服务", "搜索 服务", "search service", "Search Service", "消息队列系统"]),
    template=st.sampled_from(["{k}为什么慢", "why is the {k} slow?", "is the {k} down?", "{k}还在报错吗"]),
)
def test_a_kind_of_service_the_data_has_none_of_is_a_service_without_data(kind: str, template: str) -> None:
    """ "搜索服务为什么慢" where no service is a search service: said to have no data (first, by the
    headline), never answered silently from another service's incident."""
    plan = plan_of(template.format(k=kind), ["frontend", "mysql", "order-service"])
    assert [u.replace(" ", "") for u in plan.unknown_services] == [kind.lower().replace(" ", "")], plan


@given(template=st.sampled_from(["订单服务为什么慢", "why is the order service slow?", "用户说搜索很慢"]))
def test_a_kind_word_with_a_service_of_it_or_without_a_noun_is_no_service_without_data(template: str) -> None:
    assert plan_of(template, ["frontend", "order-service"]).unknown_services == []


# -- a service asked about by a name no kind word knows ("the billing service", 账单服务) ---------

#: Words that only say which service or how it is, written as people write them: never a name.
WHICH_OR_HOW = [
    "the affected service", "which service", "what services", "any service", "other services",
    "the slowest service", "the failing service", "the upstream service", "a third-party service",
    "the culprit service", "every service", "the impacted services", "our core services",
    "哪个服务", "哪些服务", "所有服务", "下游服务", "上游服务", "核心服务", "第三方服务", "这个系统",
    "整个系统", "相关服务", "其他服务", "受影响的服务", "各个服务", "业务系统", "出错的服务",
    "重启服务", "检查服务", "宕机服务", "回滚服务", "the flapping service",
]  # fmt: skip
NOUN_TEMPLATES = [
    "why is {k} slow?",
    "is {k} to blame?",
    "{k} keeps failing since 10:00",
    "{k}为什么一直报错",
    "是不是{k}的问题",
]


@given(phrase=st.sampled_from(WHICH_OR_HOW), template=st.sampled_from(NOUN_TEMPLATES))
def test_words_saying_which_or_how_a_service_is_name_no_service_without_data(phrase: str, template: str) -> None:
    plan = plan_of(template.format(k=phrase), ["frontend", "mysql", "order-service"])
    assert plan.unknown_services == [], plan.unknown_services


def _plain_name(word: str) -> bool:
    """A word people would name a service by: no word of the kind, component or generic lists,
    no -ed/-est word, not part of a known name."""
    shape = components().service_shaped
    listed = {w.lower() for w in [*shape.generic.en, *shape.nouns, *aliases(), *english_stopwords()]}
    return (
        word not in listed
        and not any(word == c.name or word in c.aliases for c in components().components)
        and not word.endswith(("ed", "est"))
        and not any(word in known for known in ["frontend", "mysql", "order-service"])
    )


@given(
    word=st.from_regex(r"[a-z]{4,11}", fullmatch=True).filter(_plain_name),
    noun=st.sampled_from([" service", " services", "  microservice", " svc", "服务", " 系统"]),
    template=st.sampled_from(NOUN_TEMPLATES),
    article=st.sampled_from(["", "the ", "The "]),
)
def test_any_name_written_before_a_service_noun_is_a_service_without_data(
    word: str, noun: str, template: str, article: str
) -> None:
    """ "why is the billing service slow?" with no billing data: said to have no data — for any
    word that is no word of a list, not only the listed kinds."""
    question = template.format(k=article + word + noun)
    plan = plan_of(question, ["frontend", "mysql", "order-service"])
    assert plan.unknown_services == [word + noun], (question, plan.unknown_services)


@given(
    name=st.sampled_from(["账单", "计费", "推荐", "短信", "物流", "价格", "优惠券", "风控", "报表"]),
    noun=st.sampled_from(["服务", "系统", "模块", "微服务"]),
    template=st.sampled_from(NOUN_TEMPLATES),
)
def test_a_chinese_name_before_a_service_noun_is_a_service_without_data(name: str, noun: str, template: str) -> None:
    plan = plan_of(template.format(k=name + noun), ["frontend", "mysql", "order-service"])
    assert [u for u in plan.unknown_services if name in u] == [name + noun], plan.unknown_services


def test_a_generic_word_before_the_name_is_no_part_of_a_known_name() -> None:
    """ "the" is inside ts-order-other-service: "the billing service" is billing's all the same."""
    plan = plan_of("why is the billing service slow since 10:00?", ["ts-order-other-service", "frontend"])
    assert plan.unknown_services == ["billing service"], plan.unknown_services


@given(service=st.sampled_from(["billing-service", "billingservice", "billing"]))
def test_a_name_before_a_noun_that_a_known_service_carries_is_that_service(service: str) -> None:
    plan = plan_of("why is the billing service slow?", ["frontend", service])
    assert plan.unknown_services == [], plan.unknown_services


@given(text=st.text(max_size=40))
def test_the_tagged_words_are_the_whole_text_in_order(text: str) -> None:
    """``services_by_noun`` places phrases by the tagged words' lengths."""
    assert "".join(word for word, _tag in tagged(text)) == text


ONLINE_BOUTIQUE = [
    "frontend", "cartservice", "productcatalogservice", "currencyservice", "paymentservice", "shippingservice",
    "emailservice", "checkoutservice", "recommendationservice", "adservice", "redis-cart",
]  # fmt: skip


@given(
    kind=st.sampled_from(
        ["推荐", "购物车", "广告", "汇率", "货币", "邮件", "物流", "运费", "商品", "前端", "支付", "结算"]
    ),
    noun=st.sampled_from(["服务", "系统", "模块"]),
    template=st.sampled_from(NOUN_TEMPLATES),
)
def test_a_chinese_kind_of_a_service_the_data_holds_points_to_it_and_is_never_without_data(
    kind: str, noun: str, template: str
) -> None:
    """ "推荐服务为什么慢" on OnlineBoutique is about recommendationservice, which has data."""
    plan = plan_of(template.format(k=kind + noun), ONLINE_BOUTIQUE)
    assert plan.unknown_services == [], plan.unknown_services
    assert plan.services or plan.pointed_services or plan.intent.about, plan


@given(
    stem=st.sampled_from(["payment", "order", "currency", "contact", "ticket", "seat"]),
    shape=st.sampled_from(["{w}-service", "{w}service", "ts-{w}-service"]),
    written=st.sampled_from(["the {w} service", "the {w}s service", "the {w} conversion service", "{w} svc"]),
    template=st.sampled_from(NOUN_TEMPLATES),
)
def test_a_service_the_data_holds_is_never_said_to_lack_data_however_it_is_written(
    stem: str, shape: str, written: str, template: str
) -> None:
    """ "is the payments service to blame?", "the currency conversion service": a word of the
    phrase (or its singular) that is part of a known name points to that service."""
    question = template.format(k=written.format(w=stem))
    plan = plan_of(question, ["frontend", shape.format(w=stem)])
    assert plan.unknown_services == [], (question, plan.unknown_services)


@given(
    asked=st.sampled_from(
        [("结账服务", "checkoutservice"), ("联系人服务", "ts-contacts-service"), ("推荐系统", "recommendationservice")]
    ),
    template=st.sampled_from(NOUN_TEMPLATES),
)
def test_a_chinese_name_of_a_service_the_data_holds_is_never_said_to_lack_data(
    asked: tuple[str, str], template: str
) -> None:
    word, service = asked
    assert plan_of(template.format(k=word), ["frontend", service]).unknown_services == []
