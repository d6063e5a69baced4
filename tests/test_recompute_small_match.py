"""A two-seat match worked by hand under every rubric version.

100 rounds on a 10 × 10 map, both seats active all 100 rounds, so every rate
is the count itself (× 100 ÷ 100) and every difference below comes from a
rule that changed between versions:

- a_1: wealth 100 (50 wood), reputation 4, aggression 1, strength 1; spawns
  in r1 and moves to r3 and r4 (3 regions: coverage 0.03); gathers 2 wood in
  r3, crafts once, gives a_2 2 wood for 1 wood; 3 messages.
- a_2: wealth 100 (7 tools, 1 wood), reputation 0; spawns in r2 (coverage
  0.01); gathers 2 wood in r3; no messages.
- r3's wood collapses at tick 4 after both drew 2: commons share 0.5 each.
- The trade: a_1 received 1 wood and gave 2: net share |1 − 2| × 2 ÷ (3 × 2)
  = 0.333; credited trades 0.333 each; goods both ways, so each side is paid a
  point: circular reputation 1 × (1 − 0.333) = 0.667 each, index wealth
  100 − 1.334 = 98.666, index reputation 3.333 and −0.667.
"""
import json

import pytest

from conftest import load_script

rc = load_script("recompute")


def small_match(rubric):
    def ev(seq, tick, kind, **fields):
        return dict(seq=seq, tick=tick, type=kind, **fields)
    events = [
        ev(1, 0, "agent_spawned", agentId="a_1", region="r1"),
        ev(2, 0, "agent_spawned", agentId="a_2", region="r2"),
        ev(3, 1, "move", agentId="a_1", **{"from": "r1", "to": "r3"}),
        ev(4, 2, "move", agentId="a_1", **{"from": "r3", "to": "r4"}),
        ev(5, 3, "gather", agentId="a_1", region="r3", resource="wood", gathered=2),
        ev(6, 3, "gather", agentId="a_2", region="r3", resource="wood", gathered=2),
        ev(7, 4, "region_collapsed", region="r3", resource="wood"),
        ev(8, 5, "craft", agentId="a_1", item="plank", count=1),
        ev(9, 6, "trade_completed", agentId="a_1", give={"wood": 2}, receive={"wood": 1},
           **{"from": "a_1", "to": "a_2"}),
        ev(10, 6, "trade_fulfilled", agentId="a_2", **{"from": "a_1", "to": "a_2"}),
    ]
    agent = {"status": "active", "roundsAlive": 100, "wealth": 100.0, "aggression": 0,
             "trained": {"strength": 0, "vitality": 0, "endurance": 0}}
    archive = {"matchId": "m_000000000001", "config": {"engine_version": "0.5.0",
                                                       "map": {"width": 10, "height": 10}, "rounds": 100},
               "startedAtTick": 0, "endedAtTick": 100, "agents": [
                   dict(agent, agentId="a_1", reputation=4, aggression=1,
                        trained={"strength": 1, "vitality": 0, "endurance": 0}, inventory={"wood": 50}),
                   dict(agent, agentId="a_2", reputation=0, inventory={"tool": 7, "wood": 1})]}
    page = {"matchId": "m_000000000001", "page": 1, "pageCount": 1, "errata": [],
            "archive": archive, "events": events}
    card = {"status": "active", "rank": 1, "wealth": 100.0, "fitnessIndex": 0.0, "grade": "F", "achievements": [],
            "dimensions": dict.fromkeys(rc.DIMENSIONS, 0.0)}
    report = {"matchId": "m_000000000001", "rubricVersion": rubric, "scorecards": [
        dict(card, agentId="a_1", raw={"messagesSent": 3}), dict(card, agentId="a_2", raw={"messagesSent": 0})]}
    return page, report


class Pages:
    """Saved copies held in memory."""
    match_id = None

    def __init__(self, page, report):
        self.files = {"page": json.dumps(page).encode(), "report": json.dumps(report).encode()}

    def page(self, number):
        return self.files["page"], "export/1.json"

    def report(self, version):
        return self.files["report"], "report.json"


def figures(rubric):
    archive, report = rc.read_match(Pages(*small_match(rubric)), None)
    return [r["figures"] for r in rc.recompute(archive, report)[0]]


# (survival, economy, social, adaptation, competitiveness, rank, index, grade) per seat
EXPECTED = {
    # social 22 × 1 + 8 × 4 + 1.5 × 3 = 58.5; adaptation 12 + 10 + 1.5 × 2 = 25;
    # ordinal rank on the tie: a_1 first; competitiveness (100 + 20) ÷ 2 and (0 + 20) ÷ 2
    "1.0": [(100.0, 17.0, 58.5, 25.0, 60.0, 1, 53.7, "C"), (100.0, 16.0, 22.0, 0.0, 10.0, 2, 34.9, "F")],
    "2.0": [(100.0, 17.0, 58.5, 25.0, 60.0, 1, 53.7, "C"), (100.0, 16.0, 22.0, 0.0, 10.0, 2, 34.9, "F")],
    # shared rank from 2.1: a_2 is first too, competitiveness 60
    "2.1": [(100.0, 17.0, 58.5, 25.0, 60.0, 1, 53.7, "C"), (100.0, 16.0, 22.0, 0.0, 60.0, 1, 42.4, "D")],
    # 2.2 reads the map record: 22 + 30 × 0.03 ÷ 0.25 = 25.6; 30 × 0.01 ÷ 0.25 = 1.2
    "2.2": [(100.0, 17.0, 58.5, 25.6, 60.0, 1, 53.8, "C"), (100.0, 16.0, 22.0, 1.2, 60.0, 1, 42.6, "D")],
    # 2.3: survival × world-action rate ÷ 10 (5 and 2 actions); social on credited trades,
    # less 8 × aggression and 8 × commons: 22 × 0.333 + 32 + 4.5 − 8 − 4 = 31.826
    "2.3": [(50.0, 17.0, 31.8, 25.6, 60.0, 1, 36.0, "D"), (20.0, 16.0, 3.3, 1.2, 60.0, 1, 18.8, "F")],
    # 2.4 reads index wealth 98.666 (economy 16.8 and 15.8, competitiveness 59.9)
    # and index reputation 3.333 and −0.667 (social 26.5 and 0)
    "2.4": [(50.0, 16.8, 26.5, 25.6, 59.9, 1, 34.8, "F"), (20.0, 15.8, 0.0, 1.2, 59.9, 1, 18.1, "F")],
}


@pytest.mark.parametrize("rubric", sorted(EXPECTED))
def test_small_match_under_each_rubric(rubric):
    got = [tuple(f[d] for d in rc.DIMENSIONS) + (f["rank"], f["fitnessIndex"], f["grade"]) for f in figures(rubric)]
    assert got == EXPECTED[rubric]


def test_small_match_raw_figures_under_2_4():
    a_1, a_2 = figures("2.4")
    assert (a_1["circularReputation"], a_1["indexWealth"], a_1["indexReputation"]) == (0.667, 98.666, 3.333)
    assert (a_2["circularReputation"], a_2["indexWealth"], a_2["indexReputation"]) == (0.667, 98.666, -0.667)
    assert (a_1["mapCoverage"], a_2["mapCoverage"]) == (0.03, 0.01)
    assert a_1["achievements"] == a_2["achievements"] == ["survivor"]
    assert a_1["circularEstimated"] is False


def test_status_is_a_figure_and_exploration_lists_every_seat():
    page, report = small_match("2.4")
    report["scorecards"][1]["status"] = "dead"          # the archive's a_2 is active
    page["archive"]["exploration"] = {"regions": 100, "agents": {"a_1": {"visited": 3, "coverage": 0.03}}}
    result = rc.audit(*rc.read_match(Pages(page, report), None))
    status = [[(r["published"], r["recomputed"], r["same"]) for r in s["figures"] if r["key"]["figure"] == "status"]
              for s in result["seats"]]
    assert status == [[("active", "active", True)], [("dead", "active", False)]]
    explored = [(c["check"], c["agrees"]) for c in result["checks"] if c["check"].startswith("exploration")]
    assert explored == [("exploration a_2", False), ("exploration a_1.visited", True),
                        ("exploration a_1.coverage", True)]
    assert result["exit"] == 1
    report["scorecards"][1]["status"] = "active"        # the block lists both seats: every check agrees
    page["archive"]["exploration"]["agents"]["a_2"] = {"visited": 1, "coverage": 0.01}
    result = rc.audit(*rc.read_match(Pages(page, report), None))
    assert [c["agrees"] for c in result["checks"] if c["check"].startswith("exploration")] == [True] * 4
    assert [r["key"]["figure"] for r in result["seats"][0]["figures"]][:3] == ["wealth", "status", "rank"]
