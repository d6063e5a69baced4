"""Each fault of rubric.md §11 on a page after the first: the line names that page, the event (its
place on the page and its seq) and the field, word for word, with exit 2 and nothing on stdout.
The reader keeps only what the rules read of each page and drops the page; these hold that it
still says where a fault stands.

CLEAN's 95 events are split over pages: 1-50 on page 1, 51-95 on page 2 (or 51-70 and 71-95 on
pages 2 and 3); a case changes page 2 (or 3) and pins the one line on stderr."""
import copy

import pytest

from conftest import load_script
from hostile_common import DELETE, HUGE_INT, dumps, mutate, run_main
from hostile_util import CLEAN, page_one, report_of, write_record

rc = load_script("recompute")


def pages(split=(50,)):
    """CLEAN's log over len(split) + 1 pages, each page's events from the split before it."""
    whole = page_one()
    events = whole["events"]
    bounds = [0, *split, len(events)]
    out = []
    for n, (start, end) in enumerate(zip(bounds, bounds[1:]), 1):
        page = {"matchId": CLEAN, "page": n, "pageCount": len(bounds) - 1, "errata": [],
                "events": copy.deepcopy(events[start:end])}
        out.append(dict(whole, **page) if n == 1 else page)
    return out


def refused(tmp_path, record):
    """(exit status, stderr, stdout) of recompute.py on the record (pages, each a dict or JSON
    text), with its folder's path in stderr written as DIR."""
    folder = write_record(tmp_path / "rec", record, report_of())
    outcome = run_main(rc, [str(folder)])
    assert outcome.exc is None, outcome.exc
    return outcome.code, outcome.err.replace(str(folder), "DIR"), outcome.out


def change(path, value, page=2, split=(50,)):
    """The record with one value of page `page` set (DELETE: removed; raw:TEXT: spliced as JSON)."""
    def make():
        record = pages(split)
        splices = mutate(record[page - 1], path, value)
        record[page - 1] = dumps(record[page - 1], splices)
        return record
    return make


def replace(i, event, page=2):
    """Page 2's events[i] replaced by `event`, at the same seq and tick."""
    def make():
        record = pages()
        old = record[page - 1]["events"][i]
        record[page - 1]["events"][i] = dict(event, seq=old["seq"], tick=old["tick"])
        return record
    return make


BUILD = {"type": "build", "agentId": "a_1", "structure": "shelter", "structureId": "s_1", "region": "r3_7"}
DEPOSIT = {"type": "deposit", "agentId": "a_1", "structureId": "s_1", "items": {"wood": 1}}
RAID = {"type": "raid", "agentId": "a_2", "target": "a_1", "structureId": "s_1", "taken": {"wood": 1}}
ATTACK = {"type": "attack", "agentId": "a_2", "target": "a_1"}

# page 2's events[i] is seq 51 + i: [0] gather (tick 279), [1] region_collapsed, [3] gather
# (tick 280), [7] craft (tick 282), [11] move, [20] trade_completed (tick 290), [21]
# trade_fulfilled, [41] message
EVENT_FAULTS = [
    ("an event no object", change(("events", 3), []),
     "events[3]: expected an object, got []"),
    ("an event a string", change(("events", 3), "gather"),
     'events[3]: expected an object, got "gather"'),
    ("seq repeated", change(("events", 3, "seq"), 53),
     "events[3].seq: expected 54 (seq is the position in the log), got 53"),
    ("seq missing", change(("events", 3, "seq"), DELETE),
     "events[3].seq: expected 54 (seq is the position in the log), got null"),
    ("seq a float", change(("events", 3, "seq"), "raw:54.0"),
     "events[3].seq: expected 54 (seq is the position in the log), got 54.0"),
    ("seq on from page 1's last", change(("events", 0, "seq"), 50),
     "events[0].seq: expected 51 (seq is the position in the log), got 50"),
    ("a tick back", change(("events", 3, "tick"), 278),
     "events[3] (seq 54).tick: expected an integer from 279 to 300 (ticks never decrease), got 278"),
    ("a tick back from page 1's last", change(("events", 0, "tick"), 277),
     "events[0] (seq 51).tick: expected an integer from 278 to 300 (ticks never decrease), got 277"),
    ("a tick past the end", change(("events", 44, "tick"), 301),
     "events[44] (seq 95).tick: expected an integer from 300 to 300 (ticks never decrease), got 301"),
    ("a tick a string", change(("events", 3, "tick"), "280"),
     'events[3] (seq 54).tick: expected an integer from 279 to 300 (ticks never decrease), got "280"'),
    ("a tick true", change(("events", 3, "tick"), True),
     "events[3] (seq 54).tick: expected an integer from 279 to 300 (ticks never decrease), got true"),
    ("type no string", change(("events", 3, "type"), 7),
     "events[3] (seq 54).type: expected a string, got 7"),
    ("type missing", change(("events", 3, "type"), DELETE),
     "events[3] (seq 54).type: expected a string, got null"),
    ("a gather by no seat", change(("events", 3, "agentId"), "a_9"),
     'events[3] (seq 54).agentId: expected a seat of the roster, got "a_9"'),
    ("a gather by a list", change(("events", 3, "agentId"), ["a_1"]),
     'events[3] (seq 54).agentId: expected a seat of the roster, got ["a_1"]'),
    ("a gather's region no string", change(("events", 3, "region"), 6),
     "events[3] (seq 54).region: expected a string, got 6"),
    ("a gather's resource missing", change(("events", 3, "resource"), DELETE),
     "events[3] (seq 54).resource: expected a string, missing"),
    ("a gather of nothing", change(("events", 3, "gathered"), 0),
     "events[3] (seq 54).gathered: expected an integer from 1 to 2**53, got 0"),
    ("a gather of true", change(("events", 3, "gathered"), True),
     "events[3] (seq 54).gathered: expected an integer from 1 to 2**53, got true"),
    ("a gather beyond 2**53", change(("events", 3, "gathered"), 2**53 + 1),
     "events[3].gathered: not a finite number, nor an integer within 2**53"),
    ("a gather of a 400-digit number", change(("events", 3, "gathered"), "raw:" + HUGE_INT),
     "events[3].gathered: not a finite number, nor an integer within 2**53"),
    ("a gather of NaN", change(("events", 3, "gathered"), "raw:NaN"),
     "events[3] (seq 54).gathered: expected an integer from 1 to 2**53, got nan"),
    ("a collapse's region missing", change(("events", 1, "region"), DELETE),
     "events[1] (seq 52).region: expected a string, missing"),
    ("a move to no string", change(("events", 11, "to"), None),
     "events[11] (seq 62).to: expected a string, got null"),
    ("a craft by no seat", change(("events", 7, "agentId"), "A_1"),
     'events[7] (seq 58).agentId: expected a seat of the roster, got "A_1"'),
    ("a message without its seat", change(("events", 41, "agentId"), DELETE),
     "events[41] (seq 92).agentId: expected a seat of the roster, missing"),
    ("a trade to no seat", change(("events", 20, "to"), "a_3"),
     'events[20] (seq 71).to: expected a seat of the roster, got "a_3"'),
    ("a trade giving nothing of an item", change(("events", 20, "give", "rope"), 0),
     'events[20] (seq 71).give: expected item names mapped to integers from 1 to 2**53, got {"rope": 0}'),
    ("a trade receiving a list", change(("events", 20, "receive"), []),
     "events[20] (seq 71).receive: expected item names mapped to integers from 1 to 2**53, got []"),
    ("a trade with itself", change(("events", 20, "to"), "a_1"),
     "events[20] (seq 71): a trade's from and to are the same seat"),
    ("a completed trade by its taker", change(("events", 20, "agentId"), "a_2"),
     "events[20] (seq 71).agentId: expected the trade's from on trade_completed"),
    ("a fulfilled trade by its giver", change(("events", 21, "agentId"), "a_1"),
     "events[21] (seq 72).agentId: expected the trade's to on trade_fulfilled"),
    ("a build of no string", replace(7, dict(BUILD, structure=1)),
     "events[7] (seq 58).structure: expected a string, got 1"),
    ("a build without its id", replace(7, {k: v for k, v in BUILD.items() if k != "structureId"}),
     "events[7] (seq 58).structureId: expected a string, missing"),
    ("a deposit of a number", replace(7, dict(DEPOSIT, items=3)),
     "events[7] (seq 58).items: expected item names mapped to integers from 1 to 2**53, got 3"),
    ("a raid on no seat", replace(7, dict(RAID, target="a_7")),
     'events[7] (seq 58).target: expected a seat of the roster, got "a_7"'),
    ("a raid taking a fraction", replace(7, dict(RAID, taken={"wood": 1.5})),
     'events[7] (seq 58).taken: expected item names mapped to integers from 1 to 2**53, got {"wood": 1.5}'),
    ("an attack on no one", replace(7, dict(ATTACK, target=None)),
     "events[7] (seq 58).target: expected a seat of the roster, got null"),
]


@pytest.mark.parametrize("make,what", [c[1:] for c in EVENT_FAULTS], ids=[c[0] for c in EVENT_FAULTS])
def test_an_event_fault_on_page_2_is_named_there(tmp_path, make, what):
    code, err, out = refused(tmp_path, make())
    assert (code, err, out) == (2, "recompute.py: DIR/export/2.json: %s\n" % what, "")


def test_the_first_of_two_faults_on_a_page_is_the_one_named(tmp_path):
    record = pages()
    record[1]["events"][30]["agentId"] = "a_9"
    record[1]["events"][5]["region"] = 5  # the earlier event
    code, err, out = refused(tmp_path, record)
    assert (code, err, out) == (
        2, "recompute.py: DIR/export/2.json: events[5] (seq 56).region: expected a string, got 5\n", "")


def test_one_event_with_two_faults_names_its_first_field(tmp_path):
    """A gather by no seat and without its region: agentId comes first in the gather's fields."""
    record = pages()
    record[1]["events"][3]["agentId"] = "a_9"
    del record[1]["events"][3]["region"]
    code, err, out = refused(tmp_path, record)
    assert (code, err, out) == (
        2, 'recompute.py: DIR/export/2.json: events[3] (seq 54).agentId: expected a seat of the roster, '
        'got "a_9"\n', "")


def test_a_fault_on_page_3_counts_seq_and_tick_over_both_pages_before(tmp_path):
    """Pages of 50, 20 and 25 events: page 3 starts at seq 71, after page 2's last tick (289)."""
    record = pages((50, 70))
    record[2]["events"][0]["tick"] = 288
    code, err, out = refused(tmp_path, record)
    assert (code, err, out) == (
        2, "recompute.py: DIR/export/3.json: events[0] (seq 71).tick: expected an integer from 289 to "
        "300 (ticks never decrease), got 288\n", "")


def test_a_page_3_that_starts_its_seq_again_is_named(tmp_path):
    record = pages((50, 70))
    for i, event in enumerate(record[2]["events"]):
        event["seq"] = 51 + i
    code, err, out = refused(tmp_path, record)
    assert (code, err, out) == (
        2, "recompute.py: DIR/export/3.json: events[0].seq: expected 71 (seq is the position in the log), "
        "got 51\n", "")


PAGE_FAULTS = [
    ("page 2 says page 3", change(("page",), 3),
     ": page is 3, expected 2"),
    ("page 2 says pageCount 3", change(("pageCount",), 3),
     ": pageCount 3 disagrees with page 1's 2"),
    ("page 2's pageCount a string", change(("pageCount",), "2"),
     ': pageCount must be an integer from 1 to 10000, got "2"'),
    ("page 2 without events", change(("events",), DELETE),
     ".events: missing"),
    ("page 2's events an object", change(("events",), {}),
     ": events: expected a list, got {}"),
    ("page 2 with other errata", change(("errata",), [{"id": "E1", "events": [3], "scoresDepend": False}]),
     ": errata differ from page 1's"),
    ("page 2 with the archive", change(("archive",), {"matchId": CLEAN}),
     ": archive is on page 1 only"),
    ("page 2 of another match", change(("matchId",), "m_000000000000"),
     ': matchId "m_000000000000" is not the archive\'s %s' % CLEAN),
]


@pytest.mark.parametrize("make,what", [c[1:] for c in PAGE_FAULTS], ids=[c[0] for c in PAGE_FAULTS])
def test_a_page_fault_on_page_2_is_named_there(tmp_path, make, what):
    code, err, out = refused(tmp_path, make())
    assert (code, err, out) == (2, "recompute.py: DIR/export/2.json%s\n" % what, "")


def test_an_empty_page_before_the_last_is_named(tmp_path):
    record = pages((50, 50))
    code, err, out = refused(tmp_path, record)
    assert (code, err, out) == (
        2, "recompute.py: DIR/export/2.json: page 2 of 3 holds no events: only the last may hold none "
        "(records.md §1.1)\n", "")


def test_the_pages_whole_read_the_same_as_one(tmp_path):
    """The baseline of the cases above: split over two or three pages, CLEAN reads as on one."""
    outs = []
    for split in ((50,), (50, 70), (95,)):
        folder = write_record(tmp_path / ("rec%d" % len(outs)), pages(split), report_of())
        outcome = run_main(rc, [str(folder)])
        assert (outcome.code, outcome.err, outcome.exc) == (0, "", None)
        outs.append(outcome.out.replace(str(folder), "DIR"))
    assert outs[0] == outs[1] == outs[2]
    assert "figures same 34 of 34; checks agree 32 of 32" in outs[0]
