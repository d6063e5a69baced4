"""recompute.py against hostile match records, servers and arguments.

The contract (rubric.md §11-§12): a record that is not well formed ends in
exit 2 with exactly one line on stderr naming the file and the field or
event, no traceback, and no "same" on stdout; a record that reads but whose
figures differ ends in exit 1. In-process, any exception other than
SystemExit that escapes `main` breaks the contract: the script's own checks
must catch the record, not its last-resort guard.

Categories: json (hand-written hostile records), fuzz (random mutations),
network (a loopback platform with faults), safety (ids and --save).
"""
import collections
import copy
import json
import os
import re
import threading
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, load_script, run_script
from hostile_common import (
    DELETE, HUGE_INT, answer, drip, dumps, endless, in_turn, label, mutate, r, raw, reading_problems,
    redirect, run_main, run_saving, shown, stall, tree,
)
from hostile_util import (
    CLEAN, COUNTS, EXPLAINED, MATCHES, PAGE_1, PAGE_2, POSITION, REPORT, contract_problems, page_one,
    refusal_problems, report_of, run_offline, serve_page_from, tally, write_record,
)
from loopback import Platform


CATEGORIES = collections.OrderedDict([
    ("json", "test_json_"), ("fuzz", "test_fuzz_"), ("network", "test_net_"), ("safety", "test_safety_"),
])


@pytest.fixture(scope="module")
def rc():
    return load_script("recompute")


# ---------------------------------------------------------------- bad values by kind

TEXT_BAD = [r("1"), r("[]"), r("{}"), r("null"), r("true")]
# NaN and Infinity are refused while parsing, whatever the field: they have
# their own cases below (NON_FINITE_CASES).
NUMBER_BAD = [r('"1"'), r("[]"), r("{}"), r("null"), r("true"), r("1e400"), r("-1e400"), r(HUGE_INT),
              r("-" + HUGE_INT)]
COUNT_BAD = NUMBER_BAD + [r("-1"), r("1.5")]
POSITIVE_BAD = COUNT_BAD + [r("0")]
OBJECT_BAD = [r('"x"'), r("[]"), r("1"), r("null"), r("true")]
LIST_BAD = [r('"x"'), r("{}"), r("1"), r("null")]
SEAT_BAD = [r('"a_9"'), r('"A_1"'), r('""'), r("1"), r("null"), r("[]"), r("{}")]
ITEMS_BAD = OBJECT_BAD + [r('{"wood": 0}'), r('{"wood": -1}'), r('{"wood": 1.5}'), r('{"wood": "1"}'),
                          r('{"wood": null}'), r('{"wood": 1e400}'),
                          r('{"wood": %s}' % HUGE_INT)]
STATUS_BAD = [r('"zombie"'), r('"Active"'), r('""'), r("1"), r("null"), r("[]")]
BOOL_BAD = [r("1"), r("0"), r('"true"'), r("null"), r("[]")]
RANK_BAD = [r("0"), r("-1"), r("1.5"), r('"1"'), r("null"), r("true"), r("[]"), r("1e400"), r(HUGE_INT)]
PAGE_COUNT_BAD = [r("0"), r("-1"), r("1.5"), r('"1"'), r("null"), r("true"), r("[]"),
                  r("1e400"), r(HUGE_INT), r("10001"), r("1000000")]
KINDS = {"text": TEXT_BAD, "number": NUMBER_BAD, "count": COUNT_BAD, "positive": POSITIVE_BAD,
         "object": OBJECT_BAD, "list": LIST_BAD, "seat": SEAT_BAD, "items": ITEMS_BAD,
         "status": STATUS_BAD, "bool": BOOL_BAD, "rank": RANK_BAD}


class Case(object):
    """One hostile record: page 1 or the report of CLEAN, mutated at `path`."""

    def __init__(self, target, path, value, names=None, file=None):
        self.target, self.path, self.value = target, tuple(path), value
        if names is None:
            last = [k for k in self.path if not isinstance(k, int)][-1:]
            names = tuple(last)
        if re.search(r"NaN|Infinity", shown(value)):  # refused while parsing: a position will do
            names = [(n, POSITION) for n in names]
        self.names = tuple(names)
        self.file = file or (PAGE_1 if target == "page" else REPORT)
        self.id = "%s:%s=%s" % (target, label(self.path), shown(value)[:40])

    def record(self):
        page, report = page_one(), report_of()
        obj = page if self.target == "page" else report
        splices = mutate(obj, self.path, self.value)
        if self.target == "page":
            return [dumps(page, splices)], report
        return [page], dumps(report, splices)


def field_cases(target, specs):
    cases = []
    for path, kind, names in specs:
        values = list(KINDS[kind]) if isinstance(kind, str) else list(kind)
        for value in values:
            cases.append(Case(target, path, value, names))
    return cases


def deletions(target, paths):
    return [Case(target, path, DELETE, [[k for k in path if not isinstance(k, int)][-1], "missing"])
            for path in paths]


# ---------------------------------------------------------------- the archive (page 1)

A = ("archive",)
SC = ("scorecards",)
ARCHIVE_SPECS = [
    (A, [r('"x"'), r("[]"), r("1"), r("null"), r("true")], ["archive"]),
    (A + ("config",), "object", ["config"]),
    (A + ("config", "engine_version"), "text", ["engine_version"]),
    (A + ("config", "map"), "object", ["config.map"]),
    (A + ("config", "map", "width"), COUNT_BAD + [r("0")], ["config.map"]),
    (A + ("config", "map", "height"), COUNT_BAD + [r("0")], ["config.map"]),
    (A + ("startedAtTick",), COUNT_BAD + [r("301")], ["startedAtTick"]),
    (A + ("endedAtTick",), COUNT_BAD + [r("249")], ["endedAtTick"]),
    (A + ("agents",), LIST_BAD + [r("[]")], ["agents"]),
]
for _i, _items in ((0, ("fiber", "food", "rope", "meal")), (1, ("wood", "ore", "plank"))):
    _ag = A + ("agents", _i)
    ARCHIVE_SPECS += [
        (_ag, "object", ["agents[%d]" % _i]),
        (_ag + ("agentId",), "text", ["agents[%d].agentId" % _i]),
        (_ag + ("status",), "status", ["agents[%d].status" % _i]),
        (_ag + ("roundsAlive",), "count", ["agents[%d].roundsAlive" % _i]),
        (_ag + ("wealth",), "number", ["agents[%d].wealth" % _i]),
        (_ag + ("reputation",), "number", ["agents[%d].reputation" % _i]),
        (_ag + ("aggression",), "count", ["agents[%d].aggression" % _i]),
        (_ag + ("trained",), "object", ["agents[%d].trained" % _i]),
        (_ag + ("inventory",), "object", ["agents[%d].inventory" % _i]),
    ]
    ARCHIVE_SPECS += [(_ag + ("trained", s), "count", ["agents[%d].trained.%s" % (_i, s)])
                      for s in ("strength", "vitality", "endurance")]
    ARCHIVE_SPECS += [(_ag + ("inventory", item), "count", ["agents[%d].inventory.%s" % (_i, item)])
                      for item in _items]
ARCHIVE_SPECS += [
    (A + ("agents", 1, "agentId"), [r('"a_1"')], ["agents"]),  # an id twice
    (A + ("matchId",), [r('"../../x"'), r('"M_B0BC344F1EAC"'), r('"m_b0bc344f1eac "'), r("1"), r("null")],
     ["matchId"]),
]

# The optional blocks: absent (or null) is fine; any other non-object is not.
BLOCK_SPECS = [
    (A + ("metrics",), [r('"x"'), r("[]"), r("1"), r("true")], ["metrics"]),
    (A + ("metrics", "a_1"), "object", ["metrics.a_1"]),
    (A + ("metrics", "a_9"), [{"gather": 0}], ["a_9"]),
    (A + ("metrics", "a_1", "gather"), "count", ["metrics.a_1.gather"]),
    (A + ("metrics", "a_1", "trade"), "count", ["metrics.a_1.trade"]),
    (A + ("metrics", "a_2", "message"), "count", ["metrics.a_2.message"]),
    (A + ("metrics", "a_2", "message_private"), "count", ["metrics.a_2.message_private"]),
    (A + ("ledger",), [r('"x"'), r("[]"), r("1"), r("true")], ["ledger"]),
    (A + ("ledger", "pairs"), "list", ["ledger.pairs"]),
    (A + ("ledger", "pairs", 0), "object", ["ledger.pairs[0]"]),
    (A + ("ledger", "pairs", 0, "a"), SEAT_BAD + [r('"a_2"')], ["ledger.pairs[0]"]),
    (A + ("ledger", "pairs", 0, "b"), SEAT_BAD + [r('"a_1"')], ["ledger.pairs[0]"]),
    (A + ("ledger", "pairs", 0, "trades"), "count", ["ledger.pairs[0].trades"]),
    (A + ("ledger", "pairs", 0, "netShare"), "number", ["ledger.pairs[0].netShare"]),
    (A + ("ledger", "pairs", 0, "rep"), [r('"x"'), r("[]"), r("1"), r("true"), r('{"a_1": 5}')],
     ["ledger.pairs[0].rep"]),
    (A + ("ledger", "pairs", 0, "rep", "a_1"), "count", ["ledger.pairs[0].rep.a_1"]),
    (A + ("ledger", "pairs", 1), [{"a": "a_1", "b": "a_2", "trades": 5, "netShare": 0.535,
                                   "rep": {"a_1": 5, "a_2": 5}}], ["pairs"]),  # a pair twice
    (A + ("ledger", "commons"), OBJECT_BAD, ["ledger.commons"]),
    (A + ("ledger", "commons", "a_1"), "number", ["ledger.commons.a_1"]),
    (A + ("ledger", "commons", "a_9"), [0], ["a_9"]),
    (A + ("exploration",), [r('"x"'), r("[]"), r("1"), r("true")], ["exploration"]),
    (A + ("exploration", "agents"), "object", ["exploration.agents"]),
    (A + ("exploration", "agents", "a_1"), "object", ["exploration.agents.a_1"]),
    (A + ("exploration", "agents", "a_9"), [{"visited": 1, "coverage": 0.016}], ["a_9"]),
    (A + ("exploration", "agents", "a_1", "visited"), "count", ["exploration.agents.a_1.visited"]),
    (A + ("exploration", "agents", "a_1", "coverage"), "number", ["exploration.agents.a_1.coverage"]),
]

PAGE_SPECS = [
    (("page",), [r("2"), r("0"), r('"1"'), r("null"), r("[]")], ["page"]),
    (("pageCount",), PAGE_COUNT_BAD, ["pageCount"]),
    (("events",), LIST_BAD, ["events"]),
    (("errata",), LIST_BAD, ["errata"]),
    (("matchId",), [r('"m_000000000000"'), r('"../../x"'), r("1")], ["matchId"]),
]

ERRATUM = {"id": "E1", "title": "Gathers logged twice", "events": [3], "agents": ["a_1"],
           "affects": ["wealth"], "scoresDepend": False}
ERRATA_SPECS = [
    (("errata", 0), [r("1"), r('"E1"'), r("null"), r("[]")], ["errata[0]"]),
    (("errata", 0, "id"), "text", ["errata[0].id"]),
    (("errata", 0, "events"), "list", ["errata[0].events"]),
    (("errata", 0, "events", 0), COUNT_BAD, ["errata[0].events[0]"]),
    (("errata", 0, "agents"), [r('"a_1"'), r("1"), r("{}")], ["errata[0].agents"]),
    (("errata", 0, "affects"), [r('"wealth"'), r("1"), r("{}")], ["errata[0].affects"]),
]


class ErratumCase(Case):
    """Page 1 of CLEAN carrying one erratum, mutated."""

    def record(self):
        page, report = page_one(), report_of()
        page["errata"] = [copy.deepcopy(ERRATUM)]
        splices = mutate(page, self.path, self.value)
        return [dumps(page, splices)], report


ARCHIVE_CASES = (
    field_cases("page", ARCHIVE_SPECS) + field_cases("page", BLOCK_SPECS) + field_cases("page", PAGE_SPECS)
    + deletions("page", [A + ("config",), A + ("config", "engine_version"), A + ("config", "map"),
                         A + ("config", "map", "width"), A + ("config", "map", "height"),
                         A + ("startedAtTick",), A + ("endedAtTick",), A + ("agents",)]
                + [A + ("agents", 0, k) for k in ("agentId", "status", "roundsAlive", "wealth", "reputation",
                                                  "aggression", "trained", "inventory")]
                + [A + ("agents", 0, "trained", k) for k in ("strength", "vitality", "endurance")]
                + [A + ("ledger", "pairs"), A + ("ledger", "pairs", 0, "a"), A + ("ledger", "pairs", 0, "trades"),
                   A + ("ledger", "pairs", 0, "netShare"), A + ("exploration", "agents"),
                   A + ("exploration", "agents", "a_1", "visited"), A + ("exploration", "agents", "a_1", "coverage")]
                + [("page",), ("pageCount",), ("errata",), ("events",)])
    + [ErratumCase("page", c.path, c.value, c.names) for c in field_cases("page", ERRATA_SPECS)]
    + [ErratumCase("page", ("errata", 0, k), DELETE, ["errata[0].%s" % k, "missing"]) for k in ("id", "events")]
)
# A page 1 without its archive: the message names the archive.
ARCHIVE_CASES.append(Case("page", ("archive",), DELETE, ["archive"]))


NON_FINITE_CASES = [
    Case(target, path, r(token))
    for target, path in (("page", A + ("agents", 0, "wealth")), ("page", A + ("agents", 1, "roundsAlive")),
                         ("page", ("events", 3, "tick")), ("page", ("events", 2, "gathered")),
                         ("page", A + ("ledger", "pairs", 0, "netShare")),
                         ("report", SC + (0, "fitnessIndex")), ("report", SC + (1, "dimensions", "economy")))
    for token in ("NaN", "Infinity", "-Infinity")
]


@pytest.mark.parametrize("case", NON_FINITE_CASES, ids=lambda c: c.id)
def test_json_non_finite_constant_refused(rc, case):
    """NaN, Infinity, -Infinity: refused naming the file and the field (or its place in the text)."""
    tally("json")
    pages, report = case.record()
    problems = refusal_problems(run_offline(rc, pages, report), case.file, case.names)
    assert not problems, problems


# Keys are record text too: one that holds a line break must not break the line.
NEWLINE_KEY_CASES = [
    Case("page", A + ("metrics", "a_1\nb"), {"gather": 0}, ["metrics"]),
    Case("page", A + ("agents", 0, "inventory", "wood\nstone"), -1, ["agents[0].inventory"]),
    Case("page", A + ("exploration", "agents", "a_1\nb"), {"visited": 1, "coverage": 0.016}, ["exploration"]),
    Case("page", A + ("ledger", "commons", "a_1\nb"), 0, ["ledger.commons"]),
    Case("page", ("events", 20, "give\n"), 1, ["events[20]"]),
]
for _case in NEWLINE_KEY_CASES:
    _case.id = "newline in a key:" + label(_case.path[:-1])
# A key with a line break on a known event adds nothing a rule reads: that one reads.
NEWLINE_KEY_CASES.pop()


@pytest.mark.parametrize("case", NEWLINE_KEY_CASES, ids=lambda c: c.id)
def test_json_key_with_a_line_break_stays_one_line(rc, case):
    tally("json")
    pages, report = case.record()
    problems = refusal_problems(run_offline(rc, pages, report), case.file, case.names)
    assert not problems, problems


def test_json_erratum_baseline_reads(rc):
    """The erratum the cases above break reads when left whole."""
    tally("json")
    page, report = page_one(), report_of()
    page["errata"] = [ERRATUM]
    o = run_offline(rc, [page], report)
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert "erratum E1: Gathers logged twice" in o.out


@pytest.mark.parametrize("value", [[1], {"x": 1}, "yes", 1, None, [["nested"]]], ids=json.dumps)
def test_json_erratum_scores_depend_of_any_type(rc, value):
    """scoresDepend is true or false (records.md): any other JSON value is refused, named."""
    tally("json")
    page, report = page_one(), report_of()
    page["errata"] = [dict(ERRATUM, scoresDepend=value)]
    for options in ((), ("--json",)):
        o = run_offline(rc, [page], report, options=options)
        assert o.code == 2 and "scoresDepend" in o.err, (options, o.code, o.err)
        assert not contract_problems(o), (options, contract_problems(o))


# ---------------------------------------------------------------- events

LAST_TICK = 300  # endedAtTick of CLEAN; its last event is seq 95 at tick 300
SAMPLES = collections.OrderedDict([
    ("agent_spawned", {"agentId": "a_1", "region": "r0_0"}),
    ("agent_registered", {"agentId": "a_2", "region": "r0_1"}),
    ("move", {"agentId": "a_1", "from": "r3_6", "to": "r3_5"}),
    ("gather", {"agentId": "a_1", "region": "r3_6", "resource": "wood", "gathered": 1}),
    ("craft", {"agentId": "a_1", "item": "plank", "count": 1}),
    ("build", {"agentId": "a_1", "structure": "shelter", "structureId": "s_1", "region": "r3_6"}),
    ("repair", {"agentId": "a_1", "structureId": "s_1"}),
    ("deposit", {"agentId": "a_1", "structureId": "s_1", "items": {"wood": 1}}),
    ("withdraw", {"agentId": "a_1", "structureId": "s_1", "items": {"wood": 1}}),
    ("train", {"agentId": "a_1", "stat": "strength"}),
    ("attack", {"agentId": "a_1", "target": "a_2"}),
    ("raid", {"agentId": "a_1", "target": "a_2", "structureId": "s_2", "taken": {"wood": 1}}),
    ("trade_completed", {"agentId": "a_1", "from": "a_1", "to": "a_2", "give": {"wood": 1}, "receive": {"ore": 1}}),
    ("trade_fulfilled", {"agentId": "a_2", "from": "a_1", "to": "a_2"}),
    ("agent_dormant", {"agentId": "a_1"}),
    ("agent_awake", {"agentId": "a_1"}),
    ("agent_died", {"agentId": "a_1"}),
    ("message", {"agentId": "a_1"}),
    ("rest", {"agentId": "a_1"}),
    ("region_collapsed", {"region": "r3_6", "resource": "wood"}),
])
# records.md §1.1, the event table: each field a rule reads, and its kind.
EVENT_KINDS = {
    "agentId": "seat", "region": "text", "resource": "text", "gathered": "positive", "item": "text",
    "count": "count", "structure": "text", "structureId": "text", "items": "items", "stat": "text",
    "target": "seat", "taken": "items", "give": "items", "receive": "items",
}
TRADE_SEATS = {"from", "to"}
# Fields of the event table that no rule reads: §11 checks only the fields a rule reads.
UNREAD = {("move", "from"), ("craft", "item"), ("craft", "count"), ("build", "region"), ("train", "stat")}


def sample_event(kind, **changes):
    event = dict({"seq": 96, "tick": LAST_TICK, "type": kind}, **copy.deepcopy(SAMPLES[kind]))
    event.update(changes)
    return event


class EventCase(Case):
    """CLEAN with one more event (seq 96) of a known type, mutated."""

    def __init__(self, kind, key, value, names=None, event=None):
        self.kind, self.event = kind, event or sample_event(kind)
        Case.__init__(self, "page", ("events", 95, key), value, names or [("seq 96", "events[95]"), key])
        self.id = "event:%s.%s=%s" % (kind, key, shown(value)[:40])

    def record(self):
        page, report = page_one(), report_of()
        page["events"].append(copy.deepcopy(self.event))
        splices = mutate(page, self.path, self.value)
        return [dumps(page, splices)], report


def event_cases():
    cases = []
    for kind, fields in SAMPLES.items():
        for key in fields:
            if (kind, key) in UNREAD:
                continue
            if key in TRADE_SEATS and kind.startswith("trade"):
                form = "seat"
            elif key in ("from", "to"):
                form = "text"
            else:
                form = EVENT_KINDS[key]
            cases += [EventCase(kind, key, value) for value in KINDS[form]]
            cases.append(EventCase(kind, key, DELETE, ["seq 96", key, "missing"]))
    for key, values in (("seq", [r("95"), r("97"), r("0"), r("-1"), r('"96"'), r("96.5"), r("null"), r("[]"),
                                 r("true"), r(HUGE_INT)]),
                        ("tick", [r("301"), r("299"), r("-1"), r('"300"'), r("300.5"), r("null"), r("[]"),
                                  r("true"), r("1e400"), r(HUGE_INT)]),
                        ("type", [r("1"), r("null"), r("[]"), r("{}")])):
        cases += [EventCase("rest", key, value, [key]) for value in values]
        cases.append(EventCase("rest", key, DELETE, [key]))
    # trades: from == to, and agentId on the wrong side
    for kind, event, names in (
            ("trade_completed", sample_event("trade_completed", to="a_1"), ["seq 96"]),
            ("trade_completed", sample_event("trade_completed", agentId="a_2"), ["seq 96", "agentId"]),
            ("trade_fulfilled", sample_event("trade_fulfilled", to="a_1", agentId="a_1"), ["seq 96"]),
            ("trade_fulfilled", sample_event("trade_fulfilled", agentId="a_1"), ["seq 96", "agentId"])):
        case = EventCase(kind, "type", kind, names, event)
        case.id = "event:%s=%s" % (kind, json.dumps({k: event[k] for k in ("agentId", "from", "to")}))
        cases.append(case)
    return cases


EVENT_CASES = event_cases()


@pytest.mark.parametrize("kind,key", sorted(UNREAD))
@pytest.mark.parametrize("value", [r("null"), r("[]"), r('"x"'), r("-1"), r("1e400")], ids=["null", "list", "text", "neg", "inf"])
def test_json_unread_event_field_reads_clean(rc, kind, key, value):
    tally("json")
    outcome = run_offline(rc, *EventCase(kind, key, value).record())
    untouched = run_offline(rc, *EventCase(kind, "type", kind).record())
    assert (outcome.err, outcome.exc) == ("", None), outcome
    assert (outcome.code, outcome.out) == (untouched.code, untouched.out)


@pytest.mark.parametrize("kind", list(SAMPLES) + ["gift", "empty raid"])
def test_json_event_sample_reads(rc, kind):
    """Each sample event the cases above break reads when left whole: exit 1 where it moves a
    published figure (a counter, coverage, a trade), else 0."""
    tally("json")
    if kind == "gift":
        event = sample_event("trade_completed", give={})
    elif kind == "empty raid":
        event = sample_event("raid", taken={})
    else:
        event = sample_event(kind)
    page = page_one()
    page["events"].append(event)
    o = run_offline(rc, [page], report_of())
    code = 0 if kind in ("deposit", "withdraw", "agent_died", "message", "rest", "region_collapsed") else 1
    assert not reading_problems(o, (code,)), reading_problems(o, (code,))


def log_case(name, change, names):
    return pytest.param(change, names, id=name)


def _swap_seq(events):
    events[10]["seq"], events[11]["seq"] = events[11]["seq"], events[10]["seq"]


def _swap_events(events):
    events[10], events[11] = events[11], events[10]


def _set(i, key, value):
    def change(events):
        events[i][key] = value
    return change


def _replace(i, value):
    def change(events):
        events[i] = value
    return change


def _trade_to_self(events):
    trade = [e for e in events if e["type"] == "trade_completed"][0]
    trade["to"] = trade["from"]


def _fulfilled_to_self(events):
    trade = [e for e in events if e["type"] == "trade_fulfilled"][0]
    trade["from"] = trade["to"]


def _decrease_tick(events):
    events[20]["tick"] = events[19]["tick"] - 1


LOG_CASES = [
    log_case("seq out of order", _swap_seq, ["seq"]),
    log_case("events swapped", _swap_events, ["seq"]),
    log_case("duplicate seq", _set(11, "seq", 11), ["events[11]", "seq"]),
    log_case("seq gap", lambda ev: ev.pop(10), ["events[10]", "seq"]),
    log_case("seq from 0", lambda ev: [e.update(seq=e["seq"] - 1) for e in ev], ["events[0]", "seq"]),
    log_case("tick before start", _set(0, "tick", 249), ["events[0]", "tick"]),
    log_case("tick after end", _set(94, "tick", 301), ["events[94]", "tick"]),
    log_case("tick decreases", _decrease_tick, ["events[20]", "tick"]),
    log_case("event is a list", _replace(5, []), ["events[5]"]),
    log_case("event is a number", _replace(5, 7), ["events[5]"]),
    log_case("event is null", _replace(5, None), ["events[5]"]),
    log_case("event is a string", _replace(5, "gather"), ["events[5]"]),
    log_case("gather by no seat", _set(2, "agentId", "a_9"), ["events[2]", "agentId"]),
    log_case("trade to itself", _trade_to_self, ["seq"]),
    log_case("fulfilled from itself", _fulfilled_to_self, ["seq"]),
]


@pytest.mark.parametrize("change,names", LOG_CASES)
def test_json_event_log_refused(rc, change, names):
    tally("json")
    page = page_one()
    change(page["events"])
    problems = refusal_problems(run_offline(rc, [page], report_of()), PAGE_1, names)
    assert not problems, problems


UNKNOWN_EVENTS = [
    {"type": "season_changed", "season": "winter"},
    {"type": "season_changed", "agentId": [1], "from": {}, "to": None, "items": "x", "target": 5},
    {"type": "Gather", "agentId": "a_9", "gathered": "many", "region": 3},
    {"type": "trade_proposed", "agentId": "a_1", "from": "a_1", "to": "a_1", "give": {"wood": -1}},
    {"type": "", "agentId": None},
    {"type": "look", "agentId": "a_1", "region": "r3_6"},
]


@pytest.mark.parametrize("event", UNKNOWN_EVENTS, ids=lambda e: json.dumps(e)[:50])
def test_json_unknown_event_type_reads_clean(rc, event):
    """A type not in records.md is allowed and read by no rule: still exit 0."""
    tally("json")
    page = page_one()
    page["events"].append(dict(event, seq=96, tick=LAST_TICK))
    page["events"].insert(0, dict(event, seq=0, tick=250))
    for i, e in enumerate(page["events"], 1):
        e["seq"] = i
    o = run_offline(rc, [page], report_of())
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert "figures same 34 of 34; checks agree 32 of 32" in o.out


# ---------------------------------------------------------------- whole pages

def _truncated(fraction):
    def make():
        text = dumps(page_one())
        return text[:int(len(text) * fraction)]
    return make


WHOLE_FILES = [
    ("truncated at half", _truncated(0.5)),
    ("truncated at 99%", _truncated(0.99)),
    ("one byte", lambda: "{"),
    ("empty", lambda: ""),
    ("a list", lambda: "[" + dumps(page_one()) + "]"),
    ("an empty list", lambda: "[]"),
    ("a string", lambda: '"page 1"'),
    ("a number", lambda: "1"),
    ("null", lambda: "null"),
    ("NaN", lambda: "NaN"),
    ("not UTF-8", lambda: b"\xff\xfe{\x00}\x00"),
    ("UTF-8 BOM", lambda: b"\xef\xbb\xbf" + dumps(page_one()).encode()),
    ("HTML", lambda: "<!doctype html><html><body>Service unavailable</body></html>"),
    ("deep nesting", lambda: "[" * 100000 + "]" * 100000),
    ("two documents", lambda: dumps(page_one()) + dumps(page_one())),
]


@pytest.mark.parametrize("name,make", WHOLE_FILES, ids=[w[0] for w in WHOLE_FILES])
def test_json_whole_page_refused(rc, name, make):
    tally("json")
    problems = refusal_problems(run_offline(rc, [make()], report_of()), PAGE_1)
    assert not problems, problems


@pytest.mark.parametrize("name,make", WHOLE_FILES, ids=[w[0] for w in WHOLE_FILES])
def test_json_whole_report_refused(rc, name, make):
    tally("json")
    page_text = make()
    if name in ("truncated at half", "truncated at 99%", "a list", "UTF-8 BOM", "two documents"):
        whole = dumps(report_of())
        page_text = {"truncated at half": whole[:len(whole) // 2], "truncated at 99%": whole[:-3],
                     "a list": "[" + whole + "]", "UTF-8 BOM": b"\xef\xbb\xbf" + whole.encode(),
                     "two documents": whole + whole}[name]
    problems = refusal_problems(run_offline(rc, [page_one()], page_text), REPORT)
    assert not problems, problems


# ---------------------------------------------------------------- several pages

SPLIT = 50


def two_pages():
    """CLEAN's log over two pages: events 1-50, then 51-95."""
    first = page_one()
    second = {"matchId": CLEAN, "page": 2, "pageCount": 2, "errata": [], "events": first["events"][SPLIT:]}
    first["events"], first["pageCount"] = first["events"][:SPLIT], 2
    return first, second


def test_json_two_pages_baseline_reads(rc):
    tally("json")
    o = run_offline(rc, list(two_pages()), report_of())
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert "figures same 34 of 34; checks agree 32 of 32" in o.out


def _second(change):
    def make():
        first, second = two_pages()
        change(first, second)
        return [first, second]
    return make


def _without(key):
    def change(first, second):
        del second[key]
    return change


def _with(key, value):
    def change(first, second):
        second[key] = copy.deepcopy(value)
    return change


PAGE_SET_CASES = [
    ("page 2 says pageCount 3", _second(_with("pageCount", 3)), PAGE_2, ["pageCount"]),
    ("page 2 says pageCount 1", _second(_with("pageCount", 1)), PAGE_2, ["pageCount"]),
    ("page 2 says page 1", _second(_with("page", 1)), PAGE_2, ["page"]),
    ("page 2 says page 3", _second(_with("page", 3)), PAGE_2, ["page"]),
    ("page 2 without page", _second(_without("page")), PAGE_2, ["page", "missing"]),
    ("page 2 without pageCount", _second(_without("pageCount")), PAGE_2, ["pageCount", "missing"]),
    ("page 2 without events", _second(_without("events")), PAGE_2, ["events"]),
    ("page 2 without errata", _second(_without("errata")), PAGE_2, ["errata"]),
    ("page 2 carries the archive", _second(lambda f, s: s.update(archive=f["archive"])), PAGE_2, ["archive"]),
    ("page 2 has other errata", _second(_with("errata", [ERRATUM])), PAGE_2, ["errata"]),
    ("page 2 names another match", _second(_with("matchId", "m_000000000000")), PAGE_2, ["matchId"]),
    ("page 2 repeats page 1's events", _second(lambda f, s: s.update(events=copy.deepcopy(f["events"]))),
     PAGE_2, ["seq"]),
    ("page 2 repeats page 1's last event",
     _second(lambda f, s: s.update(events=[copy.deepcopy(f["events"][-1])] + s["events"])), PAGE_2, ["seq"]),
    ("page 2 skips an event", _second(lambda f, s: s["events"].pop(0)), PAGE_2, ["seq"]),
    ("page 2 ticks go back", _second(lambda f, s: s["events"][0].update(tick=f["events"][-1]["tick"] - 1)),
     PAGE_2, ["tick"]),
    ("page 2 missing", lambda: [two_pages()[0], None], PAGE_2, []),
    ("page 2 a list", lambda: [two_pages()[0], "[]"], PAGE_2, []),
    ("page 2 truncated", lambda: [two_pages()[0], dumps(two_pages()[1])[:100]], PAGE_2, []),
    ("page 1 says pageCount 3, two pages", _second(lambda f, s: f.update(pageCount=3)), PAGE_2, ["pageCount"]),
]


@pytest.mark.parametrize("name,make,file,names", PAGE_SET_CASES, ids=[c[0] for c in PAGE_SET_CASES])
def test_json_page_set_refused(rc, name, make, file, names):
    tally("json")
    problems = refusal_problems(run_offline(rc, make(), report_of()), file, names)
    assert not problems, problems


# ---------------------------------------------------------------- the report

REPORT_SPECS = [
    (("rubricVersion",), TEXT_BAD + [r('"9.9"'), r('"2.5"'), r('""'), r("2.4"), r('"2.4 "'), r('"v2.4"'),
                                     r('"2.40"')], ["rubricVersion"]),
    (("rubricReason",), [r("1"), r("[]"), r("{}"), r("true")], ["rubricReason"]),
    (("matchId",), [r('"m_000000000000"'), r('"../../x"'), r("1"), r("[]")], ["matchId"]),
    (SC, LIST_BAD + [r("[]")], ["scorecards"]),
]
for _i in (0, 1):
    _c = SC + (_i,)
    REPORT_SPECS += [
        (_c, "object", ["scorecards"]),
        (_c + ("agentId",), SEAT_BAD + [r('"a_%d"' % (2 - _i))], ["scorecards"]),
        (_c + ("rank",), "rank", ["scorecards[%d].rank" % _i]),
        (_c + ("wealth",), "number", ["scorecards[%d].wealth" % _i]),
        (_c + ("fitnessIndex",), "number", ["scorecards[%d].fitnessIndex" % _i]),
        (_c + ("grade",), "text", ["scorecards[%d].grade" % _i]),
        (_c + ("status",), "text", ["scorecards[%d].status" % _i]),
        (_c + ("dimensions",), "object", ["scorecards[%d].dimensions" % _i]),
        (_c + ("achievements",), "list", ["scorecards[%d].achievements" % _i]),
        (_c + ("achievements", 0), "text", ["scorecards[%d].achievements[0]" % _i]),
        (_c + ("raw",), "object", ["scorecards[%d].raw" % _i]),
        (_c + ("raw", "circularEstimated"), "bool", ["scorecards[%d].raw.circularEstimated" % _i]),
        (_c + ("raw", "messagesSent"), [v for v in COUNT_BAD if v != r("null")],  # null: not given
         ["scorecards[%d].raw.messagesSent" % _i]),
        (_c + ("notes",), [r('"x"'), r("{}"), r("1"), r("null")], ["scorecards[%d].notes" % _i]),
    ]
    REPORT_SPECS += [(_c + ("dimensions", d), "number", ["scorecards[%d].dimensions.%s" % (_i, d)])
                     for d in ("survival", "economy", "social", "adaptation", "competitiveness")]
    REPORT_SPECS += [(_c + ("raw", k), "number", ["scorecards[%d].raw.%s" % (_i, k)])
                     for k in ("mapCoverage", "indexWealth", "indexReputation", "circularReputation")]

REPORT_CASES = field_cases("report", REPORT_SPECS) + deletions(
    "report", [("rubricVersion",), ("scorecards",)] + [SC + (0, k) for k in (
        "rank", "wealth", "status", "fitnessIndex", "grade", "dimensions", "achievements")]
    + [SC + (0, "dimensions", d) for d in ("survival", "competitiveness")])
for _case in REPORT_CASES:  # a missing agentId shows as seats that are not the roster
    if _case.path[-1:] == ("agentId",):
        _case.names = ("scorecards",)


FIELD_CASES = ARCHIVE_CASES + EVENT_CASES + REPORT_CASES


@pytest.mark.parametrize("case", FIELD_CASES, ids=lambda c: c.id)
def test_json_field_refused(rc, case):
    """Each field of the archive, an event or the report, broken: refused by name."""
    tally("json")
    pages, report = case.record()
    problems = refusal_problems(run_offline(rc, pages, report), case.file, case.names)
    assert not problems, problems


def _cards(change):
    def make():
        report = report_of()
        change(report["scorecards"])
        return report
    return make


SEAT_CASES = [
    ("reordered", _cards(lambda c: c.reverse())),
    ("one missing", _cards(lambda c: c.pop())),
    ("first missing", _cards(lambda c: c.pop(0))),
    ("one extra", _cards(lambda c: c.append(dict(copy.deepcopy(c[0]), agentId="a_3")))),
    ("a seat twice", _cards(lambda c: c.__setitem__(1, copy.deepcopy(c[0])))),
    ("none", _cards(lambda c: c.clear())),
    ("agentId missing", _cards(lambda c: c[0].pop("agentId"))),
]


@pytest.mark.parametrize("name,make", SEAT_CASES, ids=[c[0] for c in SEAT_CASES])
def test_json_report_seats_not_the_roster_refused(rc, name, make):
    tally("json")
    problems = refusal_problems(run_offline(rc, [page_one()], make()), REPORT, ["scorecards"])
    assert not problems, problems


def test_json_report_under_another_rubric_than_asked_refused(rc):
    """--rubric 2.2 reads report/2.2.json; one that names 2.3 is refused."""
    tally("json")
    report = report_of(name="report/2.2.json")
    report["rubricVersion"] = "2.3"
    o = run_offline(rc, [page_one()], report_of(), extra={"report/2.2.json": report}, options=("--rubric", "2.2"))
    problems = refusal_problems(o, os.path.join("report", "2.2.json"), ["rubricVersion"])
    assert not problems, problems


# ---------------------------------------------------------------- exit 1: reads, differs

def _page_change(path, value):
    def make():
        page = page_one()
        mutate(page, path, value)
        return [page], report_of()
    return make


def _report_change(path, value):
    def make():
        report = report_of()
        mutate(report, path, value)
        return [page_one()], report
    return make


DIFFERS_CASES = [
    ("metrics gather off by one", _page_change(A + ("metrics", "a_1", "gather"), 28),
     "check FAILS: metrics a_1.gather"),
    ("ledger trades off by one", _page_change(A + ("ledger", "pairs", 0, "trades"), 4),
     "check FAILS: ledger a_1~a_2.trades"),
    ("exploration visited off", _page_change(A + ("exploration", "agents", "a_2", "visited"), 7),
     "check FAILS: exploration a_2.visited"),
    ("exploration leaves a seat out", _page_change(A + ("exploration", "agents", "a_2"), DELETE),
     "check FAILS: exploration a_2: archive says absent, events give present"),
    ("report status", _report_change(SC + (1, "status"), "dead"),
     "DIFFERS a_2 status: published dead, recomputed active"),
    ("report wealth off by a cent", _report_change(SC + (0, "wealth"), 34.51), "DIFFERS"),
    ("report rank swapped", _report_change(SC + (0, "rank"), 1), "DIFFERS"),
    ("report grade", _report_change(SC + (1, "grade"), "A"), "DIFFERS"),
    ("report achievements reordered", _report_change(SC + (0, "achievements"), []), "DIFFERS"),
    ("archive wealth", _page_change(A + ("agents", 1, "wealth"), 58.01), "DIFFERS"),
    ("reputation negative", _page_change(A + ("agents", 0, "reputation"), -3), "DIFFERS"),
]


@pytest.mark.parametrize("name,make,shows", DIFFERS_CASES, ids=[c[0] for c in DIFFERS_CASES])
def test_json_figure_differs_exits_1(rc, name, make, shows):
    tally("json")
    pages, report = make()
    o = run_offline(rc, pages, report)
    assert not reading_problems(o, (1,)), reading_problems(o, (1,))
    assert shows in o.out
    assert o.err == ""


# Finite numbers of extreme size are well formed (records.md: JSON numbers
# read as doubles): they may be refused with one clean line, or read.
HUGE_FINITE = "1" + "0" * 307   # 1e307 written as an integer
LARGE_CASES = [
    (A + ("agents", 0, "wealth"), 1e308), (A + ("agents", 0, "wealth"), -1e308),
    (A + ("agents", 0, "reputation"), 1e308), (A + ("agents", 0, "reputation"), -1e308),
    (A + ("agents", 0, "roundsAlive"), r(HUGE_FINITE)), (A + ("agents", 0, "aggression"), r(HUGE_FINITE)),
    (A + ("agents", 0, "trained", "strength"), r(HUGE_FINITE)),
    (A + ("agents", 0, "inventory", "fiber"), r(HUGE_FINITE)),
    (A + ("agents", 0, "inventory", "fiber"), r("9007199254740993")),
    (A + ("endedAtTick",), r(HUGE_FINITE)), (A + ("config", "map", "width"), r(HUGE_FINITE)),
    (A + ("ledger", "pairs", 0, "netShare"), 1e308),
    (A + ("ledger", "commons", "a_1"), 1e308),
    (A + ("exploration", "agents", "a_1", "coverage"), -1e308),
    (A + ("metrics", "a_1", "message"), r(HUGE_FINITE)),
    (("events", 2, "gathered"), r(HUGE_FINITE)),
    (A + ("agents", 0, "wealth"), 5e-324),
]
REPORT_LARGE = [
    (SC + (0, "wealth"), 1e308), (SC + (0, "fitnessIndex"), -1e308), (SC + (0, "rank"), r(HUGE_FINITE)),
    (SC + (0, "dimensions", "economy"), 1e308), (SC + (0, "raw", "messagesSent"), r(HUGE_FINITE)),
    (SC + (0, "raw", "indexWealth"), 1e308),
]


EXTREME = [("page",) + c for c in LARGE_CASES] + [("report",) + c for c in REPORT_LARGE]


@pytest.mark.parametrize("target,path,value", EXTREME,
                         ids=["%s:%s=%s" % (t, label(p), shown(v)[:12]) for t, p, v in EXTREME])
def test_json_extreme_finite_numbers_no_crash(rc, target, path, value):
    tally("json")
    pages, report = Case(target, path, value).record()
    o = run_offline(rc, pages, report)
    # A finite double reads (its figures differ); an integer past 2**53 is refused.
    assert o.code == (2 if isinstance(value, str) else 1), (o.code, o.err)
    assert not contract_problems(o), contract_problems(o)


@pytest.mark.parametrize("script", ["recompute", "recompute_study"])
@pytest.mark.parametrize("pad", range(8))
def test_an_integer_of_16_digits_is_found_at_each_of_the_four_alignments(script, pad):
    """The JSON guard reads every fourth byte first: 16 digits wherever they stand hold four of
    those in a row, so 2**53 + 1 is refused at every offset; 2**53 and 10**15 are read as integers."""
    module = load_script(script)
    for value in (2**53, 10**15):
        doc = module.parse_json(('{"x": [%s%d]}' % (" " * pad, value)).encode(), "p.json")
        assert doc == {"x": [value]} and type(doc["x"][0]) is int
    with pytest.raises(module.Unreadable) as refused:
        module.parse_json(('{"x": [%s%d]}' % (" " * pad, 2**53 + 1)).encode(), "p.json")
    assert str(refused.value) == "p.json: x[0]: not a finite number, nor an integer within 2**53"


# ---------------------------------------------------------------- through the CLI

CLI_CASES = [
    ("truncated page", 2, lambda: ([dumps(page_one())[:3000]], report_of())),
    ("NaN wealth", 2, lambda: Case("page", A + ("agents", 0, "wealth"), r("NaN")).record()),
    ("400-digit wealth", 2, lambda: Case("page", A + ("agents", 0, "wealth"), r(HUGE_INT)).record()),
    ("wealth 1e308", 1, lambda: Case("page", A + ("agents", 0, "wealth"), 1e308).record()),
    ("tick decreases", 2, lambda: ([dict(page_one(), events=[dict(e, tick=300 - i if i > 3 else e["tick"])
                                                          for i, e in enumerate(page_one()["events"])])],
                                report_of())),
    ("unknown rubric", 2, lambda: Case("report", ("rubricVersion",), "9.9").record()),
]


@pytest.mark.parametrize("name,code,make", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_json_cli_one_line_never_a_traceback(tmp_path, name, code, make):
    """The same records through `python3 recompute.py FOLDER`."""
    tally("json")
    pages, report = make()
    folder = write_record(tmp_path / "rec", pages, report)
    out = run_script("recompute.py", folder)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == code, out.returncode
    if code == 1:
        return
    lines = out.stderr.splitlines()
    assert len(lines) == 1, lines
    assert PAGE_1 in lines[0] or REPORT in lines[0], lines[0]
    assert not re.search(r"\bsame\b", out.stdout)


# ---------------------------------------------------------------- fuzz

def all_paths(obj, prefix=()):
    out = []
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, list):
        items = enumerate(obj)
    else:
        return out
    for key, value in items:
        out.append(prefix + (key,))
        out.extend(all_paths(value, prefix + (key,)))
    return out


def kind_of(value):
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}[type(value)]


_scalars = {
    "null": st.none(), "bool": st.booleans(),
    "int": st.one_of(st.integers(-3, 400), st.integers()),
    "float": st.floats(allow_nan=False, allow_infinity=False),
    "str": st.one_of(st.sampled_from(["a_1", "a_2", "a_9", "2.4", "gather", "shelter", "", "../x"]),
                     st.text(max_size=8)),
}
_json = st.recursive(st.one_of(*_scalars.values()),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.sampled_from(["a_1", "wood", "seq", "x"]), inner,
                                                             max_size=3)),
                     max_leaves=6)
_kinds = dict(_scalars, list=st.lists(_json, max_size=3),
              dict=st.dictionaries(st.sampled_from(["a_1", "a_2", "wood", "type", "x"]), _json, max_size=3))
SPECIALS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", HUGE_INT, "-" + HUGE_INT, HUGE_FINITE,
            "1e308", "-1e308", "-0.0", "0", "-1", "1.5", "4294967297"]


@st.composite
def mutation(draw, paths, original):
    path = draw(st.sampled_from(paths))
    value = walk_value(original, path)
    op = draw(st.sampled_from(["replace", "replace", "delete", "special"]))
    if op == "delete":
        return path, DELETE
    if op == "special":
        return path, r(draw(st.sampled_from(SPECIALS)))
    other = draw(st.sampled_from(sorted(set(_kinds) - {kind_of(value)})))
    return path, draw(_kinds[other])


def walk_value(obj, path):
    for key in path:
        obj = obj[key]
    return obj


PAGE_PATHS = all_paths(page_one())
REPORT_PATHS = all_paths(report_of())
FUZZ = settings(max_examples=250, derandomize=True, deadline=None, database=None, print_blob=False,
                phases=(Phase.explicit, Phase.generate, Phase.shrink),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fuzz_check(rc, target, change):
    tally("fuzz")
    page, report = page_one(), report_of()
    obj = page if target == "page" else report
    path, value = change
    splices = mutate(obj, path, value)
    pages = [dumps(page, splices) if target == "page" else page]
    o = run_offline(rc, pages, dumps(report, splices) if target == "report" else report)
    problems = contract_problems(o)
    assert not problems, (label(path), shown(value), problems)


@FUZZ
@given(change=mutation(PAGE_PATHS, page_one()))
def test_fuzz_page_one(rc, change):
    fuzz_check(rc, "page", change)


@FUZZ
@given(change=mutation(REPORT_PATHS, report_of()))
def test_fuzz_report(rc, change):
    fuzz_check(rc, "report", change)


@settings(FUZZ, max_examples=60)
@given(data=st.data())
def test_fuzz_page_one_with_erratum(rc, data):
    """EXPLAINED: 5 seats, structures, deposits, an erratum."""
    page, report = page_one(EXPLAINED), report_of(EXPLAINED)
    paths = [p for p in all_paths(page) if p[0] != "events" or len(p) == 1 or p[1] % 40 == 0 or p[1] < 8]
    change = data.draw(mutation(paths, page))
    tally("fuzz")
    splices = mutate(page, change[0], change[1])
    o = run_offline(rc, [dumps(page, splices)], report)
    problems = contract_problems(o)
    assert not problems, (label(change[0]), shown(change[1]), problems)


# ---------------------------------------------------------------- network

EXPORT = "/api/matches/%s/export" % CLEAN
PAGE_ONE_URL = ("export page 1", "export?page=1")  # the page, by name or by its URL
REPORT_PATH = "/api/matches/%s/report" % CLEAN


@pytest.fixture
def stop():
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def fast(rc, monkeypatch):
    """Short pauses and timeouts, so the network cases run quickly."""
    monkeypatch.setattr(rc, "RETRY_PAUSE_SECONDS", 0.05)
    monkeypatch.setenv("DAISHI_TIMEOUT", "1")
    return rc


def fetch(rc, platform, *args):
    return run_main(rc, ["--base", platform.url] + list(args) + [CLEAN])


def export_requests(platform, match=CLEAN):
    return [p for p in platform.requests if p.startswith("/api/matches/%s/export" % match)]


def test_net_404_unknown_match(fast):
    tally("network")
    with Platform(FIXTURES) as p:
        o = run_main(fast, ["--base", p.url, "m_ae46e7653d21"])
    assert not refusal_problems(o, PAGE_ONE_URL, ["404"]), refusal_problems(o, PAGE_ONE_URL, ["404"])


def test_net_409_prints_the_reason(fast):
    tally("network")
    with Platform(FIXTURES) as p:
        o = run_main(fast, ["--base", p.url, "m_4a5ad60e37d4"])
    names = ["409", "The match is still playing: round 212 of 400."]
    assert not refusal_problems(o, PAGE_ONE_URL, names), refusal_problems(o, PAGE_ONE_URL, names)


@pytest.mark.parametrize("reason", ["line one\nline two", "carriage\rreturn", "x" * 5000, "tab\tand\x1b[2Jescape"])
def test_net_409_reason_of_any_text_stays_one_line(fast, reason):
    tally("network")
    with Platform(FIXTURES, faults={EXPORT: answer(409, json.dumps({"reason": reason}))}) as p:
        o = fetch(fast, p)
    assert not refusal_problems(o, PAGE_ONE_URL, ["409"]), refusal_problems(o, PAGE_ONE_URL, ["409"])


def test_net_500_then_200_succeeds(fast):
    tally("network")
    fault = in_turn(answer(500, '{"reason": "busy"}'), serve_page_from(CLEAN))
    with Platform(FIXTURES, faults={EXPORT: fault}) as p:
        o = fetch(fast, p)
        asked = export_requests(p)
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert len(asked) == 2


@pytest.mark.parametrize("status", [500, 502, 503])
def test_net_5xx_twice_exits_2(fast, status):
    tally("network")
    with Platform(FIXTURES, faults={EXPORT: answer(status, '{"reason": "down"}')}) as p:
        o = fetch(fast, p)
        asked = export_requests(p)
    assert not refusal_problems(o, PAGE_ONE_URL, [str(status)]), refusal_problems(o, PAGE_ONE_URL, [str(status)])
    assert len(asked) == 2  # one retry after a 5xx


def test_net_report_500_twice_exits_2(fast):
    tally("network")
    with Platform(FIXTURES, faults={REPORT_PATH: answer(500, "")}) as p:
        o = fetch(fast, p)
    assert not refusal_problems(o, "report", ["500"]), refusal_problems(o, "report", ["500"])


def test_net_page_2_missing_exits_2(fast):
    tally("network")
    first = page_one()
    first["pageCount"] = 2
    with Platform(FIXTURES, faults={EXPORT: in_turn(answer(200, dumps(first)))}) as p:
        # page 2 gets the same page 1 (page: 1), which must not pass as page 2
        o = fetch(fast, p)
    assert not refusal_problems(o, "export page 2", ["page"]), refusal_problems(o, "export page 2", ["page"])
    with Platform(FIXTURES, faults={EXPORT: in_turn(answer(200, dumps(first)), answer(404, '{"reason": "x"}'))}) as p:
        o = fetch(fast, p)
    assert not refusal_problems(o, "export page 2", ["404"]), refusal_problems(o, "export page 2", ["404"])


@pytest.mark.parametrize("when", ["before the headers", "mid-body"])
def test_net_stall_ends_within_a_bound(fast, stop, when):
    tally("network")
    body = (MATCHES / CLEAN / "export" / "1.json").read_bytes()
    before = b"" if when == "before the headers" else (
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2])
    with Platform(FIXTURES, faults={EXPORT: stall(stop, 8, before)}) as p:
        t0 = time.monotonic()
        o = fetch(fast, p)
        elapsed = time.monotonic() - t0
    assert not refusal_problems(o, PAGE_ONE_URL), refusal_problems(o, PAGE_ONE_URL)
    assert elapsed < 3 * float(os.environ["DAISHI_TIMEOUT"]) + 1, elapsed


def test_net_slow_drip_ends_within_a_bound(fast, stop):
    """A byte every 0.4 s never trips the per-read timeout: the whole answer
    must still end within the documented time, not after the last byte."""
    tally("network")
    body = b'{"matchId": "m_b0bc344f1eac"}'[:12]
    with Platform(FIXTURES, faults={EXPORT: drip(stop, body, 0.4)}) as p:
        t0 = time.monotonic()
        o = fetch(fast, p)
        elapsed = time.monotonic() - t0
    stop.set()
    assert not refusal_problems(o, PAGE_ONE_URL), refusal_problems(o, PAGE_ONE_URL)
    assert elapsed < 3 * float(os.environ["DAISHI_TIMEOUT"]) + 1, elapsed


def _page_bytes():
    return (MATCHES / CLEAN / "export" / "1.json").read_bytes()


BROKEN_ANSWERS = [
    ("short body then close", lambda: raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(_page_bytes())
                                          + _page_bytes()[:len(_page_bytes()) // 2])),
    ("short body then reset", lambda: raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(_page_bytes())
                                          + _page_bytes()[:len(_page_bytes()) // 2], linger_reset=True)),
    ("chunked, cut mid-chunk", lambda: raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                           b"%x\r\n" % len(_page_bytes()) + _page_bytes()[:100])),
    ("chunked, bad chunk size",
     lambda: raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")),
    ("chunked, no last chunk", lambda: raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                           b"%x\r\n" % len(_page_bytes()) + _page_bytes() + b"\r\n")),
    ("close before answering", lambda: raw(b"")),
    ("reset before answering", lambda: raw(b"", linger_reset=True)),
    ("not HTTP", lambda: raw(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")),
    ("bad status line", lambda: raw(b"HTTP/1.1 OK\r\n\r\n")),
    ("status 999", lambda: raw(b"HTTP/1.1 999 Odd\r\nContent-Length: 2\r\n\r\n{}")),
    ("101 headers", lambda: raw(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(101))
                                + b"Content-Length: 2\r\n\r\n{}")),
    ("header line too long", lambda: raw(b"HTTP/1.1 200 OK\r\nX-Long: " + b"v" * 70000 + b"\r\n\r\n{}")),
    ("HTML page", lambda: answer(200, "<!doctype html><html><body><h1>Welcome</h1></body></html>", "text/html")),
    ("204 no content", lambda: raw(b"HTTP/1.1 204 No Content\r\n\r\n")),
    ("418 with a JSON list", lambda: answer(418, "[1, 2]")),
    ("whole JSON, then closed short of Content-Length",
     lambda: raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(_page_bytes()) + 4096) + _page_bytes())),
    ("gzip body",
     lambda: raw(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\n\x1f\x8b\x08\x00")),
]


@pytest.mark.parametrize("name,make", BROKEN_ANSWERS, ids=[b[0] for b in BROKEN_ANSWERS])
def test_net_broken_answer_exits_2(fast, name, make):
    tally("network")
    with Platform(FIXTURES, faults={EXPORT: make()}) as p:
        o = fetch(fast, p)
    assert not refusal_problems(o, PAGE_ONE_URL), refusal_problems(o, PAGE_ONE_URL)


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_net_redirect_to_another_server_refused(fast, code):
    tally("network")
    with Platform(FIXTURES) as other:
        to_other = redirect(code, lambda h: other.url + h.path)
        with Platform(FIXTURES, faults={EXPORT: to_other}) as p:
            o = fetch(fast, p)
        assert other.requests == []
    assert not refusal_problems(o, PAGE_ONE_URL), refusal_problems(o, PAGE_ONE_URL)


@pytest.mark.parametrize("where", ["http://localhost:{port}{path}", "http://127.0.0.1:{port}@evil.invalid{path}",
                                   "//127.0.0.2:{port}{path}", "https://127.0.0.1:{port}{path}",
                                   "file:///etc/passwd", "ftp://127.0.0.1:{port}/x"])
def test_net_redirect_elsewhere_never_followed(fast, where):
    tally("network")
    with Platform(FIXTURES) as p:
        port = p.url.rsplit(":", 1)[1]
        p.faults[EXPORT] = redirect(302, lambda h: where.format(port=port, path="/mirror" + h.path))
        o = fetch(fast, p)
        followed = [q for q in p.requests if q.startswith("/mirror")]
    assert followed == []
    assert not refusal_problems(o, PAGE_ONE_URL), refusal_problems(o, PAGE_ONE_URL)


@pytest.mark.parametrize("form", ["relative", "absolute"])
def test_net_redirect_within_the_server_followed(fast, form):
    tally("network")
    with Platform(FIXTURES) as p:
        prefix = "" if form == "relative" else p.url
        p.faults[EXPORT] = redirect(302, lambda h: prefix + "/mirror" + h.path)
        p.faults["/mirror" + EXPORT] = serve_page_from(CLEAN)
        o = fetch(fast, p)
        followed = [q for q in p.requests if q.startswith("/mirror")]
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert followed == ["/mirror%s?page=1" % EXPORT]


def test_net_redirect_loop_exits_2(fast):
    tally("network")
    with Platform(FIXTURES) as p:
        p.faults[EXPORT] = redirect(302, lambda h: h.path)
        o = fetch(fast, p)
    assert not refusal_problems(o, PAGE_ONE_URL), refusal_problems(o, PAGE_ONE_URL)


def test_net_response_larger_than_the_cap(fast, monkeypatch):
    tally("network")
    monkeypatch.setattr(fast, "MAX_BYTES", 4096)
    with Platform(FIXTURES) as p:
        o = fetch(fast, p)
    assert not refusal_problems(o, "page=1", ["larger than 4096"]), refusal_problems(o, "page=1", ["larger than 4096"])


def test_net_endless_body_stops_at_the_cap(fast, monkeypatch, stop):
    tally("network")
    monkeypatch.setattr(fast, "MAX_BYTES", 1 << 20)
    with Platform(FIXTURES, faults={EXPORT: endless(stop)}) as p:
        o = fetch(fast, p)
    assert not refusal_problems(o, "page=1", ["larger than"]), refusal_problems(o, "page=1", ["larger than"])


def test_net_saved_copy_larger_than_the_cap(rc, monkeypatch):
    tally("network")
    monkeypatch.setattr(rc, "MAX_BYTES", 4096)
    o = run_offline(rc, [page_one()], report_of())
    assert not refusal_problems(o, PAGE_1, ["larger than 4096"]), refusal_problems(o, PAGE_1, ["larger than 4096"])


def test_net_page_count_growing_page_by_page(fast):
    """A server whose page N claims N + 1 pages: refused at page 2."""
    tally("network")

    def fn(h):
        n = int(h.path.rsplit("=", 1)[1])
        page = page_one() if n == 1 else {"matchId": CLEAN, "page": n, "errata": [], "events": []}
        page["pageCount"] = n + 1
        h.send(200, dumps(page))
    with Platform(FIXTURES, faults={EXPORT: fn}) as p:
        o = fetch(fast, p)
        asked = export_requests(p)
    assert not refusal_problems(o, "page 2", ["pageCount"]), refusal_problems(o, "page 2", ["pageCount"])
    assert len(asked) == 2


@pytest.mark.parametrize("count", ["max+1", "1000000", HUGE_INT])
def test_net_page_count_beyond_the_limit_fetches_one_page(fast, monkeypatch, count):
    """A server that serves every page it is asked for, claiming too many."""
    tally("network")
    monkeypatch.setattr(fast, "MAX_PAGES", 20)
    claimed = "21" if count == "max+1" else count

    def fn(h):
        n = int(h.path.rsplit("=", 1)[1])
        page = page_one() if n == 1 else {"matchId": CLEAN, "page": n, "errata": [], "events": []}
        page["pageCount"] = "@@count@@"
        h.send(200, dumps(page).replace('"@@count@@"', claimed))
    with Platform(FIXTURES, faults={EXPORT: fn}) as p:
        o = fetch(fast, p)
        asked = export_requests(p)
    assert not refusal_problems(o, "page 1", ["pageCount"]), refusal_problems(o, "page 1", ["pageCount"])
    assert len(asked) == 1


def test_net_page_count_at_the_limit_is_read(fast, monkeypatch):
    """The match's 95 events over 20 pages, 5 a page: the last holds none (records.md §1.1 allows it)."""
    tally("network")
    monkeypatch.setattr(fast, "MAX_PAGES", 20)
    events = page_one()["events"]

    def fn(h):
        n = int(h.path.rsplit("=", 1)[1])
        page = page_one() if n == 1 else {"matchId": CLEAN, "page": n, "errata": []}
        page.update(pageCount=20, events=events[5 * (n - 1):5 * n])
        h.send(200, dumps(page))
    with Platform(FIXTURES, faults={EXPORT: fn}) as p:
        o = fetch(fast, p)
        asked = export_requests(p)
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert len(asked) == 20


# ---------------------------------------------------------------- safety

BAD_IDS = [
    "m_b0bc344f1ea", "m_b0bc344f1eac0", "m_B0BC344F1EAC", "M_b0bc344f1eac", "m-b0bc344f1eac",
    "m_b0bc344f1eag", "b0bc344f1eac", "m_", "",
    "m_b0bc344f1eac/", "m_b0bc344f1eac/../m_b0bc344f1eac", "../m_b0bc344f1eac",
    "m_b0bc344f1eac/export?page=2", "m_b0bc344f1eac?page=2", "m_b0bc344f1eac#x", "m_b0bc344f1eac&rubric=1.0",
    "m_b0bc344f1eac%2f..", "m_b0bc344f1eac%00", "m_b0bc344f1eac\x00",
    "m_\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669ab", "m_\uff42" + "0bc344f1eac",
    "m_b0bc344f1ea\u00e7", "m_b0bc344f1eac\u200b", "http://evil.invalid/m_b0bc344f1eac",
    "//evil.invalid/m_b0bc344f1eac", "m_b0bc344f1eac@evil.invalid",
    "m_b0bc344f1eac\nm_b0bc344f1eac", "m_b0bc344f1eac\r\nHost: evil.invalid",
]


@pytest.mark.parametrize("bad", BAD_IDS, ids=lambda b: repr(b)[:40])
def test_safety_bad_id_never_reaches_a_url(rc, tmp_path, monkeypatch, bad):
    tally("safety")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    with Platform(FIXTURES) as p:
        o = run_main(rc, ["--base", p.url, bad])
        assert p.requests == []
    problems = refusal_problems(o, None, [])
    assert not problems, problems
    assert any(why in o.err for why in ("neither a match id", "is not a match id", "no such folder")), o.err
    assert tree(tmp_path) == {"cwd"}


@pytest.mark.parametrize("pasted", [" m_b0bc344f1eac", "m_b0bc344f1eac ", "m_b0bc344f1eac\t",
                                    "\nm_b0bc344f1eac\n"], ids=repr)
def test_safety_surrounding_whitespace_is_read_as_the_id(rc, pasted):
    """What a copy and paste brings around an id is not part of it: one match, read."""
    tally("safety")
    with Platform(FIXTURES) as p:
        o = run_main(rc, ["--base", p.url, pasted])
        assert p.requests[0] == "/api/matches/%s/export?page=1" % CLEAN
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))


def test_safety_bad_ids_with_save_write_nothing(rc, tmp_path, monkeypatch):
    tally("safety", len(BAD_IDS))
    monkeypatch.chdir(tmp_path)
    with Platform(FIXTURES) as p:
        o = run_main(rc, ["--base", p.url, "--save", str(tmp_path / "save")] + [b for b in BAD_IDS if b])
        assert p.requests == []
    assert o.code == 2 and o.exc is None
    assert tree(tmp_path) == set()


def hostile_root(tmp_path, page, report):
    root = tmp_path / "platform"
    write_record(root / "api" / "matches" / CLEAN, [page], report)
    return root


SAVE_RECORDS = [
    ("clean", 0, lambda: (page_one(), report_of())),
    ("matchId ../../x", 2, lambda: (dict(page_one(), matchId="../../x",
                                      archive=dict(page_one()["archive"], matchId="../../x")), report_of())),
    ("agentIds and errata ids are paths", 2, lambda: path_ids()),
    ("page number names a path", 2, lambda: (dict(page_one(), page="../../1"), report_of())),
]


def path_ids():
    text = dumps(page_one()).replace('"a_1"', '"../../../a_1"')
    page = json.loads(text)
    page["errata"] = [dict(ERRATUM, id="../../E1", agents=["../../../a_1"])]
    report = json.loads(dumps(report_of()).replace('"a_1"', '"../../../a_1"'))
    return page, report


@pytest.mark.parametrize("name,code,make", SAVE_RECORDS, ids=[s[0] for s in SAVE_RECORDS])
def test_safety_save_writes_only_inside_dir(rc, tmp_path, monkeypatch, name, code, make):
    tally("safety")
    page, report = make()
    root = hostile_root(tmp_path, page, report)
    o, written, outside = run_saving(rc, tmp_path, monkeypatch, root, ["--base", "{base}", CLEAN])
    assert o.exc is None, o.exc
    assert o.code == code, o.code
    assert outside == [], outside
    assert written and written <= {CLEAN + "/export/1.json", CLEAN + "/report.json", CLEAN + "/saved.json"}, written


def test_safety_save_two_pages_named_by_number(rc, tmp_path):
    tally("safety")
    first, second = two_pages()
    root = tmp_path / "platform"
    write_record(root / "api" / "matches" / CLEAN, [first, second], report_of(),
                 extra={"report/2.4.json": report_of(name="report/2.4.json")})
    save = tmp_path / "save"
    with Platform(root) as p:
        o = run_main(rc, ["--base", p.url, "--save", str(save), "--rubric", "2.4", CLEAN])
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert tree(save) == {CLEAN, CLEAN + "/export", CLEAN + "/export/1.json", CLEAN + "/export/2.json",
                          CLEAN + "/report", CLEAN + "/report/2.4.json", CLEAN + "/saved.json"}


@pytest.mark.parametrize("where", ["an existing file", "under an existing file"])
def test_safety_save_dir_that_cannot_be_a_folder(rc, tmp_path, where):
    """--save naming a file: refused with one line, nothing written, no exception."""
    tally("safety")
    blocker = tmp_path / "file"
    blocker.write_text("keep me")
    save = blocker if where == "an existing file" else blocker / "sub"
    with Platform(FIXTURES) as p:
        o = run_main(rc, ["--base", p.url, "--save", str(save), CLEAN])
    assert blocker.read_text() == "keep me"
    assert tree(tmp_path) == {"file"}
    problems = refusal_problems(o)
    assert not problems, problems


# ---------------------------------------------------------------- the counts

RAN = set()  # the tests this process ran (one worker's share under pytest-xdist)


@pytest.fixture(autouse=True)
def noted(request):
    RAN.add(request.node.name)


def test_case_counts_by_category(request, capsys):
    """Runs last (file order): prints how many hostile cases each category ran."""
    selected = {name: any(ran.startswith(prefix) for ran in RAN) for name, prefix in CATEGORIES.items()}
    with capsys.disabled():
        print("\nhostile cases run: " + ", ".join("%s %d" % (name, COUNTS[name]) for name in CATEGORIES)
              + "; total %d" % sum(COUNTS[name] for name in CATEGORIES))
    for name, was_selected in selected.items():
        if was_selected:
            assert COUNTS[name] > 0, name
