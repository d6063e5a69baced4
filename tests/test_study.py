"""recompute_study.py: the statistical kernels, the printing rule, hand-worked
studies under both rules, the record checks, the network rules and the
conformance corpus's studies, served and offline."""
import functools
import hashlib
import io
import itertools
import json
import math
import random
import sys
from fractions import Fraction

import pytest

import corpus
from conftest import FIXTURES, REPO, run_script
from loopback import Platform

sys.path.insert(0, str(REPO))
import recompute_study as rs  # noqa: E402

SCRIPT = "recompute_study.py"

# scipy.stats.t.ppf(q, df), computed once and recorded (scipy 1.17.1).
T_REFERENCE = [
    (1, 0.975, 12.706204736174694),
    (1, 0.99, 31.820515953773935),
    (1, 0.995, 63.656741162871526),
    (1, 0.999, 318.30883898555015),
    (1, 0.999999, 318309.88617359026),
    (1, 0.999999999, 318309895.1862093),
    (2, 0.975, 4.302652729749462),
    (2, 0.99, 6.9645567342832715),
    (2, 0.995, 9.924843200918287),
    (2, 0.999, 22.327124770119866),
    (2, 0.999999, 707.1057205157672),
    (2, 0.999999999, 22360.68005765849),
    (5, 0.975, 2.5705818356363146),
    (5, 0.99, 3.3649299989072174),
    (5, 0.995, 4.032142983555228),
    (5, 0.999, 5.893429531356009),
    (5, 0.999999, 24.771029720372493),
    (5, 0.999999999, 98.93722520824214),
    (30, 0.975, 2.0422724563012378),
    (30, 0.99, 2.457261542400591),
    (30, 0.995, 2.7499956535672254),
    (30, 0.999, 3.3851848668293045),
    (30, 0.999999, 5.871117120408624),
    (30, 0.999999999, 8.445862807441596),
    (1000, 0.975, 1.9623390808264083),
    (1000, 0.99, 2.330082674755513),
    (1000, 0.995, 2.580754698065951),
    (1000, 0.999, 3.0984021639129233),
    (1000, 0.999999, 4.781608620452439),
    (1000, 0.999999999, 6.0536902768005225),
    (1000000, 0.975, 1.959966356814107),
    (1000000, 0.99, 2.326351603120805),
    (1000000, 0.995, 2.5758342201053344),
    (1000000, 0.999, 3.09024045631652),
    (1000000, 0.999999, 4.7534523482738695),
    (1000000, 0.999999999, 5.997862460304971),
]
# Near q = 0.5 and deep in the tail, from mpmath's incomplete beta at 40 digits
# (scipy itself is off by up to 4e-5 relative next to 0.5).
T_REFERENCE_EDGES = [
    (5, 0.500000001, 2.634305449637024e-09),
    (1000, 0.500001, 2.5072550100085785e-06),
    (30, 0.6, 0.2556053649519127),
    (3, 0.999999999999, 10331.184426046091),
]


@pytest.mark.parametrize("nu, q, expected", T_REFERENCE + T_REFERENCE_EDGES)
def test_t_quantile_matches_reference(nu, q, expected):
    assert abs(rs.t_quantile(nu, q) - expected) <= 1e-11 * expected


def test_t_quantile_published_table_and_centre():
    # The two-sided 95% row of every printed t table.
    for nu, printed in ((1, 12.706), (4, 2.776), (10, 2.228), (20, 2.086), (120, 1.980)):
        assert round(rs.t_quantile(nu, 0.975), 3) == printed
    assert rs.t_quantile(7, 0.5) == 0.0
    assert rs.t_quantile(1, 0.5) == 0.0
    with pytest.raises(ValueError):
        rs.t_quantile(5, 1.0)


@pytest.mark.parametrize("nu, q, expected", [
    (10000, 0.975, 1.960201239890626),            # either side of 10,000 df, where the method changes
    (10000, 0.999999999, 6.003355452553618),
    (10001, 0.975, 1.9602012161646407),
    (10001, 0.999999999, 6.003354897324966),
])
def test_t_quantile_either_side_of_the_method_seam(nu, q, expected):
    assert abs(rs.t_quantile(nu, q) - expected) <= 1e-11 * expected


# ---------------------------------------------------------------- sign flip

def brute_force_count(diffs):
    target = abs(sum(diffs))
    return sum(1 for signs in itertools.product((1, -1), repeat=len(diffs))
               if abs(sum(s * d for s, d in zip(signs, diffs))) >= target)


def test_sign_flip_matches_enumeration_for_small_n():
    rng = random.Random(20261115)
    for _ in range(300):
        n = rng.randint(1, 11)
        diffs = [rng.randint(-40, 40) * rng.choice((1, 50, 1000)) for _ in range(n)]
        assert rs.sign_flip_count(diffs) == brute_force_count(diffs), diffs


@pytest.mark.parametrize("diffs", [
    [1500, -200, 3300, 800, 0, 2100, -700, 1200, 900, 400, 2600, -1100, 300, 1700, 500, 600],
    [5] * 16,
    [1, -1] * 8,
    [7, 7, 7, 7, -7, -7, 14, 0, 0, 21, 3, 3, -3, 9, 12, 1],
])
def test_sign_flip_matches_enumeration_at_sixteen(diffs):
    assert rs.sign_flip_count(diffs) == brute_force_count(diffs)


def test_sign_flip_across_many_small_blocks(monkeypatch):
    # Blocks of two or three slots: every item's shift straddles block boundaries.
    monkeypatch.setattr(rs, "SUBSET_BLOCK_BYTES", 5)
    rng = random.Random(11)
    for _ in range(60):
        diffs = [rng.randint(-25, 25) for _ in range(rng.randint(1, 12))]
        assert rs.sign_flip_count(diffs) == brute_force_count(diffs), diffs


def test_sign_flip_known_values():
    assert rs.sign_flip_p([1000, 2000, 3000], 0.05) == (Fraction(1, 4), None)   # only all + and all −
    assert rs.sign_flip_p([19850], 0.05) == (1, None)
    assert rs.sign_flip_p([0, 0, 0], 0.05) == (1, None)
    assert rs.sign_flip_p([5, -5], 0.05) == (1, None)
    assert rs.sign_flip_p([3] * 20, 0.05) == (Fraction(2, 2 ** 20), None)


def test_sign_flip_stays_exact_at_two_hundred_pairs():
    rng = random.Random(7)
    diffs = [rng.randint(-300, 300) * 50 for _ in range(200)]
    count = rs.sign_flip_count(diffs)
    # Exact: a count of sign vectors, symmetric, and even (s and −s pair up).
    assert 0 < count <= 2 ** 200 and count % 2 == 0
    # Doubling every difference changes nothing; shifting one by a unit changes the count.
    assert rs.sign_flip_count([2 * d for d in diffs]) == count


def plain_count(diffs):
    """§4.5 the plain way: the distribution of Σ s_t D_t over every sign vector, one item at a time."""
    sums = {0: 1}
    for d in diffs:
        step = {}
        for x, c in sums.items():
            step[x + d] = step.get(x + d, 0) + c
            step[x - d] = step.get(x - d, 0) + c
        sums = step
    return sum(c for x, c in sums.items() if abs(x) >= abs(sum(diffs)))


@pytest.mark.parametrize("block_bytes", [7, rs.SUBSET_BLOCK_BYTES])
def test_fast_sign_flip_count_is_the_plain_count(monkeypatch, block_bytes):
    monkeypatch.setattr(rs, "SUBSET_BLOCK_BYTES", block_bytes)
    rng = random.Random(block_bytes)
    for _ in range(40):
        n = rng.randint(17, 60)
        diffs = [rng.randint(-300, 300) + rng.choice((0, 0, 2, 40)) for _ in range(n)]
        assert rs.sign_flip_count(diffs) == plain_count(diffs), diffs


def test_a_p_the_bound_settles_says_so_in_the_table():
    p = {"key": {"comparison": 1, "figure": "p"}, "label": "comparison 1 (treated): p",
         "published": "0.0000", "recomputed": "0.0000", "same": True, "difference": None,
         "reason": "below 0.00005 by Hoeffding's bound, not counted"}
    assert rs._figure_tables([p], [], []) == [
        "", "comparisons  p", "1 (treated)  0.0000",
        "    comparison 1 (treated): p: below 0.00005 by Hoeffding's bound, not counted"]


def test_hoeffding_bound_settles_only_below_both_limits():
    rng = random.Random(3)
    diffs = [rng.randint(-500, 3000) for _ in range(40)]
    exact = Fraction(rs.sign_flip_count(diffs), 2 ** 40)
    p, how = rs.sign_flip_p(diffs, 0.05)
    assert how == "bound" and exact < p < Fraction(5, 100000)
    assert rs.print_figure(p.numerator / p.denominator, 4) == rs.print_figure(exact.numerator / exact.denominator, 4)
    assert rs.sign_flip_p(diffs, float(p) / 2) == (exact, None)       # the bound is not below alpha
    weak = diffs[:20] + [-d for d in diffs[20:36]]
    assert rs.sign_flip_p(weak, 0.05)[1] is None                      # nor below 0.00005 here


@pytest.mark.parametrize("level, every, block_bytes", [((6, 14, 14), 3, rs.SUBSET_BLOCK_BYTES), ((2, 3, 3), 2, 7),
                                                       ((1, 1, 1), 4, 13)])
def test_sign_flip_enclosure_holds_the_exact_p_and_prints_as_it(monkeypatch, level, every, block_bytes):
    # Coarse levels floor away real bits and cut real tails (they settle few p: the exact count runs).
    monkeypatch.setattr(rs, "SIGN_FLIP_ENCLOSE_FROM", 0)
    monkeypatch.setattr(rs, "SIGN_FLIP_LEVELS", (level,))
    monkeypatch.setattr(rs, "SIGN_FLIP_FLOOR_EVERY", every)
    monkeypatch.setattr(rs, "SUBSET_BLOCK_BYTES", block_bytes)
    rng = random.Random(every)
    hows = set()
    for _ in range(50):
        n = rng.randint(1, 60)
        diffs = [rng.randint(-300, 300) + rng.choice((0, 0, 2, 40)) for _ in range(n)]
        exact = Fraction(rs.sign_flip_count(diffs), 2 ** n)   # the count itself: checked above
        if sum(diffs):
            low, high = rs.sign_flip_count(diffs, level)
            assert low <= exact <= high, diffs
            assert level[1] < 14 or high - low < Fraction(1, 10 ** 10), diffs   # floored past 2**44 only
        for alpha in (0.05, 0.2, float(exact)):
            p, how = rs.sign_flip_p(diffs, alpha)
            hows.add(how)
            assert how in ("enclosed", None) and (how == "enclosed" or p == exact)
            assert rs.print_figure(float(p), 4) == rs.print_figure(float(exact), 4), diffs
            assert (p <= Fraction(alpha)) == (exact <= Fraction(alpha)), diffs
    assert "enclosed" in hows and (level[1] >= 14 or None in hows)   # a coarse level settles some p only


def test_sign_flip_enclosure_straddling_alpha_falls_back_to_the_count(monkeypatch):
    monkeypatch.setattr(rs, "SIGN_FLIP_ENCLOSE_FROM", 0)
    diffs = [3] * 14 + [-3] * 6 + [5, -7]
    exact = Fraction(plain_count(diffs), 2 ** 22)                  # 782132 ÷ 2**22: prints 0.1865
    assert rs.sign_flip_count(diffs, (6, 14, 14)) == (exact, exact)    # no count past 2**44: none floored
    assert rs.sign_flip_p(diffs, 0.05) == rs.sign_flip_p(diffs, float(exact)) == (exact, "enclosed")
    low, high = rs.sign_flip_count(diffs, (2, 16, 16))               # 16-bit slots: floored from 2**13 on
    assert low < exact < high < exact + Fraction(1, 10 ** 3)
    monkeypatch.setattr(rs, "SIGN_FLIP_LEVELS", ((2, 16, 16),))
    assert rs.sign_flip_p(diffs, 0.05) == (exact, None)            # lo and hi print apart: counted
    assert rs.sign_flip_p(diffs, float(low)) == (exact, None)      # lo ≤ alpha < hi: counted
    monkeypatch.setattr(rs, "SIGN_FLIP_ENCLOSE_FROM", 23)
    assert rs.sign_flip_p(diffs, 0.05) == (exact, None)            # too few pairs to enclose


def test_sign_flip_enclosure_at_two_hundred_pairs_on_thousandths():
    rng = random.Random(5)
    diffs = [round(rng.gauss(1000, 12000)) for _ in range(200)]
    exact = Fraction(rs.sign_flip_count(diffs), 2 ** 200)
    p, how = rs.sign_flip_p(diffs, 0.05)
    low, high = rs.sign_flip_count(diffs, rs.SIGN_FLIP_LEVELS[0])       # 4-byte slots
    assert how == "enclosed" and p == low <= exact <= high and high - low < Fraction(1, 10 ** 6)
    assert rs.print_figure(float(p), 4) == rs.print_figure(float(exact), 4)
    assert [high - low < Fraction(1, 10 ** e) for e in (8, 9)] == [False, False]
    low8, high8 = rs.sign_flip_count(diffs, (8, 24, 24))                     # 8-byte slots: far finer
    assert low8 <= exact <= high8 and high8 - low8 < Fraction(1, 10 ** 15)
    alpha = float(exact)          # within the first enclosures: a finer one settles the side of alpha
    p, how = rs.sign_flip_p(diffs, alpha)
    assert how == "enclosed" and low < alpha < high and (p <= Fraction(alpha)) == (exact <= Fraction(alpha))


def test_any_in_range_comparison_fits_the_cap_at_the_first_level(monkeypatch):
    # 500 pairs about as far apart as values on [-100, 100] allow, S1 near 0 (p near 1).
    rng = random.Random(19)
    diffs = []
    for _ in range(500):
        diffs.append(rng.randint(199000, 200000) * (-1 if sum(diffs) > 0 else 1))
    assert (sum(diffs), math.gcd(*diffs)) == (-9153, 1)
    cap = rs.SIGN_FLIP_MAX_BYTES >> 20
    monkeypatch.setattr(rs, "SIGN_FLIP_MAX_BYTES", 0)              # what each level needs, not counted
    needs = [int(rs.sign_flip_count(diffs, level).split()[1]) for level in rs.SIGN_FLIP_LEVELS]
    # S1 near 0: only the counts up to the centre are kept, their mirror above it
    assert needs == [20, 35, 45, 85, 219] and needs[3] < cap == 120 < needs[4]
    assert rs.sign_flip_count(diffs) == "needs 2996 MiB, cap 0 MiB"   # the exact count: 64-byte counts


def test_a_slow_count_shows_how_far_it_is_on_a_terminal(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr(rs, "PROGRESS_AFTER", -1)
    diffs = [3] * 6 + [5, -7]
    for stream, shown in ((Terminal(), "12 25 37 50 62 75 87 100".split()), (io.StringIO(), [])):
        monkeypatch.setattr(sys, "stderr", stream)
        assert rs.sign_flip_count(diffs) == plain_count(diffs) == 2 * 24
        assert stream.getvalue() == "".join("\rthe sign-flip test: %s%% counted" % done for done in shown) + (
            "\n" if shown else "")


def test_sign_flip_count_over_its_memory_cap_is_refused(monkeypatch):
    diffs = [rng_d * 7 + 1 for rng_d in range(-30, 31)]
    monkeypatch.setattr(rs, "SIGN_FLIP_MAX_BYTES", 1000)
    p, why = rs.sign_flip_p(diffs, 0.05)
    assert (p, why) == (None, "needs 0 MiB, cap 0 MiB")
    monkeypatch.setattr(rs, "SIGN_FLIP_MAX_BYTES", 10 ** 6)
    assert rs.sign_flip_p(diffs, 0.05) == (Fraction(plain_count(diffs), 2 ** 61), None)


# ---------------------------------------------------------------- SplitMix64

def splitmix64_reference(seed, count):
    state, out = seed, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) % 2 ** 64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2 ** 64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2 ** 64
        out.append(z ^ (z >> 31))
    return out


def splitmix64(seed, count):
    """The script's SplitMix64 outputs, read out of its packed chunks slot by slot."""
    outputs = []
    for z, _, k in rs._splitmix64_chunks(seed, count):
        outputs.extend(rs._slots(z, k))
    return outputs


def test_splitmix64_first_outputs():
    assert list(splitmix64(0, 3)) == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_splitmix64_across_chunks_and_wraparound():
    for seed in (0, 1234567, 2 ** 64 - 3):
        count = 2 * rs.SPLITMIX_CHUNK + 17
        assert list(splitmix64(seed, count)) == splitmix64_reference(seed, count)


def test_bootstrap_draws_map_each_output_to_an_index():
    for n in (1, 2, 3, 200, 1000003):
        expected = [((z >> 11) * n) >> 53 for z in splitmix64_reference(99, rs.SPLITMIX_CHUNK + 5)]
        assert list(rs.bootstrap_draws(99, n, rs.SPLITMIX_CHUNK + 5)) == expected


def test_bootstrap_seed():
    digest = hashlib.sha256(b"s_0a1b2c3d:1").digest()
    assert rs.bootstrap_seed("s_0a1b2c3d", 1) == int.from_bytes(digest[:8], "big")


# ---------------------------------------------------------------- printing

@pytest.mark.parametrize("x, places, text", [
    (2.2, 3, "2.200"),
    (0.125, 2, "0.13"),           # an exact half goes away from zero
    (-0.125, 2, "-0.13"),
    (1.005, 2, "1.00"),           # 1.005 is 1.00499999… as a double
    (65.55, 1, "65.6"),           # where round() gives 65.5
    (-0.0004, 3, "0.000"),        # prints as zero: unsigned
    (0.0, 4, "0.0000"),
    (-12.3456, 2, "-12.35"),
    (1.0, 4, "1.0000"),
])
def test_print_figure(x, places, text):
    assert rs.print_figure(x, places) == text


@pytest.mark.parametrize("x, text", [
    (-0.0003, "-0.0003"),         # keeps its side of zero with one more place
    (0.00004, "0.00004"),
    (-0.0000051, "-0.00001"),     # rounds to a non-zero digit at the fifth place
    (-0.0000049, "-0.000005"),
    (4e-8, "0.000000"),           # still zeros after three more places
    (-4e-8, "-0.000000"),         # … and keeps its sign
    (0.0, "0.000"),
    (0.0005, "0.001"),
    (-1.0004, "-1.000"),
])
def test_print_comparison_figure(x, text):
    assert rs.print_comparison_figure(x, 3) == text


def test_same_reads_the_page_places_and_tolerance():
    result = rs.Result()

    def figure(name, *rest):
        rs.decimal_figure(result, {"arm": 1, "figure": name}, "arm 1", *rest)
    figure("a", "-0.0003", -0.00034, 3, 1, rs.print_comparison_figure)   # near zero: 4 places keep its side
    figure("b", "2.200", 2.2011, 3, 1)          # one unit apart: same
    figure("c", "2.200", 2.2024, 3, 1)          # two units: differs, by +2 units of the last place
    figure("d", "56.1", 56.14, 1, 0)            # a model's figure: exact
    figure("e", "56.1", 56.16, 1, 0)
    figure("f", None, None, 3, 1)               # on neither side: not counted
    figure("g", None, 1.0, 3, 1)                # one side only
    figure("h", "2.210", 2.2, 3, 1)             # recomputed below the page: a negative difference
    figure("i", "0.0005", 0.00049, 3, 1, rs.print_comparison_figure)     # 0.000 at 3 places, 0.0005 at 4
    assert [(f["label"], f["recomputed"], f["same"], f["difference"]) for f in result.figures] == [
        ("arm 1: a", "-0.0003", True, None), ("arm 1: b", "2.201", True, None), ("arm 1: c", "2.202", False, 2),
        ("arm 1: d", "56.1", True, None), ("arm 1: e", "56.2", False, 1), ("arm 1: g", "1.000", False, None),
        ("arm 1: h", "2.200", False, -10), ("arm 1: i", "0.0005", True, None)]
    assert result.figures[2]["key"] == {"arm": 1, "figure": "c"}


def test_exact_units_never_passes_through_a_float():
    assert rs.exact_units("55.2", 3) == 55200
    assert rs.exact_units("55.200", 3) == 55200
    assert rs.exact_units("-0.005", 3) == -5
    assert rs.exact_units("7", 3) == 7000
    assert rs.exact_units("33.1", 1) == 331


def blended(seat):
    """The index a seat's printed dimensions blend to (rubric.md §8, the scripts' shared code)."""
    return rs.fitness_index([float(seat[d]) for d in rs.DIMENSIONS])


def test_scorecard_blend_and_grade():
    seat = {"fitness_index": "67.0", "grade": "B", "rubric": "2.4", "survival": "90.0",
            "economy": "90.0", "social": "50.0", "adaptation": "40.0", "competitiveness": "40.0"}
    assert blended(seat) == 67.0      # 22.5 + 22.5 + 10 + 6 + 6
    seat["fitness_index"] = rs.print_figure(blended(seat), 1)
    assert rs.scorecard_fault(seat) is None
    seat["social"] = "49.9"        # only two dimensions at 50 or more: a B reads C
    seat["fitness_index"] = rs.print_figure(blended(seat), 1)
    assert "give C" in rs.scorecard_fault(seat)
    seat["grade"] = "C"
    assert rs.scorecard_fault(seat) is None
    seat["rubric"] = "1.0"         # no breadth rule under 1.0
    assert "give B" in rs.scorecard_fault(seat)


# ---------------------------------------------------------------- hand-worked studies

TRIALS_HEADER = ",".join(rs.TRIALS)
SEATS_HEADER = ",".join(rs.SEATS)
STUDY = "s_0a1b2c3d"


def trial_row(trial, arm, value, rule, level="0.95", pair="in", map_seed=None, canary=rs.CANARY):
    label = "control" if arm == 0 else "treated"
    in_comparison = "" if arm == 0 else "true"
    return ",".join([
        STUDY, str(trial), str(arm), label, "m_%012x" % (trial * 10 + arm), str(map_seed or 1000 + trial),
        "77", "completed", "400", "400", "", "fitness_index", value, "", pair, "", in_comparison,
        rule, level, "frontier-12x12", "sha256:00", "2.4", "paired-v3", canary])


def seat_rows(trial, arm, fitness):
    dims = [fitness] * 5
    focal = ",".join([STUDY, str(trial), str(arm), "1", "Seat 1", "model-a", "0.6.12", "true", "true", "2.4",
                      fitness, "C", "1", "active"] + dims + ["600", "0", "0", "1.0"] + ["1"] * 14
                     + ["0", "0", "0.042", rs.CANARY])
    guest = ",".join([STUDY, str(trial), str(arm), "2", "Seat 2", "guest", "", "false", "true", "2.4",
                      "40.0", "D", "2", "active"] + ["40.0"] * 5 + ["", "", "", ""] + ["1"] * 14
                     + ["0", "0", "0.042", rs.CANARY])
    return [focal, guest]


CONTROL = ["50.0", "52.0", "54.0"]
TREATED = ["51.0", "54.0", "57.0"]     # D = 1, 2, 3 points


def write_study(root, rule, reading_changes=None, trials_tamper=None):
    """A three-trial study, control 50/52/54 against 51/54/57, on three distinct maps."""
    trials, seats = [TRIALS_HEADER], [SEATS_HEADER]
    for t in range(3):
        for arm, value in ((0, CONTROL[t]), (1, TREATED[t])):
            trials.append(trial_row(t + 1, arm, value, rule))
            seats.extend(seat_rows(t + 1, arm, value))
    if trials_tamper:
        trials = trials_tamper(trials)
    study_dir = root / "u" / "hand" / "studies" / STUDY
    study_dir.mkdir(parents=True)
    (study_dir / "trials.csv").write_text("\r\n".join(trials) + "\r\n", encoding="utf-8")
    (study_dir / "seats.csv").write_text("\r\n".join(seats) + "\r\n", encoding="utf-8")
    reading = hand_reading(rule)
    for key, value in (reading_changes or {}).items():
        reading["comparisons"][0][key] = value
    card = {"id": STUDY, "kind": "paired", "title": "hand", "recipe": "r_00000001",
            "address": "https://daishi.ai/u/hand/studies/" + STUDY, "reading": reading}
    (root / "u" / "hand.json").write_text(json.dumps({"handle": "hand", "studies": [card]}))
    (root / "u" / "hand" / "recipes").mkdir()
    (root / "u" / "hand" / "recipes" / "r_00000001.json").write_text(
        json.dumps({"id": "r_00000001", "anytime": {"rho": 0.5}}))
    return study_dir


def reference_bootstrap(diffs, alpha):
    """The percentile bootstrap written out the plain way, one draw at a time."""
    n, b_count = len(diffs), 4000
    seed = int.from_bytes(hashlib.sha256(("%s:1" % STUDY).encode()).digest()[:8], "big")
    draws = iter(splitmix64_reference(seed, b_count * n))
    means = sorted(sum(diffs[((next(draws) >> 11) * n) >> 53] for _ in range(n)) / (n * 1000)
                   for _ in range(b_count))

    def q(p):
        h = (b_count - 1) * p
        f = math.floor(h)
        return means[f] + (h - f) * (means[f + 1] - means[f])
    return q(alpha / 2), q(1 - alpha / 2)


def hand_reading(rule):
    # D = 1000, 2000, 3000 thousandths: mean 2, spread 1, alpha 0.05.
    t2 = 4.302652729749462                                  # t(2, 0.975)
    if rule == "fixed":
        half = t2 * 1.0 / math.sqrt(3)                      # 2.48413…
        boot = reference_bootstrap([1000, 2000, 3000], 0.05)
        bootstrap = [rs.print_figure(boot[0], 3), rs.print_figure(boot[1], 3)]
    else:
        nr2 = 3 * 0.25
        half = math.sqrt(2 * (nr2 + 1) / (9 * 0.25) * math.log(math.sqrt(nr2 + 1) / 0.05))   # 2.2573…
        bootstrap = None
    # Arms: 50/52/54 (spread 2) and 51/54/57 (spread 3); model-a: 3180 tenths over 6 seats.
    arm_half = [t2 * 2 / math.sqrt(3), t2 * 3 / math.sqrt(3)]
    model_se = math.sqrt(6 * 115200 / (5 * 6 ** 4)) / 10
    model_half = 2.5705818356363146 * model_se            # t(5, 0.975)
    return {
        "rubric": "2.4", "metric": "fitness_index", "effect": "difference", "direction": "higher",
        "range": [0, 100], "stoppingRule": rule, "comparisonLevel": "0.95",
        "counts": {"trials": 3, "rows": 6, "valued": 6, "seats": 12, "noValue": {},
                   "pairsIn": 3, "pairsOut": 0},
        "comparisons": [{"arm": 1, "label": "treated", "n": 3, "mean": "2.000",
                         "interval": [rs.print_figure(2 - half, 3), rs.print_figure(2 + half, 3)],
                         "mapInterval": None, "maps": 3, "p": "0.2500", "bootstrap": bootstrap,
                         "verdict": "inconclusive", "withheld": None}],
        "arms": [{"arm": 0, "label": "control", "n": 3, "mean": "52.00",
                  "interval": ["%.2f" % (52 - arm_half[0]), "%.2f" % (52 + arm_half[0])]},
                 {"arm": 1, "label": "treated", "n": 3, "mean": "54.00",
                  "interval": ["%.2f" % (54 - arm_half[1]), "%.2f" % (54 + arm_half[1])]}],
        "models": [{"model": "model-a", "seats": 6, "trials": 6, "mean": "53.0",
                    "interval": ["%.1f" % (53 - model_half), "%.1f" % (53 + model_half)]}],
    }


def run_hand(root, *extra):
    study_dir = root / "u" / "hand" / "studies" / STUDY
    return run_script(SCRIPT, "https://daishi.ai/u/hand/studies/" + STUDY, "--json",
                      "--trials", study_dir / "trials.csv", "--seats", study_dir / "seats.csv",
                      "--page", root / "u" / "hand.json",
                      "--recipe", root / "u" / "hand" / "recipes" / "r_00000001.json", *extra)


@pytest.mark.parametrize("rule", ["fixed", "anytime"])
def test_hand_worked_study(tmp_path, rule):
    write_study(tmp_path, rule)
    hand = hand_reading(rule)["comparisons"][0]
    assert hand["interval"] == (["-0.484", "4.484"] if rule == "fixed" else ["-0.257", "4.257"])
    done = run_hand(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    figures = {f["label"]: f for f in out["figures"]}
    assert figures["comparison 1 (treated): interval low"]["recomputed"] == float(hand["interval"][0])
    assert figures["comparison 1 (treated): p"]["recomputed"] == 0.25
    assert figures["model model-a: interval low"]["recomputed"] == 50.3
    assert figures["arm 1 (treated): interval high"]["recomputed"] == 61.45
    assert figures["arm 1 (treated): interval high"]["key"] == {"arm": 1, "figure": "interval high"}
    assert figures["model model-a: seats"]["key"] == {"model": "model-a", "figure": "seats"}
    assert figures["comparison 1 (treated): n"] == {
        "key": {"comparison": 1, "figure": "n"}, "label": "comparison 1 (treated): n",
        "published": 3, "recomputed": 3, "same": True, "difference": None}
    assert figures["trial 2 arm 1: value from its focal seats"] == {
        "key": {"trial": 2, "arm": 1, "figure": "value"}, "label": "trial 2 arm 1: value from its focal seats",
        "published": 54.0, "recomputed": 54.0, "same": True, "difference": None,
        "file": "trials.csv", "line": 5}
    assert ("comparison 1 (treated): bootstrap low" in figures) == (rule == "fixed")
    # 11 comparison figures (8 without bootstrap or map interval), 4 per arm, 5 for the model,
    # 6 trial values; 26 checks (25, and every value within the range).
    expected_figures = (9 if rule == "fixed" else 7) + 8 + 5 + 6
    assert out["summary"] == {"figuresSame": expected_figures, "figuresCompared": expected_figures,
                              "figuresNotRecomputed": 0, "checksAgree": 26, "checksMade": 26}
    assert (out["script"], out["exit"], out["study"]) == (SCRIPT, 0, STUDY)


def test_hand_worked_study_catches_one_unit_too_many(tmp_path):
    write_study(tmp_path, "fixed", reading_changes={"mean": "2.002", "p": "0.2501"})
    done = run_hand(tmp_path)
    assert done.returncode == 1
    differs = [(f["label"], f["published"], f["recomputed"], f["difference"])
               for f in json.loads(done.stdout)["figures"] if not f["same"]]
    assert differs == [("comparison 1 (treated): mean", 2.002, 2.0, -2),
                       ("comparison 1 (treated): p", 0.2501, 0.25, -1)]


def test_withheld_verdict_is_a_check(tmp_path):
    write_study(tmp_path, "fixed", reading_changes={"verdict": None, "withheld": "owner_stop"})
    out = json.loads(run_hand(tmp_path).stdout)
    assert not any("verdict" in f["label"] for f in out["figures"])
    assert {"check": "comparison 1: verdict withheld (owner_stop), none beside none",
            "agrees": True, "detail": None} in out["checks"]
    assert any("owner_stop" in t for t in out["trusted"])
    write_study(tmp_path / "b", "fixed", reading_changes={"verdict": "better", "withheld": "owner_stop"})
    done = run_hand(tmp_path / "b")
    assert done.returncode == 1


@pytest.mark.parametrize("page, places, wanted", [
    ("2.000", 3, 3), ("2", 3, 3), ("2.0000", 3, 3), ("0.2500", 4, 4), ("0", 4, 4),
    ("0.0004", 3, 4),              # not 0 but would print as zero: one more place keeps its side
    ("-0.00004", 3, 5), ("0.0006", 3, 3),      # 0.0006 prints 0.001 at 3 places
    ("0.0005", 3, 4), ("-0.0005", 3, 4),       # under 0.0005 (0.000 at 3 places), rounded up at the 4th
    ("0.00005", 3, 5), ("-0.00005", 3, 5), ("0.000005", 3, 6), ("-0.000005", 3, 6), ("-0.00005", 4, 5),
    ("0.00050", 3, 4), ("0.0015", 3, 3), ("0.00051", 3, 3),    # 0.0005 shows at 4 places; past it, at 3
    ("0.000", 3, 3), ("0.000000", 3, 6), ("-0.000000", 3, 6),   # zero itself; a tiny figure
    ("-0.000", 3, 6), ("0.0000", 3, 3), ("0.00000", 4, 4), ("0.0000004", 4, 7),
])
def test_six_places_read_from_the_page_figure(page, places, wanted):
    assert rs.six_places(page, places, rs.print_comparison_figure) == wanted
    assert rs.six_places(page, places, rs.print_figure) == places   # p, an arm's, a model's


@pytest.mark.parametrize("page, ours, same, reason", [
    ("0.000", 0.0, True, None), ("0.000", 0.0006, True, None),            # 0.001 against 0.000: one unit
    ("0.000", -0.0003, False, "printed at 3 places; \u00a76 prints 4"),   # not 0: §6 keeps its side
    ("0.000", 0.00004, False, "printed at 3 places; \u00a76 prints 5"),
    ("0.000000", -4e-8, True, None), ("0.000000", 4e-8, True, None),      # tiny: zeros at 6 places
    ("0.000000", 0.0, False, "printed at 6 places; \u00a76 prints 3"),
    ("0.000000", 0.00002, False, "printed at 6 places; \u00a76 prints 5"),
    ("0.0000", 0.0001, False, "printed at 4 places; \u00a76 prints 3"),  # no figure prints so
])
def test_an_unsigned_zero_on_the_page_is_read_at_the_places_of_ours(page, ours, same, reason):
    result = rs.Result()
    rs.decimal_figure(result, {"comparison": 1, "figure": "mean"}, "c", page, ours, 3, 1, rs.print_comparison_figure)
    assert (result.figures[0]["same"], result.figures[0].get("reason")) == (same, reason)


def pairs_study(root, pairs, bounds):
    """A fixed-rule study of (control, treated) values of a metric declared on `bounds`, one trial a pair on a
    map of its own; its page every figure as the script recomputes it, for a test to set the one it checks."""
    trials, seats = [TRIALS_HEADER], [SEATS_HEADER]
    for trial, values in enumerate(pairs, 1):
        for arm, value in enumerate(values):
            trials.append(trial_row(trial, arm, value, "fixed").replace(",fitness_index,", ",turns_per_round,"))
            seats.extend(seat_rows(trial, arm, "50.0"))
    folder = root / "u" / "hand" / "studies" / STUDY
    folder.mkdir(parents=True)
    for name, rows in (("trials.csv", trials), ("seats.csv", seats)):
        (folder / name).write_text("\r\n".join(rows) + "\r\n", encoding="utf-8")
    n = len(pairs)
    reading = {"rubric": "2.4", "metric": "turns_per_round", "effect": "difference", "direction": "higher",
               "range": list(bounds), "stoppingRule": "fixed", "comparisonLevel": "0.95",
               "counts": {"trials": n, "rows": 2 * n, "valued": 2 * n, "seats": 4 * n, "noValue": {},
                          "pairsIn": n, "pairsOut": 0},
               "comparisons": [{"arm": 1, "label": "treated", "withheld": None}],
               "arms": [{"arm": 0, "label": "control"}, {"arm": 1, "label": "treated"}],
               "models": [{"model": "model-a"}]}
    files = [rs.read_trials((folder / "trials.csv").read_bytes()), rs.read_seats((folder / "seats.csv").read_bytes())]
    for f in rs.recompute_reading(STUDY, *files, reading, None)[1].figures:
        (kind, which), = ((k, v) for k, v in f["key"].items() if k != "figure")
        entry = next(e for e in reading[kind + "s"] if e.get("arm" if kind == "comparison" else kind) == which)
        name, end = f["key"]["figure"], None
        if name.endswith((" low", " high")):
            name, end = name.rsplit(" ", 1)
        name = name.replace("map interval", "mapInterval")
        if end:
            entry.setdefault(name, [None, None])[end == "high"] = f["recomputed"]
        else:
            entry[name] = f["recomputed"]
    write_page(root, reading)
    return reading


def write_page(root, reading):
    card = {"id": STUDY, "kind": "paired", "title": "hand", "recipe": "r_00000001",
            "address": "https://daishi.ai/u/hand/studies/" + STUDY, "reading": reading}
    (root / "u" / "hand.json").write_text(json.dumps({"handle": "hand", "studies": [card]}))


def main_exit(root, capsys):
    """The script run in this process on the study under root: its exit status and the figures that differ."""
    folder = root / "u" / "hand" / "studies" / STUDY
    status = rs.main(["https://daishi.ai/u/hand/studies/" + STUDY, "--json", "--trials", str(folder / "trials.csv"),
                      "--seats", str(folder / "seats.csv"), "--page", str(root / "u" / "hand.json")])
    out = json.loads(capsys.readouterr().out)
    return status, [(f["label"], f.get("reason")) for f in out["figures"] if not f["same"]]


@pytest.mark.parametrize("diffs, figure, text, fewer", [
    ([1] * 9 + [0] * 11, "mean", "0.0005", "0.0003"),         # mean 0.00045: 0.000 at 3 places, 0.0005 at 4
    ([11, 9, 25, 35], "interval", "0.0005", "0.0003"),        # the low end, 0.000468…
    ([-5, 56, 28, 20, 44], "interval", "-0.0005", "-0.0003"),  # -0.000461…
    ([37, 2, 24, 7, 45], "interval", "-0.00005", "-0.00003"),  # -0.0000461…
    ([24, -7, 38, 51, 28], "interval", "0.000005", "0.000003"),  # 0.00000478…
    ([39, 3, 36, 49], "interval", "-0.000005", "-0.000003"),   # -0.00000477…
])
def test_a_near_zero_figure_that_prints_a_5_is_the_page_s(tmp_path, capsys, diffs, figure, text, fewer):
    reading = pairs_study(tmp_path, [("5.000", "%.3f" % (5 + d / 1000)) for d in diffs], (0, 10))
    entry = reading["comparisons"][0]
    ours = entry[figure] if figure == "mean" else entry[figure][0]
    assert ours == text
    assert main_exit(tmp_path, capsys) == (0, [])
    label = "comparison 1 (treated): %s" % ("mean" if figure == "mean" else "interval low")
    for page, reason in ((fewer, None), (text.replace("5", "6"), "printed at %d places; \u00a76 prints %d"),
                         ("0.000", "printed at 3 places; \u00a76 prints %d")):
        places = len(page.partition(".")[2])
        if figure == "mean":
            entry["mean"] = page
        else:
            entry["interval"][0] = page
        write_page(tmp_path, reading)
        wanted = len(text.partition(".")[2]) if page == "0.000" else places - 1
        assert main_exit(tmp_path, capsys) == (1, [(label, reason and reason % ((wanted,) if page == "0.000"
                                                                                  else (places, wanted)))]), page


def test_the_exact_test_at_the_widest_in_range_differences_is_counted(tmp_path, capsys, monkeypatch):
    # 170 pairs 199.999 and -199.998 apart on [-100, 100]: 0.9389, once refused as over a cap.
    diffs = [199999, -199998] * 85
    exact = Fraction(plain_count(diffs), 2 ** 170)                 # 7396 sums: the plain way is quick
    monkeypatch.setattr(rs, "sign_flip_p", functools.lru_cache(rs.sign_flip_p))   # counted once, read thrice
    reading = pairs_study(tmp_path, [("-100.000", "99.999"), ("100.000", "-99.998")] * 85, (-100, 100))
    assert reading["comparisons"][0]["p"] == rs.print_figure(float(exact), 4) == "0.9389"
    assert rs.sign_flip_p(tuple(diffs), 0.05)[1] == "enclosed"
    assert main_exit(tmp_path, capsys) == (0, [])
    for page in ("0.9388", "0.9390"):                               # p: exact, not a unit off
        reading["comparisons"][0]["p"] = page
        write_page(tmp_path, reading)
        assert main_exit(tmp_path, capsys) == (1, [("comparison 1 (treated): p", None)])


def study_at_own_figures(root):
    """The hand study with trial 3 on trial 2's map (so a map interval exists) and a page whose
    every figure is the script's own: each figure's (reading path, recomputed text, places)."""
    write_study(root, "fixed", trials_tamper=lambda rows: [r.replace(",1003,77,", ",1002,77,") for r in rows])
    folder = root / "u" / "hand" / "studies" / STUDY
    trials = rs.read_trials((folder / "trials.csv").read_bytes())
    seats = rs.read_seats((folder / "seats.csv").read_bytes())
    reading = hand_reading("fixed")
    reading["comparisons"][0].update(maps=2, mapInterval=["0", "0"])
    ours = {f["label"]: f["recomputed"] for f in rs.recompute_reading(STUDY, trials, seats, reading, None)[1].figures}
    kinds = {}
    for key, (group, at, places) in {
            "comparison 1 (treated): ": ("comparisons", 0, 3), "arm 1 (treated): ": ("arms", 1, 2),
            "model model-a: ": ("models", 0, 1)}.items():
        for figure in ("mean", "interval", "map interval", "bootstrap", "p"):
            for end, label in (((None, ""),) if figure in ("mean", "p") else ((0, " low"), (1, " high"))):
                name = key + figure + label
                if name in ours:
                    kinds[name] = ((group, at, figure.replace("map interval", "mapInterval"), end),
                                   ours[name], 4 if figure == "p" else places)
    for path, text, _ in kinds.values():
        entry = reading[path[0]][path[1]]
        if path[3] is None:
            entry[path[2]] = text
        else:
            entry[path[2]][path[3]] = text
    return trials, seats, reading, kinds


def test_each_figure_at_other_places_than_six_gives_differs(tmp_path):
    trials, seats, reading, kinds = study_at_own_figures(tmp_path)
    assert len(kinds) == 14       # a comparison's 8 (mean, p, three intervals), an arm's 3, a model's 3
    # maps 1001 (D 1000) and 1002 (D 2000, 3000): E = -3000, 3000, SE 0.6667, t(1) 12.706
    assert kinds["comparison 1 (treated): map interval low"][1:] == ("-6.471", 3)
    assert kinds["model model-a: mean"][1:] == ("53.0", 1)

    def figure(name, text):
        path = kinds[name][0]
        page = json.loads(json.dumps(reading))
        entry = page[path[0]][path[1]]
        if path[3] is None:
            entry[path[2]] = text
        else:
            entry[path[2]][path[3]] = text
        found = [f for f in rs.recompute_reading(STUDY, trials, seats, page, None)[1].figures if f["label"] == name]
        return found[0]["recomputed"], found[0]["same"], found[0].get("reason")

    for name, (_, text, places) in kinds.items():
        assert figure(name, text) == (text, True, None), name
        units = rs.exact_units(text, places)
        loose = 0 if name.endswith(": p") or name.startswith("model") else 1
        for step, same in ((loose, True), (loose + 1, False)):
            near = rs._units_text(abs(units + step), places, units + step < 0)
            assert figure(name, near) == (text, same, None), (name, near)
        fewer = rs.print_figure(rs.exact_units(text, places) / 10 ** places, places - 1)
        assert figure(name, fewer) == (
            text, False, "printed at %d places; \u00a76 prints %d" % (places - 1, places)), name
        assert figure(name, text + "0") == (
            text, False, "printed at %d places; \u00a76 prints %d" % (places + 1, places)), name


@pytest.mark.parametrize("key, page, ours, reason", [
    ("p", "0", "0.2500", "printed at 0 places; \u00a76 prints 4"),
    ("mean", "2", "2.000", "printed at 0 places; \u00a76 prints 3"),
    ("mean", "2.0000", "2.000", "printed at 4 places; \u00a76 prints 3"),
])
def test_figure_at_other_places_says_so(tmp_path, key, page, ours, reason):
    study_dir = write_study(tmp_path, "fixed", reading_changes={key: page})
    done = run_hand(tmp_path)
    assert done.returncode == 1
    name = "comparison 1 (treated): " + key
    wrong = [(f["label"], f["shown"], f["reason"], f["difference"])
             for f in json.loads(done.stdout)["figures"] if not f["same"]]
    assert wrong == [(name, {"published": page, "recomputed": ours}, reason, None)]
    done = run_script(SCRIPT, "https://daishi.ai/u/hand/studies/" + STUDY, "--trials", study_dir / "trials.csv",
                      "--seats", study_dir / "seats.csv", "--page", tmp_path / "u" / "hand.json", "--all")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    row = [i for i, line in enumerate(lines) if line.startswith(name + " ")][0]
    assert lines[row].split()[-3:] == [page, ours, "DIFFERS"]
    assert lines[row + 1] == "    (%s)" % reason          # the reason on a line of its own
    assert max(len(line) for line in lines) <= 100


def test_value_outside_the_range_fails_a_check_and_leaves_the_exact_test_unrun(tmp_path):
    write_study(tmp_path, "fixed", trials_tamper=lambda rows: [r.replace(",57.0,", ",200000.001,") for r in rows])
    done = run_hand(tmp_path)
    assert done.returncode == 1 and done.stderr == ""
    out = json.loads(done.stdout)
    failed = [c for c in out["checks"] if not c["agrees"]]
    assert failed == [{"check": "every value within fitness_index's range [0, 100]", "agrees": False,
                       "detail": "trials.csv line 7: value 200000.001"}]
    figures = {f["label"]: f for f in out["figures"]}
    assert figures["comparison 1 (treated): p"] == {
        "key": {"comparison": 1, "figure": "p"}, "label": "comparison 1 (treated): p", "published": 0.25,
        "recomputed": None, "same": False, "difference": None}
    assert figures["comparison 1 (treated): verdict"]["recomputed"] is None
    assert figures["comparison 1 (treated): mean"]["recomputed"] == 66649.667   # (1 + 2 + 199946.001) ÷ 3


def test_sign_flip_count_over_its_cap_is_not_recomputed_exit_2(tmp_path, monkeypatch, capsys):
    """p, and the verdict that needs it, not recomputed: never same, never a difference; the
    study not fully audited, exit 2."""
    write_study(tmp_path, "fixed")
    study_dir = tmp_path / "u" / "hand" / "studies" / STUDY
    monkeypatch.setattr(rs, "SIGN_FLIP_MAX_BYTES", 0)
    argv = ["https://daishi.ai/u/hand/studies/" + STUDY, "--trials", str(study_dir / "trials.csv"),
            "--seats", str(study_dir / "seats.csv"), "--page", str(tmp_path / "u" / "hand.json")]
    assert rs.main(argv + ["--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert [c for c in out["checks"] if not c["agrees"]] == []
    assert [(f["label"], f["same"], f["reason"]) for f in out["figures"] if not f["same"]] == [
        (label, None, "not recomputed (the exact count needs 0 MiB, cap 0 MiB)")
        for label in ("comparison 1 (treated): p", "comparison 1 (treated): verdict")]
    assert (out["summary"]["figuresNotRecomputed"], out["summary"]["figuresCompared"] - out["summary"]["figuresSame"]) == (2, 2)
    assert out["verdict"] == "NOT RECOMPUTED (the study not fully audited): comparison 1 p, comparison 1 verdict"
    assert rs.main(argv) == 2
    lines = capsys.readouterr().out.splitlines()
    assert "DIFFERS" not in "\n".join(lines[:-1])
    assert "    comparison 1 (treated): p: not recomputed (the exact count needs 0 MiB, cap 0 MiB)" in lines
    assert any(line.startswith("figures that match: ") and line.endswith(", 2 not recomputed") for line in lines)
    assert rs.main(argv + ["--all"]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[-1] for line in lines if line.startswith("comparison 1 (treated): p ")] == ["RECOMPUTED"]


def test_missing_canary_is_a_failed_check_not_unreadable(tmp_path):
    write_study(tmp_path, "fixed", trials_tamper=lambda rows: rows[:2] + [rows[2].rsplit(",", 1)[0] + ","] + rows[3:])
    done = run_hand(tmp_path)
    assert done.returncode == 1
    failed = [c for c in json.loads(done.stdout)["checks"] if not c["agrees"]]
    assert [c["check"] for c in failed] == ["canary on every trials.csv row"]
    assert failed[0]["detail"].startswith("trials.csv line 3")



def test_checks_numbered_as_study_md_section_7(tmp_path, monkeypatch, capsys):
    """Checks 1-25 first, so check 1 is the canary even beside a withheld verdict (26); then the
    check §7 does not list: the values within the range (27). A p not recomputed besides: exit 2,
    the verdict naming both."""
    write_study(tmp_path, "fixed", reading_changes={"verdict": None, "withheld": "owner_stop"},
                trials_tamper=lambda rows: rows[:2] + [rows[2].rsplit(",", 1)[0] + ","] + rows[3:])
    study_dir = tmp_path / "u" / "hand" / "studies" / STUDY
    monkeypatch.setattr(rs, "SIGN_FLIP_MAX_BYTES", 0)
    argv = ["https://daishi.ai/u/hand/studies/" + STUDY, "--trials", str(study_dir / "trials.csv"),
            "--seats", str(study_dir / "seats.csv"), "--page", str(tmp_path / "u" / "hand.json")]
    assert rs.main(argv + ["--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    names = [c["check"] for c in out["checks"]]
    assert len(names) == 27
    assert names[:2] == ["canary on every trials.csv row", "canary on every seats.csv row"]
    assert names[24] == "the page's direction is the files'"
    assert names[25:] == ["comparison 1: verdict withheld (owner_stop), none beside none",
                          "every value within fitness_index's range [0, 100]"]
    assert out["verdict"] == "FAILS: check 1; NOT RECOMPUTED (the study not fully audited): comparison 1 p"
    assert rs.main(argv + ["--all"]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert "  1. canary on every trials.csv row: FAILS (trials.csv line 3: canary missing or altered)" in lines
    assert " 26. comparison 1: verdict withheld (owner_stop), none beside none: agrees" in lines
    assert " 27. every value within fitness_index's range [0, 100]: agrees" in lines


# ---------------------------------------------------------------- unreadable files

@pytest.mark.parametrize("tamper, message", [
    (lambda rows: rows[:1] + [rows[1].replace(",50.0,", ",50.0x,")] + rows[2:],
     "trials.csv line 2, column value: '50.0x'"),
    (lambda rows: rows[:1] + [rows[2], rows[1]] + rows[3:], "trials.csv line 3: out of order"),
    (lambda rows: [rows[0].replace("value", "score")] + rows[1:], "trials.csv line 1: the header"),
    (lambda rows: rows[:1] + [rows[1].replace(",in,", ",maybe,")] + rows[2:], "column pair: 'maybe'"),
    (lambda rows: rows[:1] + [rows[1] + ",extra"] + rows[2:], "trials.csv line 2: 25 fields"),
    (lambda rows: rows[:1] + [rows[1].replace(",fixed,0.95,", ",fixed,1.5,")] + rows[2:],
     "column comparison_level: '1.5'"),
])
def test_unreadable_trials_exit_2_naming_file_row_column(tmp_path, tamper, message):
    write_study(tmp_path, "fixed", trials_tamper=tamper)
    done = run_hand(tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_bom_lf_accepted_and_non_utf8_refused(tmp_path):
    study_dir = write_study(tmp_path, "fixed")
    trials = study_dir / "trials.csv"
    trials.write_bytes(b"\xef\xbb\xbf" + trials.read_bytes().replace(b"\r\n", b"\n"))
    assert run_hand(tmp_path).returncode == 0
    trials.write_bytes(trials.read_bytes().replace(b"control", b"contr\xf4l", 1))
    done = run_hand(tmp_path)
    assert done.returncode == 2 and "trials.csv is not UTF-8" in done.stderr


def test_profile_without_the_card_or_reading(tmp_path):
    write_study(tmp_path, "fixed")
    profile = tmp_path / "u" / "hand.json"
    data = json.loads(profile.read_text())
    del data["studies"][0]["reading"]
    profile.write_text(json.dumps(data))
    done = run_hand(tmp_path)
    assert done.returncode == 2 and "holds no reading" in done.stderr
    profile.write_text("{not json")
    done = run_hand(tmp_path)
    assert done.returncode == 2 and "not valid JSON" in done.stderr


AMBIGUOUS_PAGES = {   # study.md §6: no one page to check, so the study cannot be read
    "a comparison listed twice": (lambda r: r["comparisons"].append(dict(r["comparisons"][0], verdict="better")),
                                  "reading.comparisons[1]: a second entry for arm 1"),
    "an arm numbered 2.0": (lambda r: r["arms"][1].update(arm=1.0),
                            "reading.arms[1].arm: 1.0 is not an integer"),
    "a comparison's arm a string": (lambda r: r["comparisons"][0].update(arm="1"),
                                    'reading.comparisons[0].arm: "1" is not an integer'),
    "a model listed twice": (lambda r: r["models"].append(dict(r["models"][0])),
                             "reading.models[1]: a second entry for model \"model-a\""),
    "models not a list": (lambda r: r.update(models={}), "reading.models is not a list"),
}


@pytest.mark.parametrize("case", sorted(AMBIGUOUS_PAGES))
def test_an_ambiguous_reading_is_unreadable_naming_the_field(tmp_path, case):
    edit, message = AMBIGUOUS_PAGES[case]
    write_study(tmp_path, "fixed")
    profile = tmp_path / "u" / "hand.json"
    data = json.loads(profile.read_text())
    edit(data["studies"][0]["reading"])
    profile.write_text(json.dumps(data))
    done = run_hand(tmp_path)
    assert done.returncode == 2 and json.loads(done.stdout)["exit"] == 2, done.stdout[-500:]
    assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_a_card_given_twice_is_unreadable(tmp_path):
    write_study(tmp_path, "fixed")
    profile = tmp_path / "u" / "hand.json"
    data = json.loads(profile.read_text())
    data["studies"].append(dict(data["studies"][0], reading={}))
    profile.write_text(json.dumps(data))
    done = run_hand(tmp_path)
    assert done.returncode == 2
    assert done.stderr.endswith("the profile holds 2 cards for %s (one per study)\n" % data["studies"][0]["id"])


# ---------------------------------------------------------------- the network

@pytest.mark.parametrize("address", [
    "https://daishi.ai/u/Kim/studies/s_eee65f53",            # upper case handle
    "https://daishi.ai/u/kim/studies/s_eee65f5",             # seven hex digits
    "https://daishi.ai/u/kim/studies/s_eee65f53/trials.csv",
    "https://daishi.ai/u/kim/studies/s_eee65f53;x=1",
    "ftp://daishi.ai/u/kim/studies/s_eee65f53",
    "https://daishi.ai/u/../studies/s_eee65f53",
    "kim/s_eee65f53",
])
def test_address_refused_before_any_request(fixtures_platform, address):
    before = len(fixtures_platform.requests)
    local = address.replace("https://daishi.ai", fixtures_platform.url)
    done = run_script(SCRIPT, local)
    assert done.returncode == 2 and "not a study address" in done.stderr
    assert len(fixtures_platform.requests) == before


def test_fixtures_served_and_saved(fixtures_platform, tmp_path):
    for handle, study in (("kim", "s_eee65f53"), ("ana-lab", "s_0ed90190")):
        save = tmp_path / study
        done = run_script(SCRIPT, "%s/u/%s/studies/%s" % (fixtures_platform.url, handle, study),
                          "--save", save)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "figures that match" in done.stdout and "DIFFERS" not in done.stdout
        saved = sorted(p.name for p in save.iterdir())
        assert saved == (["profile.json", "recipe.json", "saved.json", "seats.csv", "trials.csv"]
                         if handle == "ana-lab" else ["profile.json", "saved.json", "seats.csv", "trials.csv"])
        base = FIXTURES / "u" / handle / "studies" / study
        assert (save / "trials.csv").read_bytes() == (base / "trials.csv").read_bytes()
        # The saved copies read offline to the same result, with no server at all.
        offline = run_script(SCRIPT, "https://daishi.ai/u/%s/studies/%s" % (handle, study), "--json",
                             "--trials", save / "trials.csv", "--seats", save / "seats.csv",
                             "--page", save / "profile.json",
                             *(["--recipe", save / "recipe.json"] if handle == "ana-lab" else []))
        assert offline.returncode == 0
        counts = json.loads(offline.stdout)["summary"]
        assert counts["figuresSame"] == counts["figuresCompared"] > 40


def test_mixed_saved_and_served(fixtures_platform):
    base = FIXTURES / "u" / "kim" / "studies" / "s_eee65f53"
    before = len(fixtures_platform.requests)
    done = run_script(SCRIPT, fixtures_platform.url + "/u/kim/studies/s_eee65f53",
                      "--trials", base / "trials.csv")
    assert done.returncode == 0
    assert [r for r in fixtures_platform.requests[before:]] == ["/u/kim/studies/s_eee65f53/seats.csv", "/u/kim.json"]


def _answer(status, body, headers=()):
    def handler(request):
        request.send_response(status)
        for key, value in headers:
            request.send_header(key, value)
        data = body.encode()
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)
    return handler


def test_playing_study_prints_the_reason(tmp_path):
    path = "/u/kim/studies/s_eee65f53/trials.csv"
    with Platform(FIXTURES, faults={path: _answer(409, '{"reason": "trial 3 of 8 is still playing"}')}) as p:
        done = run_script(SCRIPT, p.url + "/u/kim/studies/s_eee65f53")
    assert done.returncode == 2
    assert "still playing" in done.stderr and "trial 3 of 8 is still playing" in done.stderr


def test_server_error_retried_once_then_refused():
    path = "/u/kim/studies/s_eee65f53/seats.csv"
    with Platform(FIXTURES, faults={path: _answer(503, '{"reason": "down"}')}) as p:
        done = run_script(SCRIPT, p.url + "/u/kim/studies/s_eee65f53")
        assert p.requests.count(path) == 2
    assert done.returncode == 2 and "503 Service Unavailable" in done.stderr


def test_server_error_once_then_served():
    path = "/u/kim/studies/s_eee65f53/seats.csv"
    failed = []

    def flaky(request):
        if not failed:
            failed.append(1)
            return _answer(502, "bad gateway")(request)
        return request.serve_file(path[1:])
    with Platform(FIXTURES, faults={path: flaky}) as p:
        done = run_script(SCRIPT, p.url + "/u/kim/studies/s_eee65f53")
    assert done.returncode == 0, done.stderr


def test_redirect_to_another_host_refused():
    path = "/u/kim.json"
    with Platform(FIXTURES) as other, Platform(
            FIXTURES, faults={path: _answer(302, "", [("Location", other.url.replace("127.0.0.1", "localhost") + path)])}) as p:
        done = run_script(SCRIPT, p.url + "/u/kim/studies/s_eee65f53")
        assert other.requests == []
    assert done.returncode == 2 and "another server" in done.stderr


def test_network_failure_is_exit_2():
    with Platform(FIXTURES) as p:
        url = p.url
    done = run_script(SCRIPT, url + "/u/kim/studies/s_eee65f53")
    assert done.returncode == 2 and "cannot reach" in done.stderr


def test_anytime_needs_its_recipe(tmp_path):
    root = tmp_path / "root"
    import shutil
    shutil.copytree(FIXTURES / "u", root / "u")
    shutil.rmtree(root / "u" / "ana-lab" / "recipes")
    with Platform(root) as p:
        done = run_script(SCRIPT, p.url + "/u/ana-lab/studies/s_0ed90190")
    assert done.returncode == 2 and "recipe" in done.stderr


# ---------------------------------------------------------------- the conformance corpus

TAMPERED = {   # what each tampered study must be caught on, and nothing else
    "s_0af9fd0c": "comparison 1 (tweak): mean",
    "s_7ed377cb": "the page's counts.valued is the files'",
    "s_ac8177ca": "canary on every seats.csv row",
    "s_88dc0cce": "trial 7 arm 1: value from its focal seats",
    "s_484eb471": "comparison 1 (tweak): p",
    "s_10575ef6": "arm 0 (control): mean",
    "s_a9b9a7f5": "model model-a: mean",
    "s_6032f782": "comparison 1 (tweak): verdict",
}


def _manifest_studies():
    """The corpus's studies; without it, their names (tests/corpus_index.json), each skipped by the fixtures."""
    return corpus.cases("studies_manifest.json")


def _check_outcome(study, done):
    assert done.returncode == study["expectedExit"], (study["id"], done.stdout[-2000:], done.stderr)
    assert "Traceback" not in done.stderr
    if study["expectedExit"] == 2:
        assert len(done.stderr.strip().splitlines()) == 1
        return
    out = json.loads(done.stdout)
    wrong = [f["label"] for f in out["figures"] if not f["same"]] + [c["check"] for c in out["checks"] if not c["agrees"]]
    assert wrong == ([TAMPERED[study["id"]]] if study["expectedExit"] == 1 else []), study["id"]


@pytest.mark.parametrize("study", _manifest_studies(), ids=lambda s: s["id"])
def test_conformance_served(conformance_platform, study):
    _check_outcome(study, run_script(SCRIPT, conformance_platform.url + study["address"], "--json"))


@pytest.mark.parametrize("study", _manifest_studies(), ids=lambda s: s["id"])
def test_conformance_offline(conformance, study):
    handle, study_id = study["handle"], study["id"]
    folder = conformance / "u" / handle / "studies" / study_id
    args = [study["url"], "--json", "--trials", folder / "trials.csv", "--seats", folder / "seats.csv",
            "--page", conformance / "u" / (handle + ".json")]
    if study.get("rule") == "anytime":
        profile = json.loads((conformance / "u" / (handle + ".json")).read_text())
        recipe = [c["recipe"] for c in profile["studies"] if c["id"] == study_id][0]
        args += ["--recipe", conformance / "u" / handle / "recipes" / (recipe + ".json")]
    _check_outcome(study, run_script(SCRIPT, *args))


def test_conformance_corpus_present_or_skipped(conformance):
    assert len(_manifest_studies()) == 24
