"""recompute.py's rules, on the spec's worked checks and small hand-worked cases."""
import pytest

from conftest import load_script

rc = load_script("recompute")


# rubric.md §10, the worked checks.

def test_half_up_on_the_double_economy():
    assert rc.hu(0.6 * 84.25 + 0.4 * 37.5, 1) == 65.6
    assert round(0.6 * 84.25 + 0.4 * 37.5, 1) == 65.5  # why round() is not used


def test_coverage_nine_of_144():
    assert rc.coverage_of(9, 144) == 0.063


def test_wealth_321_025_is_321_02():
    # inventory 318, a workshop at 7 hp (2.625) built before a shelter at 2 hp (0.4):
    # 321.025 in exact decimals, 321.02499… as the running sum of doubles
    events = [
        ev(1, 0, "build", agentId="a_1", structure="workshop", structureId="w", region="r"),
        ev(2, 15, "build", agentId="a_1", structure="shelter", structureId="s", region="r"),
    ]
    standing = rc.replay_structures(events, 113, set(), set())
    assert [s["hp"] for s in standing] == [7, 2]
    me = {"id": "a_1", "inventory": {"wood": 159}}
    assert rc.replay_wealth(me, standing, VALUES) == 321.02


def test_half_up_negative_rounds_toward_plus_infinity():
    assert rc.hu(-0.25, 1) == -0.2
    assert rc.hu(-1.005, 2) == -1.0  # -1.00499… as a double


def test_economy_half_boundary_through_the_rule():
    seat = {"id": "a_1", "roundsAlive": 400}
    counters = {"gather": 60, "craft": 0, "build": 0, "repair": 0}
    # W 337 → 100 × 337 ÷ 400 = 84.25; activity 60 per 400 rounds → rate 15 → 37.5
    assert rc.economy_score(seat, 337, counters, rate(seat, 400, "2.4")) == 65.6


# §3.2 rates

def test_rate_floor_and_rubric_1_0():
    seat = {"roundsAlive": 150}
    assert rc.rate(30, seat, 400, "2.0") == 10.0    # divisor max(150, min(400, 300)) = 300
    assert rc.rate(30, seat, 250, "2.0") == 12.0    # the whole match when shorter
    assert rc.rate(30, seat, 400, "1.0") == 30      # the lifetime count
    assert rc.rate(30, {"roundsAlive": 0}, 0, "2.4") == 0


# §4 ledger

VALUES = rc.ITEM_VALUES


def test_net_share_one_way_and_back_and_forth():
    assert rc.net_share({"food": 4}, {"wood": 5}, VALUES) == 1.0
    assert rc.net_share({"wood": 3}, {"wood": 5}, VALUES) == 0.25
    assert rc.net_share({}, {}, VALUES) == 0


def trade(seq, tick, giver, taker, give, receive):
    return {"seq": seq, "tick": tick, "type": "trade_completed", "agentId": giver,
            "from": giver, "to": taker, "give": give, "receive": receive}


def trade_rows(events):
    """trade_completed as the reader keeps it: (from, to, give, receive), the items as pairs."""
    return [(e["from"], e["to"], tuple(e["give"].items()), tuple(e["receive"].items())) for e in events]


def commons_shares(gathers, collapses, seats):
    """The rule on events: gathers grouped by pool and seat as the reading code keeps them."""
    draws = {}
    for e in gathers:
        ticks, units = draws.setdefault((e["region"], e["resource"], e["agentId"]), ([], []))
        ticks.append(e["tick"])
        units.append(e["gathered"])
    return rc.commons_shares(draws, [(e["region"], e["resource"], e["tick"]) for e in collapses], seats)


def test_ledger_pairs_and_points_from_events():
    events = [trade(i + 1, i, "a_2", "a_10", {"wood": 1}, {"food": 1}) for i in range(7)]
    events.append(trade(8, 8, "a_10", "a_2", {"wood": 2}, {}))  # a gift pays nothing
    [pair] = rc.ledger_from_events(trade_rows(events), VALUES, 2)
    assert (pair["a"], pair["b"]) == ("a_10", "a_2")  # ids compare as strings
    assert pair["trades"] == 8
    assert pair["rep"] == {"a_10": 5, "a_2": 5}  # five paid trades per partner
    # a_10 received wood 7, gave food 7 and wood 2: N = 5×2 + 7×1.25 = 18.75, D = 9×2 + 8.75 = 26.75
    assert pair["netShare"] == rc.hu(18.75 / 26.75, 3) == 0.701


def test_twenty_paid_trades_in_all():
    events, seq = [], 0
    for partner in range(2, 7):  # five partners, five trades each: 25 trades
        for _ in range(5):
            seq += 1
            events.append(trade(seq, seq, "a_1", "a_%d" % partner, {"wood": 1}, {"food": 1}))
    pairs = rc.ledger_from_events(trade_rows(events), VALUES, 6)
    paid = [p["rep"]["a_1"] for p in pairs]
    assert paid == [5, 5, 5, 5, 0]
    assert all(p["rep"][p["b"]] == 5 for p in pairs)


def test_commons_window():
    seats = [{"id": "a_1"}, {"id": "a_2"}, {"id": "a_3"}]

    def gather(seq, tick, agent, units):
        return {"seq": seq, "tick": tick, "type": "gather", "agentId": agent, "region": "r",
                "resource": "wood", "gathered": units}
    events = [
        gather(1, 50, "a_2", 5),   # 100 − 50 = 50: outside the window
        gather(2, 51, "a_1", 3),   # 49: inside
        gather(3, 100, "a_2", 2),  # same tick as the collapse: inside
        {"seq": 4, "tick": 100, "type": "region_collapsed", "region": "r", "resource": "wood"},
        gather(5, 100, "a_3", 4),  # logged after it, same tick: inside too
        gather(6, 101, "a_3", 9),  # after: outside
        {"seq": 7, "tick": 101, "type": "region_collapsed", "region": "q", "resource": "wood"},
    ]
    shares = commons_shares([e for e in events if e["type"] == "gather"],
                               [e for e in events if e["type"] == "region_collapsed"], seats)
    assert shares == {"a_1": rc.hu(3 / 9, 3), "a_2": rc.hu(2 / 9, 3), "a_3": rc.hu(4 / 9, 3)}
    assert shares["a_1"] == 0.333


def test_commons_single_drawer_not_counted():
    seats = [{"id": "a_1"}, {"id": "a_2"}]
    gathers = [{"seq": 1, "tick": 1, "type": "gather", "agentId": "a_1", "region": "r", "resource": "ore",
                "gathered": 3}]
    collapses = [{"seq": 2, "tick": 2, "type": "region_collapsed", "region": "r", "resource": "ore"}]
    assert commons_shares(gathers, collapses, seats) == {"a_1": 0.0, "a_2": 0.0}


def test_credited_trades_caps_at_five():
    ledger = {"pairs": [{"a": "a_1", "b": "a_2", "trades": 9, "netShare": 0.5},
                        {"a": "a_1", "b": "a_3", "trades": 2, "netShare": 0.25}]}
    assert rc.credited_trades(ledger, "a_1", None) == 3.0   # 5 × 0.5 + 2 × 0.25
    assert rc.credited_trades(None, "a_1", {"trade": 7}) == 7


# §5 rank

def test_rank_ordinal_then_shared():
    assert rc.ranks([10.0, 20.0, 20.0, 5.0], "1.0") == [3, 1, 2, 4]
    assert rc.ranks([10.0, 20.0, 20.0, 5.0], "2.0") == [3, 1, 2, 4]
    assert rc.ranks([10.0, 20.0, 20.0, 5.0], "2.1") == [3, 1, 1, 4]


# §6 dimensions

def seat(status="active", alive=400, aggression=0, trained=0):
    return {"id": "a_1", "status": status, "roundsAlive": alive, "aggression": aggression,
            "trained": trained, "wealth": 0, "reputation": 0}


def rate(seat, match_rounds, rubric):
    """The seat's rate function r(·) of §3.2, as the scorecard hands it to the dimensions."""
    return lambda count: rc.rate(count, seat, match_rounds, rubric)


def counters(**kw):
    c = dict.fromkeys(rc.COUNTERS + ("messages",), 0)
    c.update(kw)
    return c


def test_survival_share_from_2_3():
    c = counters(gather=20, dormant=1, awake=1)   # 20 world actions in 400 rounds: rate 5
    assert rc.survival_score(seat(), c, 400, "2.2") == 93.0       # 100 − 12 + 5
    assert rc.survival_score(seat(), c, 400, "2.3") == 43.0       # 100 × 0.5 − 12 + 5
    assert rc.survival_score(seat(), None, 400, "2.4") == 100.0   # not recorded: share 1
    assert rc.survival_score(seat("dormant"), c, 400, "2.1") == 48.0
    assert rc.survival_score(seat("dead", alive=100), counters(), 400, "2.0") == 25.0


def test_social_versions():
    c = counters(trade=4, messages=40)  # rates over 400 rounds: 1 trade, 10 messages
    s = seat(aggression=2)
    # 2.2: 22 × 1 + 8 × 3 + 1.5 × 10 = 61
    assert rc.social_score(3, 1.5, 0.8, c, s, rate(s, 400, "2.2"), "2.2") == 61.0
    # 1.0: lifetime counts: 22 × 4 + 24 + 1.5 × min(40, 15) = 134.5 → 100
    assert rc.social_score(3, 1.5, 0.8, c, s, rate(s, 400, "1.0"), "1.0") == 100.0
    # 2.3: credited rate 0.375, commons rate 0.2: 22 × 0.375 + 24 + 15 = 47.25;
    # 47.25 − 16 − 1.6 = 29.65, whose tenfold double is 296.5: half up to 29.7
    assert rc.social_score(3, 1.5, 0.8, c, s, rate(s, 400, "2.3"), "2.3") == 29.7


def adaptation(seat, counters, coverage, has_map_record, rubric):
    """Adaptation over 400 rounds, reading coverage where the rubric does for this archive."""
    reads_map = rc.reads_coverage(rubric, has_map_record)
    return rc.adaptation_score(seat, counters, coverage, reads_map, rate(seat, 400, rubric))


def test_adaptation_last_term_by_version():
    c = counters(craft=8, move=40)  # rates: craft 2, move 10
    s = seat(trained=3)
    # 36 + 20 + 1.5 × 10 = 71
    for rubric in ("2.0", "2.1"):
        assert adaptation(s, c, 0.063, True, rubric) == 71.0
    assert adaptation(s, c, 0.063, False, "2.2") == 71.0
    # with a map record: 36 + 20 + 30 × 0.063 ÷ 0.25 = 63.56 → 63.6
    assert adaptation(s, c, 0.063, True, "2.2") == 63.6
    assert adaptation(s, c, 0.063, False, "2.4") == 63.6
    assert adaptation(s, c, 0.5, True, "2.3") == 86.0
    # 1.0: lifetime counts: 36 + 80 + … → 100
    assert adaptation(s, c, 0.5, True, "1.0") == 100.0


def test_competitiveness():
    assert rc.competitiveness_score(seat(), 1, 250, 5) == 75.0     # (100 + 50) ÷ 2
    assert rc.competitiveness_score(seat("dead"), 1, 250, 5) == 37.5
    assert rc.competitiveness_score(seat(), 1, 0, 1) == 50.0       # a field of one
    assert rc.competitiveness_score(seat(), 3, 10, 4) == rc.hu((100 * 1 / 3 + 2.0) / 2, 1) == 17.7


# §7 circular reputation

def test_circular_estimated_and_scaled():
    pairs = [{"a": "a_1", "b": "a_%d" % k, "trades": 6, "netShare": 0.5, "rep": None} for k in range(2, 7)]
    ledger = {"pairs": pairs, "hasRep": False}
    circular, estimated = rc.circular_reputation(ledger, "a_1")
    # five partners × min(6, 5) = 25 > 20: each 5 × (20 ÷ 25) = 4.0; Σ 4 × 0.5 = 10
    assert (circular, estimated) == (10.0, True)
    assert rc.circular_reputation(ledger, "a_9") == (0.0, False)
    assert rc.circular_reputation(None, "a_1") == (0, False)


def test_index_stocks():
    s = dict(seat(), wealth=100.0, reputation=4)
    assert rc.index_stocks(s, 2.5) == (95.0, 1.5)
    assert rc.index_stocks(s, 0.0) == (100.0, 4)


# §8 index and grade

def test_fitness_index_and_breadth_grade():
    dims = (90.0, 90.0, 90.0, 40.0, 40.0)
    assert rc.fitness_index(dims) == 75.0
    assert rc.grade_of(75.0, dims, "2.0") == "B"
    narrow = (100.0, 100.0, 40.0, 40.0, 40.0)
    assert rc.fitness_index(narrow) == 70.0
    assert rc.grade_of(70.0, narrow, "1.0") == "B"
    assert rc.grade_of(70.0, narrow, "2.0") == "C"
    assert rc.grade_of(34.9, narrow, "2.4") == "F"


# §2 structures replay

def ev(seq, tick, kind, **kw):
    """A structure event as the reader keeps it: (seq, tick, type, structureId, agentId, what it
    builds or moves)."""
    what = kw.get("structure", kw.get("items", kw.get("taken")))
    return seq, tick, kind, kw["structureId"], kw["agentId"], what


def test_structures_decay_repair_storehouse():
    events = [
        ev(1, 0, "build", agentId="a_1", structure="shelter", structureId="s1", region="r"),
        ev(2, 10, "build", agentId="a_1", structure="storehouse", structureId="s2", region="r"),
        ev(3, 20, "deposit", agentId="a_2", structureId="s2", items={"wood": 3}),
        ev(4, 30, "withdraw", agentId="a_1", structureId="s2", items={"wood": 5}),
        ev(5, 40, "deposit", agentId="a_1", structureId="s2", items={"ore": 2}),
        ev(6, 50, "repair", agentId="a_1", structureId="s1"),
        ev(7, 55, "deposit", agentId="a_1", structureId="s1", items={"ore": 9}),  # not a storehouse
        ev(8, 56, "build", agentId="a_2", structure="shelter", structureId="s1", region="r"),  # stands
    ]
    notes = set()
    standing = rc.replay_structures(events, 60, set(), notes)
    assert [(s["id"], s["hp"]) for s in standing] == [("s1", 65), ("s2", 70)]
    me = {"id": "a_1", "inventory": {"wood": 1}}
    # 2 + shelter 20 × 65 ÷ 100 + storehouse 30 × 70 ÷ 120 + ore 2 × 5
    assert rc.replay_wealth(me, standing, VALUES) == 2 + 13.0 + 17.5 + 10
    assert rc.replay_wealth({"id": "a_2", "inventory": {}}, standing, VALUES) == 0.0
    # without the withdraw (an erratum), the wood stays
    skipped = rc.replay_structures(events, 60, {4}, notes)
    assert skipped[1]["contents"] == {"wood": 3, "ore": 2}


def test_structures_crumble_and_rebuild():
    events = [
        ev(1, 0, "build", agentId="a_1", structure="shelter", structureId="s1", region="r"),
        ev(2, 100, "repair", agentId="a_1", structureId="s1"),   # crumbled at tick 100, before this
        ev(3, 120, "build", agentId="a_2", structure="market", structureId="s1", region="r"),
        ev(4, 121, "build", agentId="a_2", structure="castle", structureId="s9", region="r"),
    ]
    notes = set()
    standing = rc.replay_structures(events, 200, set(), notes)
    assert [(s["owner"], s["kind"], s["hp"]) for s in standing] == [("a_2", "market", 40)]
    assert any("castle" in n for n in notes)
    assert rc.replay_structures(events[:1], 100, set(), set()) == []  # 0 hp at the end: gone


def test_ore_at_eight_on_the_earliest_engine():
    assert dict(rc.item_values("0.1.0"))["ore"] == 8
    assert dict(rc.item_values("0.1.1"))["ore"] == 5


@pytest.mark.parametrize("places,x,expected", [(0, 2.5, 3.0), (3, 0.0625, 0.063), (2, 0.125, 0.13)])
def test_hu_halves(places, x, expected):
    assert rc.hu(x, places) == expected
