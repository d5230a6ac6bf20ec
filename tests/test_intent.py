"""What kind of question it is: the intent read from generated wordings (zh + en), with the
services, times and filler people put around them — not from a list of known questions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veridiag.agents.offline.intent import intent_book, read_intent
from veridiag.contracts.plan import IntentId

SERVICES = st.sampled_from(["payment-service", "ts-preserve-service", "mysql", "frontend", "order-api"])
TIMES = st.sampled_from(
    ["", "around 07:01 UTC ", "07:01 左右", "今天上午 ", "since 10:00 ", "昨天下午两点以后", "at 14:23 "]
)
FILLER = st.sampled_from(["", "请问", "hi, ", "急！", "on-call here: ", "帮忙看下，"])

# Each intent as people ask it: a template with {s} for a service, and the intent it asks.
ASKED: list[tuple[str, IntentId]] = [
    ("是不是 {s} 的问题？", "blame"),
    ("会不会是{s}导致的？", "blame"),
    ("Is {s} to blame, or something behind it?", "blame"),
    ("Is {s} the root cause?", "blame"),
    ("was it {s}?", "blame"),
    ("could {s} be the culprit here", "blame"),
    ("{s} 的错误日志出现了多少次？", "count"),
    ("how many timeouts did {s} log", "count"),
    ("{s} 有哪些 WARN？", "count"),
    ("which errors did {s} log?", "count"),
    ("{s} 的延迟是什么时候开始升高的？", "onset"),
    ("when did the errors of {s} start?", "onset"),
    ("{s} 最近有什么变更？", "change"),
    ("what changed on {s}?", "change"),
    ("哪个服务最慢？", "rank"),
    ("which service is the culprit?", "rank"),
    ("which service has the most errors?", "rank"),
    ("{s} 为什么变慢了？", "cause"),
    ("why is {s} slow?", "cause"),
    ("帮我看看 {s} 的原因", "cause"),
    ("{s} 持续了多久？", "duration"),
    ("{s} 的 p99 延迟是多少？", "value"),
    ("what was the cpu usage of {s}?", "value"),
    ("how high was the latency of {s}", "value"),
    ("when did {s} recover?", "duration"),
    ("{s} 有没有异常？", "abnormal"),
    ("is {s} ok?", "abnormal"),
    ("anything wrong with {s}?", "abnormal"),
]


@given(asked=st.sampled_from(ASKED), service=SERVICES, time=TIMES, filler=FILLER)
def test_the_intent_is_read_whatever_surrounds_the_asking_words(
    asked: tuple[str, IntentId], service: str, time: str, filler: str
) -> None:
    template, kind = asked
    question = filler + time + template.format(s=service)
    intent = read_intent(question, [service])
    assert intent.kind == kind, question
    if kind == "blame":
        assert intent.about == service


@given(service=SERVICES, template=st.sampled_from(["是不是 {s} 的问题？", "Is {s} to blame?", "was it {s}?"]))
def test_blame_needs_a_service_the_question_names(service: str, template: str) -> None:
    """Without the service among those named exactly, "is it X?" cannot ask about X."""
    assert read_intent(template.format(s=service), []).kind != "blame"


@given(
    measure=st.sampled_from(
        [
            ("最慢", "latency"),
            ("slowest", "latency"),
            ("报错最多", "errors"),
            ("most errors", "errors"),
            ("CPU 最高", "cpu"),
        ]
    ),
    zh=st.booleans(),
)
def test_a_ranking_says_what_it_ranks_by(measure: tuple[str, str], zh: bool) -> None:
    words, family = measure
    question = f"哪个服务{words}？" if zh else f"which service has the {words}?"
    intent = read_intent(question, [])
    assert (intent.kind, intent.rank_by) == ("rank", family), question


@given(
    symptom=st.sampled_from(
        ["支付一直失败", "checkout returns 504", "登录很慢", "the api fell over", "wifi keeps dropping"]
    ),
    filler=FILLER,
)
def test_a_bare_symptom_asks_why(symptom: str, filler: str) -> None:
    assert read_intent(filler + symptom, []).kind == "cause"


@given(
    words=st.sampled_from(
        ["挂了", "一直在报错", "still failing", "is down", "fell over", "right now", "keeps crashing"]
    )
)
def test_something_down_or_ongoing_marks_the_latest_incident(words: str) -> None:
    assert read_intent(f"api {words}，为什么", []).recent


def test_every_intent_of_the_vocabulary_is_reachable_and_the_patterns_compile() -> None:
    kinds = {entry.id for entry in intent_book().intents}
    assert kinds == {"blame", "value", "count", "onset", "duration", "change", "rank", "cause", "abnormal"}
    reached = {kind for _template, kind in ASKED}
    assert reached == kinds


TWO = ["frontend", "cartservice", "redis-cart", "payment-service"]


@given(
    pair=st.permutations(["frontend", "cartservice", "payment-service"]).map(lambda p: p[:2]),
    template=st.sampled_from(
        [
            "是不是 {a} 还是 {b} 的问题",
            "是不是{a}还是{b}的问题？",
            "是{a}还是{b}的问题？",
            "会不会是 {a} 或者 {b} 导致的",
            "is it {a} or {b}?",
            "was it {a}, or {b}?",
            "Is {a} or {b} to blame?",
            "is {a} or {b} the culprit?",
            "是不是 {a}/{b} 的问题",
            "{a} 还是 {b} 的锅？",
            "{a}还是{b}导致的",
        ]
    ),
    filler=FILLER,
    time=TIMES,
)
def test_every_service_asked_about_is_a_suspect(pair: list[str], template: str, filler: str, time: str) -> None:
    a, b = pair
    question = filler + time + template.format(a=a, b=b)
    intent = read_intent(question, sorted(TWO))
    assert (intent.kind, intent.about, intent.suspects) == ("blame", a, [a, b]), question


@given(
    service=SERVICES, template=st.sampled_from(["是不是 {s} 的问题，{o} 一直报错", "Is {s} to blame for {o} failing?"])
)
def test_a_service_that_fails_is_no_suspect_beside_the_one_asked_about(service: str, template: str) -> None:
    other = "cartservice"
    intent = read_intent(template.format(s=service, o=other), [service, other])
    assert intent.suspects == [service], template


# -- asking for the log lines themselves, not why ------------------------------------------------

ZH_LEVELS = st.sampled_from(["WARNING", "WARN", "ERROR", "警告", "告警", "报错", "错误", "错误日志", "ERROR 日志"])
EN_LEVELS = st.sampled_from(["warnings", "WARN lines", "errors", "error logs", "error messages", "exceptions"])
SPACE = st.sampled_from(["", " ", "  ", "\u3000"])
END = st.sampled_from(["", "？", "?", "。", " ?", "!!", "～"])
LINES_ZH = [
    "{s}{_}的{_}{l}{_}有哪些",
    "{s}{_}的{_}{l}{_}都有哪些",
    "{l}{_}有哪些",
    "列出{_}{s}{_}的{_}{l}",
    "列出{_}{l}",
]
LINES_EN = ["list the {l}", "list {s}'s {l}", "show me the {l} of {s}", "show the {l}", "list all {l} from {s}"]
ONSET_ZH = ["{s}{_}的{_}{l}{_}是什么时候开始的", "{s}{_}的{l}从什么时候开始", "{l}{_}是几点开始的"]
ONSET_EN = ["when did the {l} of {s} start", "when did {s}'s {l} begin", "since when are there {l}"]


def _asked(template: str, service: str, level: str, space: str) -> str:
    question = template.replace("{_}", space).format(s=service, l=level)
    return question.replace("{s}", service)


@st.composite
def _listing_or_onset(draw: st.DrawFn) -> tuple[str, list[str], IntentId]:
    """A question asking for log lines or when they began: zh or en, with a service or not,
    spaced and ended any way, with filler before it."""
    zh, onset, named = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    templates = {(True, True): ONSET_ZH, (True, False): LINES_ZH, (False, True): ONSET_EN, (False, False): LINES_EN}
    choices = templates[zh, onset]
    template = draw(st.sampled_from([t for t in choices if named or "{s}" not in t] or choices))
    service = draw(SERVICES)
    level = draw(ZH_LEVELS if zh else EN_LEVELS)
    space = draw(SPACE) if zh else " "
    question = draw(FILLER) + _asked(template, service, level, space) + draw(END)
    return question, [service] if "{s}" in template else [], "onset" if onset else "count"


@given(asked=_listing_or_onset())
def test_asking_for_the_lines_is_a_listing_and_when_they_began_an_onset(asked: tuple[str, list[str], IntentId]) -> None:
    """ "nova 的 WARNING 有哪些？" and "list the warnings" ask for the log lines (``count``, whose
    answer lists them), not for a culprit or what is abnormal; "X 的错误是什么时候开始的" stays
    an onset question — with or without a service, in either language, however spaced."""
    question, services, kind = asked
    assert read_intent(question, services).kind == kind, question


@given(
    service=SERVICES, template=st.sampled_from(["{s}为什么报错", "为什么 {s} 一直报错？", "{s} 为什么会有这么多警告"])
)
def test_why_a_service_logs_errors_asks_why(service: str, template: str) -> None:
    """为什么报错 holds 什么报错: still a why."""
    assert read_intent(template.format(s=service), [service]).kind == "cause"


@given(
    asked=st.sampled_from(
        [
            ("{s} 的 WARNING 有哪些？", "WARN"),
            ("list the warnings", "WARN"),
            ("列出 {s} 的警告", "WARN"),
            ("{s} 有哪些 ERROR？", "ERROR"),
            ("show me the errors of {s}", "ERROR"),
            ("{s} 的日志有哪些", None),
        ]
    ),
    service=SERVICES,
)
def test_a_listing_says_the_level_it_asks_for(asked: tuple[str, str | None], service: str) -> None:
    template, level = asked
    intent = read_intent(template.format(s=service), [service])
    assert (intent.kind, intent.level) == ("count", level), template


@given(
    template=st.sampled_from(
        [
            "{s}还在报错吗",
            "{s} 还在报错吗？",
            "{s} 现在还慢吗",
            "{s} 仍然超时吗",
            "{s} 恢复了吗",
            "{s}还失败吗",
            "{s} 还报错吗？",
            "{s}还慢吗",
            "is {s} still failing?",
            "is {s} still slow",
            "does {s} still throw errors?",
            "is {s} failing anymore?",
            "has {s} recovered?",
        ]
    ),
    service=SERVICES,
    filler=FILLER,
)
def test_a_still_question_says_the_words_that_ask_it(template: str, service: str, filler: str) -> None:
    intent = read_intent(filler + template.format(s=service), [service])
    assert intent.still and intent.recent, template


@given(
    template=st.sampled_from(["{s} 为什么报错", "why is {s} slow?", "是不是 {s} 还是 gateway 的问题"]), service=SERVICES
)
def test_a_question_not_asking_still_reads_no_still(template: str, service: str) -> None:
    assert read_intent(template.format(s=service), [service, "gateway"]).still is None


# -- "is X to blame?" however the suspect is tied to the trouble -------------------------------

BLAME_WORDINGS = [
    "was the incident caused by {s}?",
    "is the slowdown caused by {s}?",
    "Is the outage due to {s}?",
    "are these errors because of {s}?",
    "is it because of {s}?",
    "is it {s}'s fault?",
    "{s}'s fault?",
    "could it be {s}?",
    "isn't it {s}?",
    "I suspect {s}, right?",
    "{s} is the culprit, right?",
    "is {s} guilty?",
    "is this on {s}?",
    "was {s} the trigger?",
    "is {s} the source of the errors?",
    "is the problem in {s}?",
    "is {s} behind the outage?",
    "root cause = {s}?",
    "{s} 是罪魁祸首吗？",
    "{s} 是元凶吗",
    "{s} 是根因吗？",
    "{s}是不是根因",
    "根因是 {s} 吗？",
    "故障源头是{s}吗",
    "是因为 {s} 吗",
    "支付失败是因为 {s} 吗",
    "是由 {s} 引起的吗",
    "{s} 导致的？",
    "{s} 引起的吧？",
    "{s} 的锅？",
    "问题出在 {s} 吗",
    "问题是不是出在{s}",
    "我怀疑是{s}，对吗",
    "是{s}吧",
]


@given(template=st.sampled_from(BLAME_WORDINGS), service=SERVICES, time=TIMES, filler=FILLER)
def test_a_suspect_tied_to_the_trouble_by_any_cause_word_is_a_blame_question(
    template: str, service: str, time: str, filler: str
) -> None:
    """ "caused by X?", "due to X?", "X's fault?", "X 是罪魁祸首吗", "是因为 X 吗", "问题出在 X 吗"
    ask yes or no about X as much as "is X to blame?" does: the first sentence must say which."""
    question = filler + time + template.format(s=service)
    intent = read_intent(question, [service])
    assert (intent.kind, intent.about) == ("blame", service), question


@given(
    template=st.sampled_from(
        [
            "is {v} slow because of {s}?",
            "{v} 报错是因为 {s} 吗",
            "were {v}'s errors caused by {s}?",
            "{v} 变慢是不是 {s} 导致的",
        ]
    ),
    service=SERVICES,
)
def test_the_suspect_is_the_service_the_cause_word_points_at_not_the_victim(template: str, service: str) -> None:
    victim = "cartservice"
    intent = read_intent(template.format(s=service, v=victim), [victim, service])
    assert (intent.kind, intent.about) == ("blame", service), template


@given(
    template=st.sampled_from(
        [
            "what caused {s} to fail?",
            "why is {s} slow?",
            "{s} 的问题是什么？",
            "{s}有没有问题",
            "是什么导致 {s} 变慢的？",
        ]
    ),
    service=SERVICES,
)
def test_a_service_that_suffers_is_not_asked_about_as_a_suspect(template: str, service: str) -> None:
    intent = read_intent(template.format(s=service), [service])
    assert intent.kind != "blame", template


@given(
    asked=st.sampled_from(
        [
            ("which service restarted the most?", "restarts"),
            ("which pod crashed most often", "restarts"),
            ("which service errored the most?", "errors"),
            ("which one slowed down the most", "latency"),
            ("which service was restarting the most yesterday", "restarts"),
        ]
    ),
    filler=FILLER,
)
def test_a_ranking_reads_its_measure_in_any_inflection(asked: tuple[str, str], filler: str) -> None:
    """ "restarted", "crashed", "errored" ask for the same measure as "restarts", "crash", "error"."""
    question, family = asked
    intent = read_intent(filler + question, [])
    assert (intent.kind, intent.rank_by) == ("rank", family), question


@given(
    template=st.sampled_from(
        [
            "{s}持续了多久",
            "{s} 持续了多长时间？",
            "{s}多久才恢复",
            "{s} 什么时候恢复的",
            "{s}几点恢复了",
            "{s}恢复了吗",
            "how long did the {s} outage last?",
            "How long was {s} down",
            "when did {s} recover?",
            "When did the {s} errors stop",
            "has {s} recovered yet?",
        ]
    ),
    service=st.sampled_from(["payment-service", "支付", "checkout", "ts-order-service"]),
    tail=st.sampled_from(["", " around 10:05", "（10点那次）", " since 10:00"]),
)
def test_how_long_and_when_it_recovered_ask_for_the_duration(template: str, service: str, tail: str) -> None:
    assert read_intent(template.format(s=service) + tail, []).kind == "duration"


@given(
    question=st.sampled_from(
        ["how long has checkout been failing?", "payment-service 什么时候开始报错的", "when did it start?"]
    )
)
def test_how_long_it_has_been_is_still_its_onset(question: str) -> None:
    assert read_intent(question, []).kind == "onset"


@given(
    asked=st.sampled_from(
        [
            "{s} 的 CPU 是多少",
            "{s} 内存占用多大",
            "{s}的错误率是多少？",
            "{s} 延迟有多高",
            "what is the error rate of {s}?",
            "what was {s}'s p99 latency",
            "what's the cpu of {s}?",
            "how many threads were running on {s}?",
            "how many pending connections did {s} have",
            "{s} 线程数是多少",
            "{s} 的 p99 是多少",
            "how much memory does {s} use?",
            "How high was {s}'s lock wait",
        ]
    ),
    service=SERVICES,
    time=TIMES,
)
def test_what_a_measure_was_asks_for_its_value(asked: str, service: str, time: str) -> None:
    assert read_intent(time + asked.format(s=service), [service]).kind == "value"


@given(
    asked=st.sampled_from(
        [
            "what was the cause of the latency of {s}?",
            "what is the reason {s}'s cpu is high",
            "{s} 报了多少条错误",
            "how many errors did {s} log",
            "{s} 的延迟为什么高",
            "why is the memory of {s} so high?",
        ]
    ),
    service=SERVICES,
)
def test_a_cause_or_a_count_of_a_measure_is_no_value(asked: str, service: str) -> None:
    assert read_intent(asked.format(s=service), [service]).kind != "value"


KIND_WORDS = [
    ("网络", "network"), ("network", "network"), ("丢包", "network"), ("磁盘", "io"), ("disk", "io"),
    ("cpu", "cpu"), ("CPU", "cpu"), ("内存", "memory"), ("memory leak", "memory"), ("内存泄漏", "memory"),
]  # fmt: skip


@given(
    kind=st.sampled_from(KIND_WORDS),
    template=st.sampled_from(
        ["是不是{k}问题", "是不是{k}的问题？", "会不会是{k}导致的", "is it the {k}?", "could it be a {k} issue?",
         "{k}的问题吗", "was it {k}?", "blame the {k}"]
    ),
    filler=FILLER,
    time=TIMES,
)  # fmt: skip
def test_a_kind_of_fault_asked_about_yes_or_no_is_read(
    kind: tuple[str, str], template: str, filler: str, time: str
) -> None:
    word, family = kind
    assert read_intent(filler + time + template.format(k=word), []).kind_asked == family


@given(asked=st.sampled_from(ASKED), service=SERVICES)
def test_questions_about_services_ask_about_no_kind(asked: tuple[str, IntentId], service: str) -> None:
    template, _kind = asked
    if any(w in template.lower() for w in ("cpu", "内存", "memory")):
        return
    assert read_intent(template.format(s=service), [service]).kind_asked is None
