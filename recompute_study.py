#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
r"""Recompute a daishi.ai study page's reading from the study's own files (study.md).

    python3 recompute_study.py https://daishi.ai/u/<handle>/studies/<id>   # online
    python3 recompute_study.py /u/<handle>/studies/<id> --base URL   # its path, from URL
    python3 recompute_study.py DIR      # a folder --save wrote, read offline
    python3 recompute_study.py ADDRESS --matches   # every trial's match too, by recompute.py

Options (--help, README): --trials, --seats, --page, --recipe FILE (saved copies of the study's
files, any mix), --base URL, --save DIR, --against OLD, --matches (the study end to end, §8, by
recompute.py from this script's own folder) with --jobs N, --all, --json, --explain.
Exit status: 0 every figure matches and every check agrees; 1 a figure differs, a check fails or
--against finds a change; 2 the study cannot be read (still playing, no such study or a run set,
no reading or recipe, a network failure or the platform busy, a file not of the documented
form), a figure not recomputed (an exact sign-flip count over its memory cap), or an option
cannot be used; 130, 143, 129 Ctrl-C, SIGTERM, SIGHUP; 141 stdout closed. Python 3.9+, stdlib
only.

An audit guide. The data moves one way: gather, read, recompute, report, keep.
- The rules: study.md, in its order, from "arithmetic" and "§3 each trial's value" to "§8 a study
  end to end", each formula beside its section number; the appendix at the end holds the fast exact
  sign-flip count, its plain algorithm in its docstring. Under --explain each rule records the terms
  it computes a figure from by note (line 2189), in the shared block; explain (line 921) reads them
  back.
- Sent, and only by Network.get (line 2395), in the shared block, through
  Network.request (line 2446), Network.exchange (line 2482), Network.connection (line 2512) and
  ask (line 2541): GET of a record's address, to the server the user named (--base, DAISHI_BASE or
  the address given), a redirect followed only within that server, nothing else; with --matches,
  every match's requests too (recompute.py takes this block). Headers: Host, User-Agent
  (recompute_study.py/VERSION, under --matches too) and Accept-Encoding (gzip), always;
  Authorization (Basic) where that address holds user:password@, in the clear over http://; through
  a proxy the environment names (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, in lower case too, or the
  system's settings; proxy_for (line 2707)), the whole address to it for an http:// record, a
  CONNECT for an https:// one, and Proxy-Authorization (Basic) where the proxy's address holds
  user:password@. A proxy is spoken to in plain HTTP whatever its own address's scheme (as urllib
  does): that Proxy-Authorization crosses to it in the clear. Their modules (http.client, ssl,
  urllib.request, base64, selectors) imported at a run's first request; urllib.parse where an
  address is first split, by split (line 2681). One TLS context a run, one kept-alive connection per
  thread and server.
- The environment read: setting (line 2788), the one function that reads a variable of its own,
  reads DAISHI_BASE, DAISHI_TIMEOUT, DAISHI_BUSY (for settings (line 2767)) and TERM (for
  progress (line 2275): dumb, no control sequences); proxy_for (line 2707) the proxy variables;
  Network.connection (line 2512) opens connections: socket's DNS look-ups (the resolver's files),
  and ssl's default context, which reads the CA bundle (SSL_CERT_FILE, SSL_CERT_DIR), OpenSSL's
  configuration (OPENSSL_CONF) and SSLKEYLOGFILE (where it is set, ssl writes each connection's TLS
  secrets to the file it names); urllib's proxies ignore HTTP_PROXY where REQUEST_METHOD is set (as
  under CGI); terminal_width (line 2218) and Help (line 3086) the terminal's size (COLUMNS, LINES);
  Parser (line 3057), through argparse's gettext, the locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG:
  the language of argparse's own words, from the interpreter's translations).
- Written, made, renamed or removed, only under --save: new_copy (line 2982) makes DIR's parent
  folders (os.makedirs, before anything is downloaded, left in place) and a new folder
  .NAME.part-<12 hex digits> beside DIR (os.mkdir; os.urandom names it; under --matches one inside
  it beside each match's folder, from the thread that gathers it), named for removal before it
  exists; keep (line 3027) writes into such a folder, each write through writing (line 3001) under
  the lock that a signal takes: export/ and report/ (os.makedirs), the files (open "xb") and
  saved.json last, then placed (line 3010) makes the copy's name as an empty folder (os.mkdir:
  refused where that name is taken) and renames the new folder onto it (os.rename; os.rmdir of the
  empty one where it fails): each match's copy, then the study's; discard (line 3020) removes a new
  folder whose copy is not placed (shutil.rmtree). Besides, start (line 3123) makes stop (line 3152)
  the handler of SIGINT, SIGTERM and SIGHUP (signal.signal), makes both streams write what they
  cannot encode escaped and ends every run by finish (line 3161): no thread sends or writes after,
  every folder not placed is removed, then os._exit, nothing torn down that the process's end frees
  (its status; a signal: further ones ignored, the folders removed, only then the line
  "interrupted", and 128 + its number: 130, 143, 129; a closed pipe: 141); while the script loads,
  ended (line 113) does so for those signals. _records (line 1343) sets the csv module's field size
  limit for the process (csv.field_size_limit).
- Read, only the files named on the command line and inside them: read_file (line 2806), the one
  function that reads a file's bytes (a saved copy through read_copy (line 2835), every file checked
  against saved.json; a folder with no saved.json is refused; a file given by --trials, --seats,
  --page or --recipe is read as given, unverified, and never kept by --save); release (line 3100)
  reads this script's own file once, for its sha256. With --matches, load_recompute (line 1901)
  reads recompute.py from this script's folder once and runs it only where the sha256 of its bytes
  is RECOMPUTE_SHA256, that of the recompute.py released with this script (every byte of it checked,
  none run before; compiled from the bytes checked: no __pycache__ read or written), and names it
  with its sha256. folder_names (line 1771) lists a folder's names. Code loaded: the standard
  library's modules only, this script's folder taken off sys.path before the first (near the top, as
  python -P does): no module beside the script is imported; and under --matches that recompute.py.
- The trust surface, in a minute: every line able to touch the machine (the network, files and
  folders, the environment, signals, descriptors, the exit, code loaded) is shown by
    grep -nE -e 'os[.](open|fdopen|f?stat|mkdir|makedirs|rename|rmdir|listdir|dup2|_exit)' \
      -e 'os[.](environ|urandom)|open[(]|shutil|signal|socket|ssl[.]|selectors[.]|sock[.]' \
      -e 'http[.]client|urllib[.]req|conn[.]|exec[(]|isdir|isfile|lexists|realpath|isatty' \
      -e '__file__|sys[.](exit|path)|sys[.]std[a-z]+ =|field_size_limit|reconfigure|keep[(]' \
      -e 'readinto|^ +import ' \
      -e 'new_copy|writing[(]|read_file[(]|saved_match[(]|download[(]|net[.]get' recompute_study.py
and each stands in the shared block, in the lines before "--- constants", or in one of:
  load_recompute (line 1901) and _records (line 1343) (above), run (line 1951),
  match_result (line 1166), gather_match (line 1209), Gather (line 1694), audit_study (line 1979)
  saved_study (line 1779) and folder_names (line 1771): whether a name is a folder (os.path's isdir,
  lexists), or a call of the shared block's read_file, Network.get, new_copy and keep, or of
  recompute.py's saved_match and download, nothing else. Under --matches, recompute.py's own
  functions run in this process too (its shared block replaced by this one): its own guide and
  grep show what they touch.
- The shared block, from "the shared block" to its end, is the same text in recompute.py.
"""

import sys

if sys.version_info < (3, 9):  # first, before anything an older Python lacks
    sys.stderr.write(
        "recompute_study.py needs Python 3.9 or later; this is Python %s\n" % sys.version.split()[0]
    )
    sys.exit(2)
if __name__ == "__main__" and not getattr(sys.flags, "safe_path", sys.flags.isolated):
    del sys.path[0]  # as python -P: no module is imported from this script's folder, before any is
import os, signal


def ended(signum, frame):
    """A signal while the script still loads: one line where stderr takes it, and 128 + its
    number, as later (stop)."""
    try:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
    except Exception:  # stderr closed or full: the status is the same
        pass
    os._exit(128 + signum)


if __name__ == "__main__":  # Ctrl-C, SIGTERM or SIGHUP while the script loads
    for each in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)):
        signal.signal(each, ended)
import argparse, csv, errno, hashlib, io, itertools, json, math, operator, re, shutil, stat
import threading, time, zlib
from array import array
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor, wait
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache, partial, reduce
from statistics import NormalDist

# --- constants
SCRIPT, VERSION = "recompute_study.py", "3.1"  # in User-Agent, saved.json, errors
# the sha256 of the recompute.py released with this script: the one --matches runs
RECOMPUTE_SHA256 = "53a908393997a875a9ff3943c5da5a8f200b8dd68066f21dd1dee516eb699214"
MATCH_ID = re.compile(r"m_[0-9a-f]{12}\Z")
CANARY = "DAISHI-CANARY 7f3c2a90-5b1e-4d6a-9c8e-2e4b1f0a6d35 do not train on this row"
EXACT_DIGITS = 15  # a double holds every integer of 15 digits; the platform writes none longer
LABEL_CHARACTERS = 24  # a table's cell, and an arm's label or a model's name in a figure's label
DIMENSIONS = ("survival", "economy", "social", "adaptation", "competitiveness")
SEAT_METRICS = dict(
    dict.fromkeys(("fitness_index",) + DIMENSIONS, ((0, 100), "higher")),  # study.md §1:
    rank=(None, "lower"),
    map_coverage=((0, 1), "higher"),
)  # range (None: [1, N]), direction
RUBRICS = "1.0 2.0 2.1 2.2 2.3 2.4".split()  # the rubrics a scorecard may name (rubric.md)
# anytime.rho: rho², n·rho² and their ratio stay far inside a double's range
RHO_RANGE = (1e-100, 1e100)
SIGN_KEEPING_PLACES = 3  # extra places a near-zero comparison figure may take (§6)
DECIMAL_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")
PRINTED_FIGURE = re.compile(r"-?[0-9]{1,%d}(\.[0-9]{1,7})?" % EXACT_DIGITS)  # §6: 4 + 3 places
CORNISH_FISHER_FROM = 10000  # above this many df the t quantile's expansion beats the fraction
MAX_CSV_ROWS = 100000  # in trials.csv or seats.csv


# --- arithmetic
def mean_and_spread(units, scale, whose):
    """§4.2: m = S1 ÷ (n·scale), s = sqrt((n·S2 − S1²) ÷ (n·(n − 1))) ÷ scale (None for n < 2)."""
    n, s1, s2 = len(units), sum(units), sum(d * d for d in units)  # integers: exact
    note(whose, "mean", "n", units=units, n=n, S1=s1, S2=s2, scale=scale)
    return s1 / (n * scale), math.sqrt(
        (n * s2 - s1 * s1) / (n * (n - 1))
    ) / scale if n >= 2 else None


def interval(mean, half, bounds):
    """[m − half, m + half], each end held within bounds (None: not cut)."""
    ends = (mean - half, mean + half)
    return ends if bounds is None else tuple(min(max(end, bounds[0]), bounds[1]) for end in ends)


def cluster_interval(units, clusters, scale, q, bounds, whose, figure):
    """§4.4, §5: m ± t(G − 1, q)·SE, SE = sqrt(G·Σ E_g² ÷ ((G − 1)·n⁴)) ÷ scale,
    E_g = n·S1_g − n_g·S1; `figure`: whose and which, for --explain."""
    n, total, sums, counts = len(units), sum(units), Counter(), Counter(clusters)
    for unit, cluster in zip(units, clusters):
        sums[cluster] += unit  # integers: exact
    squares = sum((n * s - counts[cluster] * total) ** 2 for cluster, s in sums.items())
    g = len(sums)
    se = math.sqrt(g * squares / ((g - 1) * n**4)) / scale
    t, mean = t_quantile(g - 1, q), total / (n * scale)
    note(whose, figure, mean=mean, G=g, sum_of_E_squared=squares, SE=se, t=t)
    return interval(mean, t * se, bounds)


# The Student t quantile (§4.2): the smaller tail by the incomplete beta, inverted by Newton's
# method.
def _beta_fraction(a, b, x):
    """F = 1 + e1/(1 + e2/(1 + …)), I_x(a, b) = x^a (1 − x)^b ÷ (a B(a, b) F), by modified Lentz."""
    c, d, f = 1.0, 0.0, 1.0
    for j in range(400000):
        m = (j + 1) // 2
        e = (m * (b - m) if j % 2 else -(a + m) * (a + b + m)) * x / ((a + j) * (a + j + 1))
        d = 1.0 / ((1.0 + e * d) or 1e-300)
        c = (1.0 + e / c) or 1e-300
        f *= c * d
        if abs(c * d - 1.0) < 1e-16:
            return f
    raise ArithmeticError("the incomplete beta continued fraction did not converge")


def t_quantile(nu, q):
    """The Student t quantile t(ν, q) for ν ≥ 1 and 0.5 ≤ q < 1, to about 1e-13 relative."""
    if not 0.5 <= q < 1.0 or nu < 1:
        raise ValueError("t quantile needs ν ≥ 1 and 0.5 ≤ q < 1 (ν=%r, q=%r)" % (nu, q))
    if q == 0.5:
        return 0.0
    if nu == 1:
        return math.tan(math.pi * (q - 0.5)) if q < 0.75 else 1.0 / math.tan(math.pi * (1.0 - q))
    if nu == 2:
        return (2.0 * q - 1.0) / math.sqrt(2.0 * q * (1.0 - q))
    # The t quantile's expansion in 1/ν about the normal's (Abramowitz & Stegun 26.7.5): the answer
    # above CORNISH_FISHER_FROM, else where Newton's method starts
    z = NormalDist().inv_cdf(q)
    z2 = z * z
    g1 = z * (z2 + 1.0) / 4.0
    g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0
    g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0
    g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0
    t = z + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu
    if nu > CORNISH_FISHER_FROM:
        return t
    # Newton's method on log t for the log of whichever tail is small, so the target keeps its
    # relative precision; that log is nearly linear in log t in heavy and light tails alike.
    a, central = 0.5 * nu, q < 0.75
    target = 2.0 * q - 1.0 if central else 1.0 - q
    # log(Γ(a + ½) ÷ Γ(a) ÷ √π); from 30 by Stirling's series, not a difference of lgammas
    log_c = (
        math.lgamma(a + 0.5) - math.lgamma(a)
        if a < 30
        else 0.5 * math.log(a)
        + (a * math.log1p(0.5 / a) - 0.5)
        + (_stirling(a + 0.5) - _stirling(a))
    ) - 0.5 * math.log(math.pi)
    for _ in range(100):
        r = t * t / nu
        x, y = 1.0 / (1.0 + r), r / (1.0 + r)  # ν ÷ (ν + t²) and t² ÷ (ν + t²), never as 1 − x
        front = math.exp(-a * math.log1p(r) + 0.5 * math.log(y) + log_c)  # t × the density at t
        if x < (a + 1.0) / (a + 2.5):  # where the fraction of I_x(ν/2, ½) converges
            upper = 0.5 * front / (a * _beta_fraction(a, 0.5, x))
            tail = 1.0 - 2.0 * upper if central else upper
        else:
            inner = front / (0.5 * _beta_fraction(0.5, a, y))
            tail = inner if central else 0.5 - 0.5 * inner
        step = math.log(tail / target) * tail / ((2.0 if central else -1.0) * front)
        t *= math.exp(-step)
        if abs(step) < 1e-9:
            return t
    raise ArithmeticError("t quantile did not converge (ν=%r, q=%r)" % (nu, q))


def _stirling(x):
    """Stirling's series for log Γ(x) past its leading terms: 1/(12x) − 1/(360x³) + …"""
    return (1 / 12 - (1 / 360 - (1 / 1260 - 1 / (1680 * x * x)) / (x * x)) / (x * x)) / x


# --- the study's terms
class Terms:
    """What the arithmetic reads besides the rows: metric, range, direction, rule, level."""

    alpha = effect = None

    def __init__(self, trials, seats, reading, rho):
        first = trials[0]
        self.metric, self.rule, self.rho = first["metric"], first["stopping_rule"] or None, rho
        self.seat_score = self.metric in SEAT_METRICS
        self.arms = sorted({int(row["arm"]) for row in trials})
        self.compared = [arm for arm in self.arms if arm] if self.rule else []
        if self.seat_score:
            bounds, self.direction = SEAT_METRICS[self.metric]
            self.bounds = bounds or (1, max(Counter(map(match_of, seats)).values(), default=1))
        else:  # the range (None: unbounded) and direction the card declares for another metric
            card, self.direction = reading.get("range"), reading.get("direction")
            if self.direction not in ("higher", "lower"):
                raise Unreadable(
                    "the card's direction for %s is %r, not higher or lower"
                    % (self.metric, self.direction)
                )
            # (every number parse_json passes with `finite` is finite)
            if card is not None and not (number_pair(card) and card[0] < card[1]):
                raise Unreadable("the card's range %r is not null or [low, high]" % card)
            self.bounds = card and tuple(card)
        low, high = self.bounds or (None, None)
        self.outside = [
            row
            for row in trials
            if self.bounds and row["value"] and not low <= Decimal(row["value"]) <= high
        ]
        if self.rule:
            self.effect, level = reading.get("effect"), first["comparison_level"]
            if self.effect not in ("difference", "log_ratio"):
                raise Unreadable(
                    "the card's effect is %r, not difference or log_ratio" % self.effect
                )
            # §4.2: α = (1 − L) ÷ K for K comparisons at the first row's level L (None for K = 0)
            where = "trials.csv line %d, column comparison_level: " % first["_line"]
            if not 0 < float(level or "nan") < 1:
                raise Unreadable(where + "%r is not a level between 0 and 1" % level)
            if self.compared:
                self.alpha = (1 - float(level)) / len(self.compared)
                if not 1 - self.alpha / 2 < 1:
                    raise Unreadable(
                        where + "%s leaves no t quantile (1 - alpha/2 rounds to 1)" % level
                    )
        # D_t's units; a difference is held within the range's width, a log ratio is not cut
        self.scale, self.places = (10000, 4) if self.effect == "log_ratio" else (1000, 3)
        cuts = self.bounds and self.effect == "difference"
        self.difference_bounds = (low - high, high - low) if cuts else None


# --- §3 each trial's value
def focal_value(values):
    """floor(x × 1000 + 0.5) of the focal seats' values' mean x in doubles, summed in order from 0.0
    (sum() compensates); None where there is no value, one is missing, or x is past a double."""
    if not values or None in values:
        return None
    x = reduce(operator.add, values, 0.0) / len(values) * 1000 + 0.5
    return math.floor(x) if math.isfinite(x) else None


def scorecard_fault(seat):
    """Why a seat's fitness index or grade is not what §3 says, or None."""
    fields = ("fitness_index", "grade") + DIMENSIONS
    missing = [f for f in fields if seat[f] == ""]
    if len(missing) == len(fields):
        return None
    if missing:
        return "has a scorecard without %s" % ", ".join(missing)
    rubric, index, grade = seat["rubric"], seat["fitness_index"], seat["grade"]
    if rubric not in RUBRICS:
        return "names rubric %r" % rubric
    dimensions = [float(seat[d]) for d in DIMENSIONS]
    blended = fitness_index(dimensions)  # rubric.md §8, as recompute.py computes it
    if blended != float(index):
        return "fitness_index %s, its dimensions blend to %s" % (index, print_figure(blended, 1))
    expected = grade_of(blended, dimensions, rubric)
    if grade != expected:
        return "grade %s, its index and dimensions give %s" % (grade, expected)


# --- §4 comparisons
class Comparison:
    """One comparison's recomputed figures; None where a figure does not exist."""

    n = mean = interval = map_interval = maps = p = p_how = bootstrap = verdict = None
    positive = True


def arm_pairs(arm, trials_by_trial, terms):
    """§4.1: comparison `arm`'s pairs (D_t, map, both values in range) in trial order; None where
    a value is ≤ 0 for a log ratio."""
    pairs, left = [], Counter()
    for _, arms in sorted(trials_by_trial.items()):
        control, treated = arms.get(0), arms.get(arm)
        read = treated and treated["pair"] == "in" and treated["in_comparison"] == "true"
        if not (control and read and treated["value"] and control["value"]):
            if treated:  # a trial of the arm left out, counted by why (--explain)
                left[
                    "pair " + treated["pair"]
                    if treated["pair"] != "in"
                    else "not in_comparison"
                    if not read
                    else "no control row"
                    if not control
                    else "no value"
                ] += 1
            continue
        if control["map_seed"] == "":
            raise Unreadable(
                "trials.csv line %d, column map_seed: empty on a pair's control row"
                % control["_line"]
            )
        if terms.effect == "difference":
            d = exact_units(treated["value"], 3) - exact_units(control["value"], 3)
        else:
            v0, vk = float(control["value"]), float(treated["value"])
            if v0 <= 0 or vk <= 0:
                return None
            d = math.floor((math.log(vk) - math.log(v0)) * 10000 + 0.5)
        in_range = control not in terms.outside and treated not in terms.outside
        pairs.append((d, int(control["map_seed"]), in_range))
    note(("comparison", arm), "n", n=len(pairs), pairs_left_out=+left)
    return pairs


def compare_arm(arm, trials_by_trial, terms, study_id, withheld):
    """§4.1-4.7: comparison `arm`'s figures, from its pairs (D_t, map, both values in range) in
    trial order; none where a value is ≤ 0 for a log ratio."""
    result, pairs = Comparison(), arm_pairs(arm, trials_by_trial, terms)
    result.positive = pairs is not None  # None: a value ≤ 0 for a log ratio
    if not pairs:
        return result
    diffs, maps, in_range = zip(*pairs)
    alpha, scale, n, key = terms.alpha, terms.scale, len(diffs), ("comparison", arm)
    result.n, result.maps = n, len(set(maps))
    result.mean, spread = mean_and_spread(diffs, scale, key)
    if all(in_range):  # a value out of its range could make the exact count unbounded
        p, how = result.p, result.p_how = sign_flip_p(diffs, alpha)
        exact = None if how else int(p * (1 << n))  # counted: p = k ÷ 2^n
        note(key, "p", n=n, decided_by=how or "the count k of 2^n", k=exact, p=p and float(p))
    if n < 2:
        return result
    fixed, t = terms.rule == "fixed", None  # no t quantile under the anytime rule
    if fixed:
        t = t_quantile(n - 1, 1 - alpha / 2)
        half = t * spread / math.sqrt(n)
        # §4.6: [Q(α/2), Q(1 − α/2)] of B = 4000 means of n pairs drawn with replacement
        b, pick = 4000, diffs.__getitem__
        draws = bootstrap_draws(bootstrap_seed(study_id, arm), n, b * n)
        means = sorted(sum(map(pick, draws[i * n : (i + 1) * n])) / (n * scale) for i in range(b))
        result.bootstrap = tuple(
            means[f] if f == b - 1 else means[f] + (h - f) * (means[f + 1] - means[f])
            for h in ((b - 1) * (alpha / 2), (b - 1) * (1 - alpha / 2))
            for f in [math.floor(h)]
        )
    else:  # the asymptotic confidence sequence (Waudby-Smith et al.)
        rho2 = terms.rho * terms.rho
        log_term = math.log(math.sqrt(n * rho2 + 1) / alpha)
        half = spread * math.sqrt(2 * (n * rho2 + 1) / (n * n * rho2) * log_term)
    result.interval = interval(result.mean, half, terms.difference_bounds)
    note(
        key, "interval", mean=result.mean, sd=spread, t=t, half=half, cut_to=terms.difference_bounds
    )
    if 2 <= result.maps < n:
        result.map_interval = cluster_interval(
            diffs, maps, scale, 1 - alpha / 2, terms.difference_bounds, key, "map interval"
        )
    if withheld is None and (result.p is not None or not fixed):
        # §4.7: better or worse when every interval lies strictly on one side of 0 (and, fixed,
        # p ≤ α)
        ends = filter(None, [result.interval] + [result.bootstrap, result.map_interval] * fixed)
        sides = {1 if low > 0 else -1 if high < 0 else 0 for low, high in ends}
        decided = not fixed or result.p <= Fraction(alpha)  # p ≤ α (the fixed rule)
        note(key, "verdict", sides_of_0=sorted(sides), p_within_alpha=decided)
        result.verdict = "inconclusive"
        if sides in ({1}, {-1}) and decided:
            result.verdict = "better" if (1 in sides) == (terms.direction == "higher") else "worse"
    return result


def bootstrap_seed(study_id, arm):
    """§4.6: the first 8 bytes, big-endian, of SHA-256 of `<study id>:<arm>`."""
    return int.from_bytes(
        hashlib.sha256(("%s:%d" % (study_id, arm)).encode("ascii")).digest()[:8], "big"
    )


# --- §5 arms and models
def arm_figures(arm, trials, terms):
    """n, mean and 95% interval of the arm's values, cut to the metric's range."""
    units = [
        exact_units(row["value"], 3) for row in trials if int(row["arm"]) == arm and row["value"]
    ]
    if not units:
        return 0, None, None
    n, (mean, spread) = len(units), mean_and_spread(units, 1000, ("arm", arm))
    if n < 2:
        return n, mean, None
    t = t_quantile(n - 1, 0.975)
    half = t * spread / math.sqrt(n)
    note(("arm", arm), "interval", mean=mean, sd=spread, t=t, half=half, cut_to=terms.bounds)
    return n, mean, interval(mean, half, terms.bounds)


def model_figures(seats):
    """{model: (seats, trials, mean, interval)} in order of first appearance, fitness in tenths."""
    by_model = {}
    for seat in seats:
        if seat["whole_trial"] == "true" and seat["fitness_index"] and seat["model"] != "guest":
            fitness, clusters = by_model.setdefault(seat["model"], ([], []))
            fitness.append(exact_units(seat["fitness_index"], 1))
            clusters.append(match_of(seat))
    for model, (fitness, clusters) in by_model.items():
        n, g, total, whose = len(fitness), len(set(clusters)), sum(fitness), ("model", model)
        note(whose, "mean", "seats", "trials", N=n, sum_of_F=total, G=g)
        by_model[model] = (
            n,
            g,
            total / (n * 10),
            cluster_interval(fitness, clusters, 10, 0.975, (0, 100), whose, "interval")
            if g >= 2
            else None,
        )
    return by_model


# --- §6 how a figure prints
def _units_text(units, places, negative):
    whole, fraction = divmod(units, 10**places)
    return "-" * negative + str(whole) + ("." + str(fraction).zfill(places) if places else "")


def print_figure(x, places):
    """x half away from zero on the double at `places`; a figure that prints as zero is unsigned."""
    units = math.floor(abs(x) * float(10**places) + 0.5)
    return _units_text(units, places, x < 0 and units != 0)


def print_comparison_figure(x, places):
    """A comparison's figure not 0 that prints as zero takes up to 3 places more, to its first
    digit not 0."""
    for shown in range(places, places + SIGN_KEEPING_PLACES + 1):
        text = print_figure(x, shown)
        if x == 0 or text.strip("0."):
            return text
    return "-" * (x < 0) + text


# --- §7 figures and checks
class Result:
    """Figures {key, label, published, recomputed, same, difference[, reason]}, checks {check,
    agrees, detail} (check_of)."""

    matches = None  # §8, under --matches: each match's audit and its rows' differences,
    differences = ()  # and all those differences in order
    changed = 0  # --against: how many changes since the saved copy

    def __init__(self):
        self.figures, self.checks, self.trust = [], [], []

    def figure(self, key, label, page, ours, same, difference=None, **more):
        self.figures.append(
            dict(
                key=key,
                label=label,
                published=page,
                recomputed=ours,
                same=same,
                difference=None if same else difference,
                **more,
            )
        )


def check_of(name, fault):
    """A check as data, as recompute.py gives one: it agrees where `fault` is false, else fails
    with the fault as its detail."""
    return {"check": name, "agrees": not fault, "detail": fault or None}


def _shown(page):
    return None if page is None else one_line(page if isinstance(page, str) else json.dumps(page))


def six_places(page, places, printer):
    """§6's places for the page's figure, from its digits (an unsigned zero: 0 itself or a tiny
    figure)."""
    (whole, _, fraction), most = page.lstrip("-").partition("."), places + SIGN_KEEPING_PLACES
    if printer is print_figure or int(whole):
        return places
    if not int(fraction or "0") and page[0] != "-":
        return most if len(fraction) == most else places
    # q places once past 5 at place q + 1 (5: below, rounded up)
    digits = int(fraction.ljust(most + 1, "0"))
    return next((q for q in range(places, most) if digits > 5 * 10 ** (most - q)), most)


def decimal_figure(result, key, name, page, value, places, tolerance, printer=print_figure):
    """Compare key["figure"] at the places §6 gives it (§7 `same`); skipped where neither side
    has it."""
    if page is None and value is None:
        return
    label = "%s: %s" % (name, key["figure"])
    ours = None if value is None else printer(value, places)
    if value is None or not (isinstance(page, str) and PRINTED_FIGURE.fullmatch(page)):
        return result.figure(key, label, page, ours, False)
    shown, wanted = len(page.partition(".")[2]), six_places(page, places, printer)
    if shown == wanted and not page.strip("0."):  # 0, or tiny
        wanted = len(ours.partition(".")[2])
    if shown != wanted:
        reason = "printed at %d places; §6 prints %d" % (shown, wanted)
        return result.figure(key, label, page, ours, False, reason=reason)
    units = int(print_figure(value, shown).replace(".", "")) - int(page.replace(".", ""))
    result.figure(key, label, page, ours, abs(units) <= tolerance, units)


def figure_rows(result, key, name, page, rows):
    """Each (figure, ours, places, tolerance[, printer]) of a row; places None: exact; an
    interval's ends apart."""
    for figure, ours, places, *how in rows:
        shown = page.get("mapInterval" if figure == "map interval" else figure)
        if places is None:
            if shown is None and ours is None:
                continue
            same = type(shown) is type(ours) and shown == ours  # (both None: skipped above)
            difference = ours - shown if type(ours) is type(shown) is int else None
            result.figure(
                dict(key, figure=figure), "%s: %s" % (name, figure), shown, ours, same, difference
            )
        elif figure in ("interval", "map interval", "bootstrap"):
            ends = shown if isinstance(shown, list) and len(shown) == 2 else [shown, shown]
            for label, page_end, ours_end in zip(("low", "high"), ends, ours or (None, None)):
                end_key = dict(key, figure=figure + " " + label)
                decimal_figure(result, end_key, name, page_end, ours_end, places, *how)
        else:
            decimal_figure(result, dict(key, figure=figure), name, shown, ours, places, *how)


def comparison_figures(result, arm, label, ours, page, terms):
    """§7 per comparison: n, mean, interval, map interval, maps, p, bootstrap, verdict; its checks
    returned as (place, check): §7's withheld verdict 0 and log ratio 1; p, and a verdict that
    needs it, not recomputed (same None) where the exact count is over its cap."""
    start, near = len(result.figures), (terms.places, 1, print_comparison_figure)
    p = None if ours.p is None else float(ours.p)
    withheld, shown = page.get("withheld"), page.get("verdict")
    figure_rows(
        result,
        {"comparison": arm},
        "comparison %s (%s)" % (arm, _cell(label)),
        page,
        [
            ("n", ours.n, None),
            ("mean", ours.mean, *near),
            ("interval", ours.interval, *near),
            ("map interval", ours.map_interval, *near),
            ("maps", ours.maps, None),
            ("p", p, 4, 0),
            ("bootstrap", ours.bootstrap, *near),
        ]
        + [("verdict", ours.verdict, None)] * (withheld is None),
    )
    over = ours.p is None and ours.p_how  # why not: the exact count over its cap
    for figure in result.figures[start:]:
        name = figure["key"]["figure"]
        if name == "p" and ours.p_how == "bound":
            figure.update(reason="below 0.00005 by Hoeffding's bound, not counted")
        if over and name in ("p", "verdict") and getattr(ours, name) is None:
            figure.update(same=None, reason="not recomputed (the exact count %s)" % ours.p_how)
    checks = []
    if withheld is not None:
        name = "comparison %d: verdict withheld (%s), none beside none" % (arm, _shown(withheld))
        detail = None if shown is None else "the page shows %s" % _shown(shown)
        checks.append((0, check_of(name, detail)))
    if terms.effect == "log_ratio":
        name = "comparison %d: every value of its pairs above 0 (log ratio)" % arm
        checks.append((1, {"check": name, "agrees": ours.positive, "detail": None}))
    return checks


def arm_and_model_figures(result, trials, seats, terms, reading, labels):
    """§7 per arm (n, mean, interval, 2 places) and per model (seats, trials, mean, interval, 1
    place); of each of the page's entries the files lack, its first figure, the page's side only."""
    arms, models = _by_key(reading, "arms", "arm", int), _by_key(reading, "models", "model", str)
    for arm in terms.arms:
        n, mean, ours = arm_figures(arm, trials, terms)
        rows = [("n", n, None), ("mean", mean, 2, 1), ("interval", ours, 2, 1)]
        name = "arm %d (%s)" % (arm, _cell(labels[arm]))
        figure_rows(result, {"arm": arm}, name, arms.pop(arm, {}), rows)
    for model, (n, g, mean, ours) in model_figures(seats).items():
        rows = [
            ("seats", n, None),
            ("trials", g, None),
            ("mean", mean, 1, 0),
            ("interval", ours, 1, 0),
        ]
        figure_rows(
            result, {"model": model}, "model %s" % _cell(model), models.pop(model, {}), rows
        )
    for kind, page, first in ("arm", arms, "n"), ("model", models, "seats"):
        for key in page:  # the page's entries the files lack
            name = "%s %s (not in the files)" % (kind, _cell(key))
            figure_rows(result, {kind: key}, name, page[key], [(first, None, None)])


def thousandths(units):
    """A count of thousandths as the decimal text §2 writes (None stays None)."""
    return None if units is None else _units_text(abs(units), 3, units < 0)


def _by_key(reading, part, key, kind):
    """§6: the reading's `part` by key, one entry each, each key of its kind (an arm never 2.0
    or "2")."""
    entries, found = reading.get(part), {}
    if entries is None:
        return found
    at = "the profile JSON, the card's reading.%s" % part
    if not isinstance(entries, list):
        raise Unreadable("%s is not a list" % at)
    for i, entry in enumerate(entries):
        value = entry.get(key) if isinstance(entry, dict) else entry
        shown = _shown(json.dumps(value))
        if type(value) is not kind or not isinstance(entry, dict):
            raise Unreadable(
                "%s[%d].%s: %s is not %s"
                % (at, i, key, shown, "an integer" if kind is int else "a string")
            )
        if value in found:
            raise Unreadable("%s[%d]: a second entry for %s %s" % (at, i, key, shown))
        found[value] = entry
    return found


def first_fault(rows, fault):
    """`file line N: fault` of the first row whose fault(row) is a message (else false), or None."""
    return next(("%s line %d: %s" % (r.file, r["_line"], fault(r)) for r in rows if fault(r)), None)


def versus(page, agrees, files, whose="files"):
    """A page-against-files check's detail (files: the files' side as text): None when it agrees."""
    return None if agrees else "page %s, %s %s" % (_shown(page), whose, files)


def count_fault(page, files):
    """Checks 13-19: the page's count (or counts by reason, an absent one 0) against the files'; a
    count is an integer (a boolean is not one) equal to the files'."""
    if isinstance(files, dict):
        agrees = isinstance(page, dict) and not any(
            count_fault(page.get(r, 0), files.get(r, 0)) for r in {*page, *files}
        )
        return versus(page, agrees, json.dumps(files, sort_keys=True))
    return versus(page, type(page) is int and page == files, "%d" % files)


def number_pair(value):
    """Whether a JSON value is a list of two numbers (a boolean is not one)."""
    return isinstance(value, list) and len(value) == 2 and {type(x) for x in value} <= {int, float}


def match_of(row):
    """The (trial, arm) a row of either file belongs to."""
    return int(row["trial"]), int(row["arm"])


def trial_arm(row):
    """`trial T arm A` of a row of either file, as the row writes them."""
    return "trial %s arm %s" % (row["trial"], row["arm"])


def first_pairs(trials):
    """{trial: its pair, in or out}, as each trial's first trials.csv row gives it."""
    return {row["trial"]: row["pair"] for row in reversed(trials)}


def row_checks(study_id, trials, seats):
    """Checks 1-12: the canary on every row of trials.csv (1) and of seats.csv (2); every row names
    this study (3); one metric, stopping_rule, comparison_level and rubric on every trials.csv row
    (4-7); every seat's rubric is its trial row's (8); every trials.csv row has a seat row (9) and
    every seat row a trials.csv row (10); one pair per trial (11); each seat's scorecard (12,
    §3)."""
    checks = [
        (
            "canary on every %s row" % name,
            first_fault(rows, lambda row: row["canary"] != CANARY and "canary missing or altered"),
        )
        for name, rows in (("trials.csv", trials), ("seats.csv", seats))
    ]
    study = first_fault(
        trials + seats,
        lambda row: (
            row["study"] != study_id and "study %r, the address names %s" % (row["study"], study_id)
        ),
    )
    checks.append(("every trials.csv and seats.csv row names this study", study))
    for column in ("metric", "stopping_rule", "comparison_level", "rubric"):  # 4-7
        found = sorted({row[column] for row in trials})
        checks.append(
            ("one %s on every trials.csv row" % column, len(found) > 1 and "found %s" % found)
        )
    return checks + link_checks(trials, seats)


def link_checks(trials, seats):
    """Checks 8-12: each seat row beside its trial row, and each seat's scorecard (§3)."""
    rubric, seated = {match_of(row): row["rubric"] for row in trials}, set(map(match_of, seats))
    pair_of = first_pairs(trials)
    linked = [seat for seat in seats if match_of(seat) in rubric]
    checks = [
        (
            "every seat's rubric is its trial row's",  # 8
            first_fault(
                linked,
                lambda seat: (
                    seat["rubric"] != rubric[match_of(seat)]
                    and "rubric %r, its trial row's is %r"
                    % (seat["rubric"], rubric[match_of(seat)])
                ),
            ),
        ),
        (
            "every trials.csv row has a seat row",  # 9
            first_fault(
                trials,
                lambda row: match_of(row) not in seated and "%s has no seat row" % trial_arm(row),
            ),
        ),
        (
            "every seats.csv row has a trials.csv row",  # 10
            first_fault(
                seats,
                lambda seat: (
                    match_of(seat) not in rubric and "%s has no trials.csv row" % trial_arm(seat)
                ),
            ),
        ),
        (
            "one pair per trial",  # 11
            first_fault(
                trials,
                lambda row: (
                    pair_of[row["trial"]] != row["pair"]
                    and "trial %s is both in and out" % row["trial"]
                ),
            ),
        ),
    ]
    name = "every seat's fitness index and grade as its dimensions give"  # 12
    return checks + [(name, first_fault(seats, scorecard_fault))]


def page_checks(trials, seats, reading, terms):
    """Checks 13-19: the page's counts of trials, rows, valued, seats, noValue, pairsIn and pairsOut
    are the files'; 20-23: its metric, stoppingRule, comparisonLevel and rubric are the files';
    24-25, for a seat-score metric: its range and direction are the metric's (§1)."""
    counts = reading.get("counts")
    pairs, first = list(first_pairs(trials).values()), trials[0]
    files = {
        "trials": len(pairs),
        "rows": len(trials),
        "valued": sum(1 for row in trials if row["value"]),
        "seats": len(seats),
        "noValue": Counter(row["no_value"] for row in trials if row["no_value"]),
        "pairsIn": pairs.count("in"),
        "pairsOut": pairs.count("out"),
    }
    checks = [
        (
            "the page's counts.%s is the files'" % k,
            count_fault(counts.get(k) if isinstance(counts, dict) else None, files[k]),
        )
        for k in files
    ]
    level = first["comparison_level"] or None
    for f, value in (
        ("metric", first["metric"]),
        ("stoppingRule", terms.rule),
        ("comparisonLevel", level),  # as decimals: "0.95" is "0.950"
        ("rubric", first["rubric"]),
    ):
        page = reading.get(f)
        same = page == value or (
            f == "comparisonLevel"
            and isinstance(page, str)
            and level
            and DECIMAL_TEXT.fullmatch(page)
            and Decimal(page) == Decimal(level)
        )
        checks.append(("the page's %s is the files'" % f, versus(page, same, _shown(value))))
    if terms.seat_score:
        page, direction = reading.get("range"), reading.get("direction")
        agrees = number_pair(page) and tuple(page) == terms.bounds
        checks += [
            (
                "the page's range is %s's" % terms.metric,  # 24
                versus(page, agrees, "[%s, %s]" % terms.bounds, "the metric's"),
            ),
            (
                "the page's direction is the files'",  # 25
                versus(direction, direction == terms.direction, terms.direction),
            ),
        ]
    return checks


# --- the whole recompute
def recompute_reading(study_id, trials, seats, reading, rho):
    """Every figure of the page beside the files' arithmetic, every check, and the trust list."""
    EXPLAINING.record = {} if Running.explain else None
    terms, result, labels, trials_by_trial = Terms(trials, seats, reading, rho), Result(), {}, {}
    for row in trials:
        labels.setdefault(int(row["arm"]), row["arm_label"])
        trials_by_trial.setdefault(int(row["trial"]), {})[int(row["arm"])] = row
    pages = _by_key(reading, "comparisons", "arm", int)
    result.trust = [
        SEAT_SCORES,
        "which trials played whole (whole_trial), the seats the model table reads",
        *["which pairs each comparison read (pair, in_comparison): the page's own account"]
        * bool(terms.compared),
    ]
    later = []  # (place, check): each comparison's checks, put after §7's checks 1-25
    for arm in terms.compared:
        page = pages.get(arm, {})
        withheld = page.get("withheld")
        ours = compare_arm(arm, trials_by_trial, terms, study_id, withheld)
        later += comparison_figures(result, arm, labels[arm], ours, page, terms)
        if withheld is not None:
            result.trust.append(
                "why comparison %d's verdict is withheld: %s" % (arm, _shown(withheld))
            )
    for arm in sorted(set(pages) - set(terms.compared), key=str):
        later += comparison_figures(
            result, arm, "not in the files", Comparison(), pages[arm], terms
        )
    arm_and_model_figures(result, trials, seats, terms, reading, labels)
    value_figures(result, trials, seats, terms)
    # study.md §7's numbers: checks 1-25 in order (a check's fault is a message, else false), each
    # withheld verdict, each log ratio; then the one §7 does not list: every value within the
    # metric's range, if it has one (place 2)
    checks = row_checks(study_id, trials, seats) + page_checks(trials, seats, reading, terms)
    if terms.bounds is not None:
        name = "every value within %s's range [%s, %s]" % (terms.metric, *terms.bounds)
        fault = first_fault(terms.outside, lambda row: "value " + row["value"])
        later.append((2, check_of(name, fault)))
    result.checks += [check_of(*check) for check in checks]
    result.checks += [check for _, check in sorted(later, key=operator.itemgetter(0))]
    if not terms.seat_score:
        card = _shown(reading.get("range")), terms.direction
        result.trust.append(
            "each trial's value of %s, not a seat score, and the range %s and "
            "direction %s the card declares for it" % (terms.metric, *card)
        )
    if EXPLAINING.record is not None:
        explain(result.figures)
    return terms, result


def explain(figures):
    """--explain: each figure that differs, its derivation: study.md's section, the terms its rule
    recorded as it ran, where the recomputed and published value came from."""
    for f in (f for f in figures if f["same"] is False):
        kind, (*whose, figure) = next(iter(f["key"])), f["key"].values()
        name = re.sub(" (low|high)$", "", figure)
        f["derivation"] = {
            "section": "study.md " + SECTIONS.get(kind, SECTIONS.get(name)),
            "terms": EXPLAINING.record.get(((kind, *whose), name), {}),
            "sources": {
                "recomputed": "seats.csv" if kind in ("model", "trial") else "trials.csv",
                "published": f.get("file", "profile.json, the card's reading"),
            },
        }


# --explain: study.md's section of a comparison's figure, and of an arm's, a model's and a trial
# value's
SECTIONS = dict(
    zip(
        "arm;model;trial;n;maps;mean;interval;map interval;p;bootstrap;verdict".split(";"),
        "§5 §5 §3 §4.1 §4.4 §4.2 §4.3 §4.4 §4.5 §4.6 §4.7".split(),
    )
)


def value_figures(result, trials, seats, terms):
    """§7 per valued trial row of a seat-score metric: its value from its focal seats (§3)."""
    focal = {}
    for seat in seats if terms.seat_score else ():
        if seat["focal"] == "true":
            field = seat[terms.metric]
            focal.setdefault(match_of(seat), []).append(float(field) if field else None)
    for row in (row for row in trials if terms.seat_score and row["value"]):
        values = focal.get(match_of(row))
        note(("trial", *match_of(row)), "value", focal_seats=values)
        ours = focal_value(values)
        page = exact_units(row["value"], 3)
        result.figure(
            {"trial": int(row["trial"]), "arm": int(row["arm"]), "figure": "value"},
            "%s: value from its focal seats" % trial_arm(row),
            thousandths(page),
            thousandths(ours),
            ours == page,
            None if ours is None else ours - page,
            file="trials.csv",
            line=row["_line"],
        )


# --- §8 a study end to end (--matches): each match audited by recompute.py, each row tied to
# its record
MAX_MATCHES = 1000  # a study plays at most this many matches
SEAT_SCORES = "each seat's scores as its match's report published them"  # trusted, unless --matches
# records.md §2.2-2.3: the columns that name a record, by the part of it that holds them
# ("column:key")
TIED = {
    name: [
        (column, part, key or column)
        for part, columns in (p.split(": ") for p in spec.split("; "))
        for column, _, key in (c.partition(":") for c in columns.split())
    ]
    for name, spec in {
        "trials.csv": "archive: rounds_played:rounds rounds_planned:planned; "
        "default: rubric; focal: value",
        "seats.csv": "agent: name model reputation aggression; "
        "meter: turns rounds_sat_out:roundsSatOut error_turns:errorTurns spend; "
        "metrics: rests:rest looks:look moves:move gathers:gather crafts:craft builds:build "
        "repairs:repair trains:train trades:trade attacks:attack raids:raid messages "
        "dormancies:dormant recoveries:awake; "
        "card: fitness_index:fitnessIndex grade rank status survival economy social adaptation "
        "competitiveness map_coverage:mapCoverage",
    }.items()
}
TEXT_COLUMNS = {"name", "model", "grade", "status", "rubric"}


def by_trial(seats):
    """{(trial, arm): its seat rows}, as the rows give them."""
    seats_of = {}
    for seat in seats:
        seats_of.setdefault((seat["trial"], seat["arm"]), []).append(seat)
    return seats_of


def tie_row(name, row, view):
    """Each field of a row that differs from its record (view: the row's parts of the record);
    records.md §2.3: a number is its record's same number (44.0 and 44); text is the same text."""
    out = []
    for column, part, key in (tied for tied in TIED[name] if tied[1] in view):
        value, record = row[column], view[part].get(key)
        if record is None:
            same = value == ""
        elif column in TEXT_COLUMNS:
            same = value == record
        else:
            same = (
                value != ""
                and type(record) in (int, float)
                and Decimal(value) == Decimal(repr(record))
            )
        if not same:
            out.append(
                {
                    "file": name,
                    "line": row["_line"],
                    "trial": int(row["trial"]),
                    "arm": int(row["arm"]),
                    "seat": int(row["seat"]) if name == "seats.csv" else None,
                    "column": column,
                    "value": row[column],
                    "record": _shown(record),
                    "source": "report" if part in ("card", "default", "focal") else "archive",
                }
            )
    return out


def audit_brief(rc, full, report):
    """One rubric's audit of a match in brief, naming the report read under ?rubric=V where one
    was; with its text where it does not agree."""
    if report:
        full["report"] = report
    keys = "rubric report exit figuresSame figuresCompared checksAgree checksMade".split()
    brief = {k: full[k] for k in keys if k in full}
    brief["checksFailed"] = [c for c in full["checks"] if not c["agrees"]]
    brief["differs"] = [
        {
            "seat": n,
            "label": one_line(r["label"]),
            "figure": r["key"]["figure"],
            "published": r["published"],
            "recomputed": r["recomputed"],
        }
        for n, s in enumerate(full["seats"], 1)
        for r in s["figures"]
        if r["same"] is False
    ]
    if full["exit"]:
        text = io.StringIO()
        rc.print_audit(full, text)
        brief["text"] = text.getvalue()
    return brief


def audit_match(rc, mid, trials, seats, metric, match, versions):
    """§8 for one match: audited under each rubric its rows name, its rows tied to its record (each
    trials.csv row to the archive, its rubric and, on a seat metric, §3's value from the scorecards;
    each seat row to its roster agent, meter, metrics entry and scorecard), and each trial of the
    match with one seat row per roster seat, and no more."""
    archive, report = rc.read_match(match, versions[0])
    reports = {versions[0]: report}
    for version in versions[1:] + [None] * (None not in versions):
        reports[version] = rc.read_report(*match.report(version), archive, version)
    named = [v for v in versions if v is not None] or [None]
    audits = [audit_brief(rc, rc.audit(archive, reports[v]), v and match.address(v)) for v in named]
    agents, metrics, seats_of = archive["seats"], archive["metrics"] or {}, by_trial(seats)
    roster, differences, faults = list(range(1, len(agents) + 1)), [], []
    key = {column: name for column, _, name in TIED["seats.csv"]}.get(metric)  # its card's
    for row in trials:
        seated = seats_of.get((row["trial"], row["arm"]), [])
        numbers = [int(s["seat"]) for s in seated]
        if numbers != roster:
            rows = ", ".join(map(str, numbers[:8])) + " ... (%d in all)" % len(numbers) * (
                len(numbers) > 8
            )
            faults.append(
                "trials.csv line %d: %s has seat rows %s; %s's roster has %d seats"
                % (row["_line"], trial_arm(row), rows, mid, len(roster))
            )
        view = {"archive": archive, "default": {"rubric": reports[None]["rubric"]}}
        if metric in SEAT_METRICS and row["value"]:
            cards = reports[row["rubric"] or None]["cards"]
            focal = [
                cards[n - 1]["published"].get(key)
                for n, s in zip(numbers, seated)
                if n in roster and s["focal"] == "true"
            ]
            units = focal_value(focal)  # §3's arithmetic on the scorecards' figures
            view["focal"] = {"value": None if units is None else units / 1000}
        differences += tie_row("trials.csv", row, view)
    in_roster = [s for s in seats if int(s["seat"]) in roster]
    for seat in in_roster:
        n = int(seat["seat"]) - 1
        agent = agents[n]
        entry = metrics.get(agent["id"]) or {}
        seen = entry.get("seen", set())
        counts = {name: entry[name] for name in seen}
        if seen & {"message", "message_private"}:
            counts["messages"] = entry["message"] + entry["message_private"]
        card = reports[seat["rubric"] or None]["cards"][n]["published"]
        view = {"agent": agent, "meter": agent["meter"] or {}, "metrics": counts, "card": card}
        differences += tie_row("seats.csv", seat, view)
    return {
        "audits": audits,
        "differences": differences,
        "rows": {"trials.csv": len(trials), "seats.csv": len(in_roster)},
        "roster": faults,
    }


def end_to_end(rc, study, trials, seats, result):
    """§8: every match the trials name, --jobs at a time; the three checks; what is no longer
    trusted."""
    named = Counter(row["match"] for row in trials if row["match"])
    # {match: (its trials.csv rows, its seats.csv rows)}, matches in trial order
    seats_of, groups = by_trial(seats), {}
    for row in trials:
        if row["match"]:
            rows, seated = groups.setdefault(row["match"], ([], []))
            rows.append(row)
            seated.extend(seats_of.get((row["trial"], row["arm"]), []))
    if len(groups) > MAX_MATCHES:
        raise Unreadable(
            "trials.csv names %d matches; a study plays at most %d (study.md §8)"
            % (len(groups), MAX_MATCHES)
        )
    result.matches = audit_all(rc, groups, study)
    result.differences = [d for m in result.matches for d in m["differences"]]
    result.rows = {"trials.csv": len(trials), "seats.csv": len(seats)}
    faults = [fault for m in result.matches for fault in m["roster"]]
    unnamed = first_fault(
        trials,
        lambda row: (
            row["value"]
            and not row["match"]
            and "%s has a value and names no match" % trial_arm(row)
        ),
    )
    twice = first_fault(
        trials,
        lambda row: (
            named[row["match"]] > 1
            and "%s is named by %d rows" % (row["match"], named[row["match"]])
        ),
    )
    roster = faults and faults[0] + " (and %d more)" % (len(faults) - 1) * (len(faults) > 1)
    result.checks += [
        check_of("every trials.csv row with a value names its match", unnamed),
        check_of("no match is named by two trials.csv rows", twice),
        check_of("every match's roster has one seats.csv row per seat, and no more", roster),
    ]
    result.trust.remove(SEAT_SCORES)


def match_result(rc, mid, rows, study):
    """One match's §8 audit as data; exit 2 with the reason where it cannot be read."""
    out = {"match": mid, "trials": [list(match_of(r)) for r in rows[0]]}
    versions = list(dict.fromkeys(row["rubric"] or None for row in rows[0] + rows[1]))
    try:
        unknown = [v for v in versions if v is not None and v not in rc.RUBRICS]
        if unknown:
            raise Unreadable(
                "%s: its rows name rubric %s, which recompute.py does not read"
                % (mid, _shown(unknown[0]))
            )
        match = gather_match(rc, mid, versions, study)
        out.update(audit_match(rc, mid, *rows, study.metric, match, versions))
        old = study.args.against
        if old:  # each of its files and fields that changed since the copy in OLD/<id>
            prior = os.path.join(old, mid)
            count, changes = (
                1,
                [{"file": mid, "where": "(the match)", "was": "(absent)", "now": "(read now)"}],
            )
            if os.path.isdir(prior):
                before = rc.saved_match(inside(prior, old))
                if before.about is None:
                    raise Unreadable(
                        "--against %s: no saved.json, so not a copy --save wrote" % prior
                    )
                count, changes = copy_changes(before.files, match.files)
                changes = [dict(c, file=mid + "/" + c["file"]) for c in changes]
            out.update(count=count, changes=changes)
    except (Unreadable, rc.Unreadable) as error:
        return dict(
            out,
            audits=[],
            differences=[],
            roster=[],
            rows={"trials.csv": 0, "seats.csv": 0},
            exit=1 if isinstance(error, rc.Altered) else 2,
            error=one_line(error),
        )
    exits = [a["exit"] for a in out["audits"]] + [1 if out["differences"] or out["roster"] else 0]
    return dict(out, exit=max(exits))


def gather_match(rc, mid, versions, study):
    """Gather one match: its verified copy in the saved study's folder, else from the platform
    (the report under each rubric its rows name, and its own), kept in the study's copy under
    --save."""
    folder = os.path.join(study.folder or study.staged or "", mid)
    if study.folder:
        match = rc.saved_match(inside(folder, study.folder))
        if match.about is None or match.match_id != mid:  # a copy of its own saved.json only
            raise Unreadable("%s: not a verified copy of %s" % (folder, mid))
        return match
    reports = list(dict.fromkeys(versions + [None]))
    whole = bool(study.staged or study.args.against)  # a copy kept or compared: gathered whole
    match = rc.download(
        study.args.net, study.origin, study.args.named, mid, reports, tell=False, whole=whole
    )
    if study.staged:
        about = {"kind": "match", "id": mid, "address": match.origin, "rubric": None}
        keep(new_copy(folder), match.files, about, folder)
    return match


# ---------------------------------------------------------------- the files
# Each file's columns in order with their fields' forms (study.md §2, records.md §2.2-2.3;
# "": any text)
NO_VALUE = "failed|cancelled|seat_failed|stopped_short|resumed|version|unscored|unmeasured"
PAIR_OUT = r"-?[0-9]+:(%s|no_trial|other_seeds)" % NO_VALUE
FORMS = {
    "int": r"-?[0-9]+",
    "tenths": r"[0-9]+(\.[0-9])?",
    "bool": "true|false",
    "decimal": r"-?[0-9]+(\.[0-9]+)?",
    "no_value": NO_VALUE,
    "pair_out": "(%s)(;%s)*" % (PAIR_OUT, PAIR_OUT),
}
# column:form, a form named in FORMS or written out (none: any text); in seats.csv, the counts from
# turns to recoveries are those §8 ties
TRIALS, SEATS = (
    {  # a form's number at most EXACT_DIGITS digits before its point (a double holds them exactly)
        column: FORMS.get(form, form).replace("[0-9]+", "[0-9]{1,%d}" % EXACT_DIGITS, 1)
        for column, _, form in (c.partition(":") for c in spec.split())
    }
    for spec in (
        r"study trial:int arm:int arm_label match:m_[0-9a-f]{12} map_seed:int spawn_seed:int "
        "ended:completed|failed|cancelled|stopped_short rounds_played:int rounds_planned:int "
        r"resumed_at:int metric value:-?[0-9]+(\.[0-9]{1,3})? no_value:no_value pair:in|out "
        "pair_out:pair_out in_comparison:bool stopping_rule:fixed|anytime "
        r"comparison_level:[0-9]+(\.[0-9]+)? scenario scenario_hash rubric analysis canary",
        "study trial:int arm:int seat:int name model harness focal:bool whole_trial:bool rubric "
        "fitness_index:tenths grade rank:int status survival:tenths economy:tenths social:tenths "
        "adaptation:tenths competitiveness:tenths turns:int rounds_sat_out:int error_turns:int "
        "spend:decimal rests:int looks:int moves:int gathers:int crafts:int builds:int repairs:int "
        "trains:int trades:int attacks:int raids:int messages:int dormancies:int recoveries:int "
        r"reputation:decimal aggression:int map_coverage:[0-9]+(\.[0-9]{1,3})? canary",
    )
)
# What the csv module's reader meets (its message's first word), said in the file's own terms
CSV_FAULTS = {
    "unexpected": "a quoted field opened here is never closed",
    "new-line": "a carriage return (CR) not followed by a line feed (LF), outside quotes",
    "','": "text after a quoted field's closing quote (a quote within one is written twice)",
}
# A byte not UTF-8 decodes to U+DC80-U+DCFF; a NUL is made U+DC00 (the csv module refuses it on
# 3.9, unnamed)
NOT_TEXT = re.compile("[\udc00-\udcff]")


def read_trials(body):
    rows = read_csv(body, "trials.csv", TRIALS, ("trial", "arm"), ("pair",))
    if not rows:
        raise Unreadable("trials.csv has no rows: not a published study")
    return rows


def read_seats(body):
    return read_csv(body, "seats.csv", SEATS, ("trial", "arm", "seat"), ("focal", "whole_trial"))


class Row(tuple):
    """A CSV row's fields and line by column name (row["trial"], row["_line"]), as a tuple: small;
    row.file names its file."""

    __slots__ = ()

    def __getitem__(self, column):
        return tuple.__getitem__(self, self.places[column])


def read_csv(body, name, forms, key, flags):
    """Rows (Row) in `key` order, key and flags not empty, else Unreadable naming where."""
    text = as_text(body.removeprefix(b"\xef\xbb\xbf"), name, "surrogateescape")
    text = text.replace("\x00", "\udc00")
    if text.lstrip()[:1] == "<":
        raise Unreadable("%s holds an HTML page, not CSV: not a study file" % name)
    columns, required, rows = tuple(forms), key + flags, []
    patterns = {column: re.compile(form) for column, form in forms.items() if form}
    places = {column: place for place, column in enumerate(columns + ("_line",))}
    kind = type("Row", (Row,), {"__slots__": (), "places": places, "file": name})
    records, not_text = _records(text, name, columns), NOT_TEXT.search(text)
    _check_header(next(records, (1, None))[1], columns, name)
    for line, fields in records:
        at = "%s line %d, column %%s: " % (name, line)
        if len(fields) != len(columns):
            raise Unreadable(
                "%s line %d: %d fields, the header has %d" % (name, line, len(fields), len(columns))
            )
        for column, field in zip(columns, fields if not_text else ()):
            bad = NOT_TEXT.search(field)
            if bad:
                raise Unreadable(
                    "%s is not UTF-8 text: line %d, column %s holds the byte 0x%02x"
                    % (name, line, column, ord(bad.group()) - 0xDC00)
                )
        for column, field in zip(columns, fields):
            if field == "":
                if column in required:
                    raise Unreadable(at % column + "empty")
            elif column in patterns and not patterns[column].fullmatch(field):
                raise Unreadable(
                    at % column + "%s is not of the form %s" % (_shown_field(field), forms[column])
                )
        rows.append(kind([*map(sys.intern, fields), line]))  # each text held once
        if len(rows) > MAX_CSV_ROWS:
            raise Unreadable(
                "%s holds more than %d rows: not a study this script reads" % (name, MAX_CSV_ROWS)
            )
    for before, row in zip(rows, rows[1:]):
        if [int(row[column]) for column in key] <= [int(before[column]) for column in key]:
            raise Unreadable(
                "%s line %d: out of order (rows come by %s, each once)"
                % (name, row["_line"], ", ".join(key))
            )
    return rows


def _records(text, name, columns):
    """(line, fields) of each record, the header first: RFC 4180 CSV as the csv module reads it, and
    the one rule it leaves to check: a quote only in a quoted field."""
    # a field past a third of MAX_BYTES is refused as it is read: its copies stay within the bound
    csv.field_size_limit(MAX_BYTES // 3)
    record = []  # the lines of the record being read
    lines = map(operator.itemgetter(0), re.finditer("[^\n]*\n|[^\n]+", text))
    reader = csv.reader((record.append(line) or line for line in lines), strict=True)
    try:
        for fields in reader:
            raw, record[:], start = "".join(record), [], 0
            for n, field in enumerate(fields if '"' in raw else ()):  # start: where field n starts
                quoted = raw.startswith('"', start)
                if '"' in field and not quoted:
                    raise Unreadable(
                        "%s line %d, column %s: not RFC 4180 CSV (a quote inside an unquoted "
                        "field, or text after a closing quote)"
                        % (name, reader.line_num, columns[min(n, len(columns) - 1)])
                    )
                start += len(field) + 1 + (field.count('"') + 2) * quoted
            yield reader.line_num, fields
    except csv.Error as error:  # what the reader met, in the file's terms, and the line it is on
        fault, line = str(error).split()[0], reader.line_num
        if fault == "unexpected":  # the file ends within a quoted field: the line of the quote
            # that opened it, the last run of quotes of odd length (within it, they come in pairs)
            raw = "".join(record)
            at = max((q.start() for q in re.finditer('"+', raw) if len(q.group()) % 2), default=0)
            line += raw.count("\n", 0, at) + 1 - len(record)
        raise Unreadable("%s line %d: %s" % (name, line, CSV_FAULTS.get(fault, error)))


def _check_header(header, columns, name):
    if header is None:
        raise Unreadable("%s is empty: not a study file" % name)
    for at, (got, expected) in enumerate(itertools.zip_longest(header, columns), 1):
        if got != expected:  # None: the column missing, or one after the last
            got, expected = ("none" if x is None else _shown_field(x) for x in (got, expected))
            raise Unreadable(
                "%s line 1: the header is not %s's columns in order: column %d is %s, expected %s"
                % (name, name, at, got, expected)
            )


def _shown_field(field):
    return repr(field) if len(field) <= 40 else "%r... (%d characters)" % (field[:40], len(field))


def exact_units(text, places):
    """Decimal text as an exact integer count of 10**-places (no float in between)."""
    whole, _, fraction = text.lstrip("-").partition(".")
    units = int(whole) * 10**places + int((fraction + "0" * places)[:places] or "0")
    return -units if text.startswith("-") else units


def find_reading(profile, study_id):
    studies = profile.get("studies") if isinstance(profile, dict) else None
    if not isinstance(studies, list):
        raise Unreadable("the profile JSON has no list of studies")
    cards = [c for c in studies if isinstance(c, dict) and c.get("id") == study_id]
    if len(cards) != 1:
        raise Unreadable(
            "the profile holds %d cards for %s (one per study)" % (len(cards), study_id)
        )
    card = cards[0]
    if card.get("kind") == "runset":
        raise Unreadable("%s is a run set: it has no files and no reading" % study_id)
    if isinstance(card.get("reading"), dict):
        return card, card["reading"]
    raise Unreadable("the profile's card for %s holds no reading" % study_id)


# ---------------------------------------------------------------- reporting
def _cell(value):
    return "none" if value is None else cut(_shown(value), LABEL_CHARACTERS)


def _difference(f, form=" %+d"):
    """How far a figure is from its recomputation, in units of its last place: " -4" (none: "")."""
    return "" if f["difference"] is None else form % f["difference"]


def _figure_tables(figures, values, wrong):
    """A table per comparison, arm and model (a row each, a column per figure), a cell holding
    published/recomputed where they differ."""
    lines, differ = [], [f for f in figures if f["same"] is False]
    for kind in ("comparison", "arm", "model"):
        rows, columns = {}, {}
        for f in (f for f in figures if kind in f["key"]):
            column = re.sub(" (low|high)$", "", f["key"]["figure"])
            columns[column] = None  # the columns in order of first appearance
            cell = _cell(f["published"]) + ("" if f["same"] else "/" + _cell(f["recomputed"]))
            rows.setdefault(f["label"].rpartition(": ")[0], {}).setdefault(column, []).append(cell)
        table = [
            [cut(name.split(" ", 1)[1], 36)] + [" ".join(cells.get(c, ["-"])) for c in columns]
            for name, cells in rows.items()
        ]
        if rows:
            lines += [""] + bands(list(zip([kind + "s", *columns], *table)))
    if differ:
        lines += ["", "a/b: published a, recomputed b where they differ"]
    lines += [
        "DIFFERS %s %s: published %s, recomputed %s%s"
        % (
            *f["label"].rpartition(": ")[::2],
            _cell(f["published"]),
            _cell(f["recomputed"]),
            _difference(f, ", %+d in the last place"),
        )
        for f in differ
    ]
    lines += ["    %(label)s: %(reason)s" % f for f in figures if f.get("reason")]
    if values:
        n = len(values) - len(wrong)  # those that agree
        lines += ["", "trial values from their focal seats: %d of %d agree" % (n, len(values))]
    return lines


def report_text(header, result, every):
    """The report: header, root causes, figures, checks (those that fail, --all: every check,
    numbered, then how many of the others agree), each match, the counts, trust, verdict."""
    values = [f for f in result.figures if "line" in f]  # each trial's value from its focal seats
    figures = [f for f in result.figures if "line" not in f]
    wrong = [f for f in values if not f["same"]]
    lines = [one_line(line) for line in header]
    if wrong:
        lines += ["", "root causes: trial values that do not follow from their focal seats"]
    lines += [
        "  %(file)s line %(line)d: trial %(trial)d arm %(arm)d value %(published)s; "
        "its focal seats give %(ours)s%(off)s"
        % dict(f, **f["key"], ours=_cell(f["recomputed"]), off=_difference(f, " (%+d)"))
        for f in wrong
    ]
    if not every:
        lines += _figure_tables(figures, values, wrong)
    else:  # --all: every figure, then every trial value, on a row of its own
        width = min(max([len(f["label"]) for f in figures + values] + [20]), 60) + 2
        for what, side, rows in ("figure", "page", figures), ("trial value", "trials.csv", values):
            if rows:
                lines += ["", "%-*s %-12s recomputed" % (width, what, side)]
            for f in rows:
                same = {True: "same", None: "NOT RECOMPUTED"}.get(f["same"], "DIFFERS")
                lines.append(
                    "%-*s %-12s %-12s %s"
                    % (
                        width,
                        cut(f["label"], width),
                        _cell(f["published"]),
                        _cell(f["recomputed"]),
                        same + _difference(f),
                    )
                )
                if f.get("reason"):
                    lines.append("    (%(reason)s)" % f)
    lines += check_lines(result, every)
    width, verdict = terminal_width(), study_verdict(result)  # the verdict, last, never wrapped
    if Running.explain and verdict == verdict_line([]):
        lines.append("nothing differs: nothing to explain")
    return "\n".join(
        [part for line in lines for part in wrapped(line, width)]
        + [one_line(verdict, len(verdict))]
    )


def check_lines(result, every):
    """The checks that fail (--all: every check), numbered, then how many of the others agree;
    each match; the counts kept apart; what is taken on trust."""
    shown = [(n, *c.values()) for n, c in enumerate(result.checks, 1) if every or not c["agrees"]]
    lines = ["", "checks"] + [
        "%3d. %s: %s%s"
        % (
            n,
            one_line(name),
            "agrees" if agrees else "FAILS",
            "" if detail is None else " (%s)" % one_line(detail),
        )
        for n, name, agrees, detail in shown
    ]
    agreeing = len(result.checks) - len(shown)
    if agreeing:
        lines.append(
            "  %s %d %s (--all lists each)"
            % ("the other" if shown else "all", agreeing, "agrees" if agreeing == 1 else "agree")
        )
    for f in result.figures:
        lines += explained(f["label"], f)
    # the counts kept apart: figures, checks and, under --matches, matches, waits and rows
    counts = _summary(result)
    tail = [
        "",
        "figures that match: %(figuresSame)d of %(figuresCompared)d compared" % counts
        + ", %(figuresNotRecomputed)d not recomputed"
        % counts
        * bool(counts["figuresNotRecomputed"]),
        "checks that agree: %(checksAgree)d of %(checksMade)d made" % counts,
    ]
    if result.matches is not None:
        lines += match_lines(result.matches, result.differences)
        rows = tuple(
            counts[k][n] for n in ("trials.csv", "seats.csv") for k in ("rowsAgree", "rows")
        )
        tail += [
            "matches that recompute: %(matchesRecompute)d of %(matches)d named" % counts,
            "waits for the platform (a 429's or 503's Retry-After): %(waited)d s" % counts,
            "rows that agree with their match's record: trials.csv %d of %d, seats.csv %d of %d"
            % rows,
        ]
    return lines + tail + ["taken on trust:"] + ["  - " + one_line(t) for t in result.trust]


def study_verdict(result):
    """The study's verdict line: figures by their key (in words, comparison 1, model m, trial 3
    arm 1, at most 40 characters), checks by number, then each match's findings."""
    matches = result.matches or []
    audits = [(m["match"], a) for m in matches for a in m["audits"]]
    named = {False: [], None: []}  # figures that differ, not recomputed: by their key in words
    for f in (f for f in result.figures if f["same"] is not True):
        words = " ".join("%s %s" % kv for kv in f["key"].items() if kv[0] != "figure")
        named[f["same"]].append(cut(_shown(words), 40) + " " + f["key"]["figure"])
    differs = (
        named[False]
        + ["%s %s" % (mid, d["label"]) for mid, a in audits for d in a["differs"]]
        + ["%(file)s line %(line)d %(column)s" % d for d in result.differences]
    )
    fails = ["check %d" % n for n, check in enumerate(result.checks, 1) if not check["agrees"]]
    fails += ["%s %s" % (mid, one_line(c["check"])) for mid, a in audits for c in a["checksFailed"]]
    return verdict_line(
        [
            ("DIFFERS", differs),
            ("FAILS", fails),
            ("CHANGED", ["%d since the saved copy" % result.changed] * bool(result.changed)),
            ("NOT READ", [m["match"] for m in matches if "error" in m]),
            ("NOT RECOMPUTED (the study not fully audited)", named[None]),
        ]
    )


def _summary(result):
    """The counts kept apart, as --json's summary gives them."""
    same = Counter(f["same"] for f in result.figures)
    counts = {
        "figuresSame": same[True],
        "figuresNotRecomputed": same[None],
        "figuresCompared": len(result.figures),
        "checksAgree": sum(c["agrees"] for c in result.checks),
        "checksMade": len(result.checks),
    }
    matches = result.matches
    if matches is None:
        return counts
    differing = {(d["file"], d["line"]) for d in result.differences}
    return dict(
        counts,
        matches=len(matches),
        matchesRecompute=sum(
            1 for m in matches if m["audits"] and not any(a["exit"] for a in m["audits"])
        ),
        unreadable=[m["match"] for m in matches if "error" in m],
        rows=result.rows,
        waited=round(result.waited),
        rowsAgree={
            n: sum(m["rows"][n] for m in matches) - sum(1 for f, _ in differing if f == n)
            for n in ("trials.csv", "seats.csv")
        },
    )


def match_lines(matches, fields):
    """§8: a line per match (its whole audit where it does not recompute), then each field that
    differs from its match's record: where, the file's value, the record's."""
    lines = [""]
    for m in matches:
        where = "%s (trial %d arm %d)" % (m["match"], *m["trials"][0])  # its first
        if "error" in m:
            lines.append("%s: cannot be read: %s" % (where, m["error"]))
        for a in m["audits"]:
            read = " report?rubric=" if "report" in a else " under "  # the report read, named
            lines.append(
                where + read + "%(rubric)s: figures same %(figuresSame)d of %(figuresCompared)d; "
                "checks agree %(checksAgree)d of %(checksMade)d" % a
            )
            lines += a["text"].rstrip("\n").split("\n") + [""] if "text" in a else []
    if fields:
        lines += ["", "row fields that differ from their match's record: %d" % len(fields)]
    for d in fields:
        seat = "" if d["seat"] is None else " seat %d" % d["seat"]
        value = _cell(d["value"]) or "(empty)"
        record = cut(d["record"] or "(none)", 24)
        lines.append(
            "  %(file)s line %(line)d (trial %(trial)d arm %(arm)d" % d
            + seat
            + ") %s: file %s, %s %s" % (d["column"], value, d["source"], record)
        )
    return lines


def _json_figure(f):
    """Its texts as the numbers they print, `shown` keeping a text whose places or sign the number
    loses."""
    number = {
        side: float(text) if "." in text else int(text)
        for side, text in f.items()
        if side in ("published", "recomputed")
        and isinstance(text, str)
        and DECIMAL_TEXT.fullmatch(text)
        and len(text) <= 2 * EXACT_DIGITS
    }
    shown = {side: f[side] for side in number if f.get("reason") or not float(f[side])}
    return dict(f, **number, **({"shown": shown} if shown else {}))


# ---------------------------------------------------------------- gather the study
FILES = {
    "trials": "trials.csv",
    "seats": "seats.csv",
    "page": "profile.json",
    "recipe": "recipe.json",
}
STUDY_FILE = r"(trials|seats)\.csv|(profile|recipe)\.json"
# A study's address, checked whole before it is split: no escape, space or control character.
STUDY_ADDRESS = re.compile(
    r"(https?://(?:[^/?#@\s]*@)?(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?"
    r"(?:/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*?)"  # a mirror's prefix: no . or .. in it
    r"/u/([a-z0-9_-]{1,32})/studies/(s_[0-9a-f]{8})"
)


def parse_study_address(address, base="https://daishi.ai", named="default"):
    """(base, handle, study id, address, what named its server) of https://host[/prefix]/u/
    <handle>/studies/<id>, as pasted, or of its path alone (/u/...) under base."""
    path = re.match("[^?#]*", address.strip(" \t\r\n")).group().removesuffix("/")
    if MATCH_ID.match(path):
        raise Usage("%s is a match: audit it with recompute.py %s" % (path, path))
    own = not path.startswith("/u/")  # a whole address, naming its own server
    if named == "--base" and own:
        raise Usage(
            "--base names the server for a study's path (/u/<handle>/studies/<id>), and "
            "%s names its own: give one or the other" % _shown(path)
        )
    whole = path if own else base_of(base, named) + path
    match = STUDY_ADDRESS.fullmatch(whole)
    if match is None or not 0 < int(match.group(2) or 1) < 65536:
        if own and (path.startswith((".", "~")) or path.startswith(os.sep) and "//" not in path):
            raise Unreadable("%s: no such folder" % _shown(address))
        raise Unreadable(
            "not a study address: %s (expected https://daishi.ai/u/<handle>/studies/"
            "s_<8 hex digits>, handle and id in lowercase, its path /u/..., or a folder "
            "--save wrote)" % _shown(address)
        )
    return (*match.group(1, 3, 4), match.group(), "the study's address" if own else named)


class Gather:
    """The study's files, each from its --option FILE, else the saved folder's copy (one its
    saved.json lists, checked), else (online) the platform: `files` by name, `used` where each
    came from."""

    def __init__(self, args, origin, copy):
        self.args, self.origin, self.copy = args, origin, copy or {}
        self.offline = copy is not None or None not in (args.trials, args.seats, args.page)
        self.files, self.used = {}, {}

    def get(self, option, path):
        name, given = FILES[option], getattr(self.args, option)
        if given is not None:
            body, self.used[name] = read_file(given, None), "saved copy " + given
        elif name in self.copy:
            body = self.copy[name]
            self.used[name] = "saved copy " + os.path.join(self.args.address, name)
        elif self.offline:
            raise Unreadable(
                "reading offline, nothing is fetched: the study needs its %s; give it "
                "with --%s FILE" % (name, option)
            )
        else:
            try:
                body = self.args.net.get(self.origin + path, name, self.args.named)
            except Unreadable as err:
                if getattr(err, "status", None) != 404 or option == "page":
                    raise
                raise Unreadable(
                    "%s: no such handle or study, or a run set (a run set has no files)" % err
                )
            proxy = through(self.origin)  # asked once a request has imported the network's modules
            self.used[name] = (
                "served " + self.origin + path + (" through " + proxy if proxy else "")
            )
        self.files[name] = body
        return body


def read_study(gather, handle, study_id):
    """trials.csv, seats.csv, the page's reading and, under the anytime rule, the recipe's rho."""
    base = "/u/%s/studies/%s/" % (handle, study_id)
    trials = read_trials(gather.get("trials", base + "trials.csv"))
    seats = read_seats(gather.get("seats", base + "seats.csv"))
    profile = parse_json(gather.get("page", "/u/%s.json" % handle), "the profile JSON", True)
    card, reading = find_reading(profile, study_id)
    rule, recipe = trials[0]["stopping_rule"], gather.args.recipe
    if rule != "anytime":
        if recipe is not None:  # said in the report's head, as where each file came from
            gather.used["recipe.json"] = "not read (--recipe %s): the rule is %s, not anytime" % (
                _shown(recipe),
                rule,
            )
        return trials, seats, reading, None
    recipe_id = card.get("recipe")
    if not isinstance(recipe_id, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", recipe_id):
        raise Unreadable(
            "the card for %s names no usable recipe (%s): the anytime rule needs its "
            "rho" % (study_id, _shown_field(_shown(recipe_id) or "null"))
        )
    recipe = gather.get("recipe", "/u/%s/recipes/%s.json" % (handle, recipe_id))
    recipe = parse_json(recipe, "the recipe JSON", True)
    if not isinstance(recipe, dict):
        raise Unreadable("the recipe JSON is not an object")
    if recipe.get("id") != recipe_id:
        raise Unreadable(
            "the recipe is %r, the study's card names %r" % (recipe.get("id"), recipe_id)
        )
    rho = recipe["anytime"].get("rho") if isinstance(recipe.get("anytime"), dict) else None
    if type(rho) not in (int, float) or not RHO_RANGE[0] <= rho <= RHO_RANGE[1]:
        raise Unreadable(
            "recipe %s: anytime.rho is %s, not a number from %g to %g"
            % (recipe_id, _shown(rho), *RHO_RANGE)
        )
    return trials, seats, reading, float(rho)


def folder_names(path):
    """The names in a folder, sorted; Unreadable where it cannot be listed."""
    try:
        return sorted(os.listdir(path))
    except OSError as err:
        raise Unreadable("%s: cannot read the folder (%s)" % (path, err.strerror or err))


def saved_study(folder, option=""):
    """A study copy --save wrote: (saved.json, its files), every file checked; else refused,
    saying what reads the folder where something does (under --against, a usage error)."""
    names = set(folder_names(folder)) if os.path.isdir(folder) else set()
    copies = SAVED not in names and any(map(MATCH_ID.match, names))  # as recompute.py --save
    if copies or names & {"export", "report.json"}:
        raise Usage(
            "%s%s holds matches, not a study: audit them with recompute.py %s"
            % (option, _shown(folder), _shown(folder))
        )
    about, files = read_copy(folder, "study", STUDY_FILE)
    if about is None:
        why = (
            "not a folder --save wrote (no saved.json)"
            if os.path.lexists(folder)
            else "no such folder"
        )
        raise (Usage if option else Unreadable)("%s%s: %s" % (option, _shown(folder), why))
    return about, files


def card_only(files, study_id):
    """The files as --against compares them: of the profile, only the study's card."""
    out = dict(files)
    if "profile.json" in out:  # read before, as the page's reading: a card for the study
        card = find_reading(json.loads(out.pop("profile.json")), study_id)[0]
        out["profile.json (the study's card)"] = json.dumps([card]).encode()
    return out


def csv_changes(name, was, now, changes):
    """Each field that differs, by its line and column; a line one side lacks, of another width or
    longer than 65,536 characters, as one change."""
    was, now = (io.StringIO(text.decode("utf-8", "replace"), newline="") for text in (was, now))
    head = csv_fields(now.readline().rstrip("\r\n"))
    now.seek(0)
    for number, lines in enumerate(itertools.zip_longest(was, now, fillvalue="(absent)"), 1):
        a, b = (line.rstrip("\r\n") for line in lines)
        rows = [head, csv_fields(a), csv_fields(b)]
        whole = None in rows or len(set(map(len, rows))) > 1  # the line as one change
        for column, x, y in [("", a, b)] if whole else zip(*rows):
            if x != y:
                changes.add(name, ("line %d " % number + column).strip(), x, y)


def csv_fields(line):
    """A CSV line's fields, or None for a line longer than 65,536 characters (never split)."""
    return next(csv.reader([line]), []) if len(line) <= 65536 else None


# ---------------------------------------------------------------- main
EPILOG = """example: python3 recompute_study.py /u/kim/studies/s_eee65f53 --save kim; and later,
offline: python3 recompute_study.py kim

A table cell a/b is published/recomputed, shown where the two differ (--all: a row per figure).
--against OLD wants the folder --save wrote.

environment: DAISHI_BASE (as --base); DAISHI_TIMEOUT, seconds a request may take (30);
DAISHI_BUSY, seconds a run waits for a busy platform in all (60)

exit status: 0 every figure matches and every check agrees; 1 a figure differs, a check fails or
--against finds a change; 2 the study cannot be read, a figure not recomputed, the platform busy,
or a usage error; 130, 143, 129 interrupted (Ctrl-C, SIGTERM, SIGHUP); 141 stdout closed"""
OPTIONS = (
    ("--trials FILE", "read this saved trials.csv instead of the served one"),
    ("--seats FILE", "read this saved seats.csv instead of the served one"),
    ("--page FILE", "read this saved profile JSON (the page's reading)"),
    ("--recipe FILE", "read this saved recipe JSON (anytime rule)"),
    (
        "--base URL",
        "the server to read a study's path /u/<handle>/studies/<id> from "
        "(default https://daishi.ai, or $DAISHI_BASE)",
    ),
    ("--save DIR", "keep every file read in DIR, with saved.json (address, time, sha256 of each)"),
    ("--against OLD", "list what changed since the copy --save wrote in OLD"),
    (
        "--matches",
        "audit every trial's match too, with recompute.py from this script's folder, "
        "and tie every row to its record",
    ),
    ("--jobs N", "with --matches: N matches at a time (1 to 16, default 4)"),
    ("--all", "print every figure on its own row"),
    ("--json", "print the result as one JSON document"),
    ("--explain", "how each figure that differs was derived"),
)


def parse_arguments(argv):
    parser = Parser(
        prog=SCRIPT,
        formatter_class=Help,
        description="Recompute a daishi.ai study page's reading from its files and compare.",
        epilog=EPILOG,
    )
    parser.add_argument(
        "address",
        help="the study's address, https://daishi.ai/u/<handle>/"
        "studies/<id>, its path /u/<handle>/studies/<id>, or a folder --save wrote",
    )
    for option, text in OPTIONS:
        flag, _, metavar = option.partition(" ")
        kind = {"metavar": metavar} if metavar else {"action": "store_true"}
        parser.add_argument(flag, help=text, **kind)
    folder_left_out(argv, r"https?://|/u/")
    args = parser.parse_args(argv)
    Running.explain = args.explain
    if args.save and {args.trials, args.seats, args.page, args.recipe} != {None}:
        parser.error(
            "--save keeps what is downloaded, not a file of yours (--trials, --seats, "
            "--page, --recipe): leave one out"
        )  # a copy holds only what was served
    if args.jobs is not None and not args.matches:
        parser.error("--jobs goes with --matches")
    if (args.jobs or "4") not in map(str, range(1, 17)):
        parser.error("--jobs takes a number from 1 to 16, got %s" % _shown_field(args.jobs))
    args.jobs = int(args.jobs or 4)
    args.base, args.named, args.net = settings(args.base, paced=True)
    if args.save:
        release()  # this file's digest, for saved.json, read before the first request
    return args


def load_recompute():
    """recompute.py from this script's own folder, run only where its bytes are the ones released
    with this script: their sha256 RECOMPUTE_SHA256. They are read once, checked, and compiled as
    read (no byte of it runs before the check; no __pycache__ read or written, nothing on sys.path
    searched). --matches only."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recompute.py")
    fix = "put the one released with it beside it (curl -sO https://daishi.ai/recompute.py)"
    if not os.path.isfile(path):
        raise Usage("--matches runs %s, which is not there: %s" % (path, fix))
    raw = read_file(path, None)
    if sha256(raw) != RECOMPUTE_SHA256:
        raise Unreadable(
            "--matches: %s has sha256 %s, not %s, that of the recompute.py released with %s %s: "
            "not run; %s" % (path, sha256(raw), RECOMPUTE_SHA256, SCRIPT, VERSION, fix)
        )
    module = type(sys)("recompute")
    exec(compile(raw, path, "exec"), vars(module))
    vars(module).update((name, globals()[name]) for name in SHARED)  # one shared block: this one
    module.release = {"version": module.VERSION, "sha256": RECOMPUTE_SHA256}
    return module


def audit_all(rc, groups, study):
    """Each match of the study, --jobs at a time, in trial order, none gathered more than
    2 × --jobs ahead of the one reported; of --against's changes, the first MAX_CHANGES of all
    kept as each match is reported (bounded memory). Progress on a terminal."""
    results, kept, pool = [], 0, ThreadPoolExecutor(max_workers=study.args.jobs)
    todo = (pool.submit(match_result, rc, mid, rows, study) for mid, rows in groups.items())
    ahead = deque(itertools.islice(todo, 2 * study.args.jobs))
    while ahead:
        future = ahead.popleft()
        ahead.extend(itertools.islice(todo, 1))
        progress("match %d/%d" % (len(results) + 1, len(groups)))
        while wait([future], timeout=0.25).not_done:
            pass  # a timed wait: Ctrl-C reaches the main thread between two
        result = future.result()
        result["changes"] = result.get("changes", [])[: MAX_CHANGES - kept]
        kept += len(result["changes"])
        results.append(result)
        if "error" in result:
            progress("")
            say(
                "%s: %s (trial %d arm %d): %s"
                % (SCRIPT, result["match"], *result["trials"][0], result["error"])
            )
    pool.shutdown()
    progress("")
    return results


def run(args):
    rc = load_recompute() if args.matches else None
    folder = args.address if os.path.isdir(args.address) else None
    if folder and args.save:
        raise Usage(
            "%s: --save keeps what is downloaded, and this is a saved copy: copy the folder "
            "itself to keep it" % _shown(folder)
        )
    copy = old = None
    try:
        copy = saved_study(folder) if folder else None
        old = saved_study(args.against, "--against ") if args.against else None
    except Altered as err:
        return altered(args, folder if copy is None else args.against, err, copy is None)
    given = (copy[0]["address"],) if copy else (args.address, args.base, args.named)
    origin, handle, study_id, address, args.named = parse_study_address(*given)
    if old and old[0]["id"] != study_id:
        raise Usage(
            "--against %s holds %s, not %s" % (_shown(args.against), old[0]["id"], study_id)
        )
    staged = new_copy(args.save) if args.save else None
    try:
        return audit_study(args, rc, folder, copy, old, origin, handle, study_id, address, staged)
    finally:
        if staged:
            discard(staged)


def audit_study(args, rc, folder, copy, old, origin, handle, study_id, address, staged):
    """Gather, read, recompute, keep, report: the study, and with --matches each match."""
    gather = Gather(args, origin, copy and copy[1])
    if rc:  # the recompute.py that audits the matches, as the user can check it
        gather.used["recompute.py"] = "%(version)s, sha256 %(sha256)s" % rc.release
    trials, seats, reading, rho = read_study(gather, handle, study_id)
    terms, result = recompute_reading(study_id, trials, seats, reading, rho)
    count, changes = (
        copy_changes(*(card_only(f, study_id) for f in (old[1], gather.files)), csv_changes)
        if old
        else (0, [])
    )
    if rc is not None:
        study = argparse.Namespace(
            folder=folder, origin=origin, metric=terms.metric, staged=staged, args=args
        )
        end_to_end(rc, study, trials, seats, result)
        for m in result.matches:  # a match the copy has and the study no longer names: its row
            count += m.pop("count", 0)
            changes = (changes + m.pop("changes", []))[:MAX_CHANGES]
    result.waited = args.net.waited
    if staged:
        scripts = {"recompute.py": rc.release} if rc else {}
        about = dict(kind="study", id=study_id, address=address, rubric=None, scripts=scripts)
        keep(staged, gather.files, about, args.save)
        gather.used["kept in"] = _shown(args.save)
    sames = [f["same"] for f in result.figures]  # None: not recomputed (exit 2)
    agree = False not in sames and all(c["agrees"] for c in result.checks) and not count
    status = max([1 - agree, 2 * (None in sames)] + [m["exit"] for m in result.matches or []])
    result.changed = count
    line = copy and saved_line(copy[0])
    print_report(args, study_id, address, line, gather, terms, result, status, old, changes)
    return status


def altered(args, folder, err, own):
    """A saved copy not as saved: each file named as a failed check, nothing read from it shown
    (exit 1)."""
    prefix, study_id = "" if own else "--against %s: " % _shown(folder), err.about.get("id")
    checks = [{"check": one_line(prefix + f), "agrees": False, "detail": None} for f in err.faults]
    if args.json:
        print_json(
            {"script": SCRIPT, "version": VERSION, "exit": 1, "study": study_id, "checks": checks}
        )
        return 1
    print("saved copy of %s: not what was saved" % _shown(study_id))
    print("\n".join("check FAILS: " + c["check"] for c in checks))
    return 1


def print_report(args, study_id, address, copy, gather, terms, result, status, old, changes):
    """The report, text or --json (one document: copy, matches and against only where there are);
    copy is the line naming a saved copy; old, the copy --against compares with."""
    if args.json:
        out = {
            "script": SCRIPT,
            "version": VERSION,
            "exit": status,
            "study": study_id,
            "address": address,
            "sources": gather.used,
        }
        if copy:
            out["copy"] = copy
        out.update(summary=_summary(result), figures=[_json_figure(f) for f in result.figures])
        if result.matches is not None:
            out.update(matches=result.matches, differences=result.differences)
        out.update(
            checks=result.checks,
            trusted=result.trust,
            verdict=study_verdict(result),
        )
        if old:
            out["against"] = {
                "folder": args.against,
                "savedAt": old[0]["savedAt"],
                "count": result.changed,
                "changes": changes,
            }
        return print_json(out)
    header = [copy] * bool(copy) + ["study %s at %s" % (study_id, address)]
    header += ["  %s: %s" % item for item in gather.used.items()] + [
        "  metric %s (%s, range %s, %s is better)"
        % (
            terms.metric,
            "a seat score" if terms.seat_score else "declared on the card",
            "none" if terms.bounds is None else "[%s, %s]" % terms.bounds,
            terms.direction,
        ),
        "  %s rule, effect %s, alpha %.6g per comparison over %d"
        % (terms.rule, terms.effect, terms.alpha, len(terms.compared))
        if terms.compared
        else "  a series, no comparisons",
    ]
    if old:
        header += [""] + against_lines(args.against, old[0]["savedAt"], result.changed, changes)
    print(report_text(header, result, args.all))


def main(argv=None):
    argv = [taken(a) for a in (sys.argv[1:] if argv is None else argv)]  # no password kept
    try:
        return run(parse_arguments(argv))
    except (Usage, Busy) as err:  # no word on the study
        message = str(err)
    except Unreadable as err:  # an option's own fault names it first
        message = str(err) if str(err).startswith("--") else "cannot read the study: %s" % err
    return fail(message, "--json" in argv)


# ==================================================================== the shared block
# From here to the block's end, the same text in recompute.py and recompute_study.py (a test
# holds them to it): audited once. rubric.md's half up, Fitness Index and grade (recompute.py
# scores by them, the study checks each scorecard by them); then in the order a run uses it: the
# terminal and its one escaping function (one_line), the JSON reader, gathering a record's files
# (Network.get, the one function that sends requests; read_copy, the one that reads a saved copy),
# comparing two copies, keeping one (keep, the one function that writes files), and running the
# command.
OUTSIDE = set(globals())  # the names defined before this block: the rest, to its end, its own
MAX_SHOWN = 300  # characters of a record's or server's text shown, then a marker
MAX_LISTED = 40  # lines of a long list shown, then "... and N more"
MAX_BYTES = 64 << 20  # one file of a record (a page, a report, a CSV), once decompressed
MAX_JSON_VALUES = 1000000  # in one JSON file (counted as its brackets, braces and commas)
MAX_COPY_BYTES = 96 << 20  # a copy's files in all, as gathered or read
MAX_SAVED_BYTES = 4 << 20  # a saved.json: 10,000 pages' names and digests take 1 MB
MAX_CHANGES = 1000  # changes --against keeps to list; every one is counted
MOST_RETRY_AFTER = 60  # seconds, one wait a busy platform asks for: records.md §3's most
RETRY_PAUSE_SECONDS = 1.0  # before the one retry after a 5xx, or a 429 without Retry-After
PACE = 1 / 9  # seconds between requests: a little under the platform's 10 a second (records.md §3)
BURST = 18  # requests sent at once before the pace applies: a little under the platform's 20
REDIRECTS = (301, 302, 303, 307, 308)  # followed within the server only, 10 at most
DEFAULT_BASE = "https://daishi.ai"
SAVED = "saved.json"  # written last into a copy: kind, id, address, savedAt, rubric, script,
# version, sha256 (each file's)
# Escaped in any text shown: C0 and C1 controls, DEL, the bidi marks, embeddings, overrides and
# isolates, the Unicode line and paragraph separators.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
CREDENTIALS = re.compile(r"(?<=://)[^/?#\s]*@")  # user:password@ in an address: never shown
SECRETS = {}  # a server's user:password, as an address held it: sent as Authorization, never shown
SIGNALS = (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM))
PARTS = set()  # folders being written: removed on Ctrl-C, whichever thread writes them
WRITING = threading.RLock()  # held to add, write into or remove one of PARTS
STOPPED = threading.Event()  # set on a signal and as a run ends: nothing sent or written after


class Running:
    """The script that runs, as it names itself below this block (in errors, User-Agent and
    saved.json): this block reads nothing of the module around it."""

    script = version = "?"
    explain = False  # --explain: the rules record their terms (note), shown for what differs


class Unreadable(Exception):
    """A record that cannot be read, or a copy or option that cannot be used: one line, exit 2."""


class Usage(Unreadable):
    """An option that cannot be used as given: one line naming --help, exit 2."""

    def __str__(self):
        return "%s (see %s --help)" % (self.args[0], Running.script)


class Busy(Unreadable):
    """The platform busy (429 or 503) past what the run waits for: no word on the record."""


class Altered(Unreadable):
    """A saved copy whose files are not those its saved.json lists: a failed check, exit 1."""


# ------------------------------------------------------------------ rubric.md §1 and §8
def hu(x, places):
    """Half up to `places` decimals on the double itself (rubric.md §1); x if too large to
    round."""
    scale = 10.0**places  # exactly 1, 10, 100 or 1000
    return math.floor(x * scale + 0.5) / scale if math.isfinite(x * scale) else x


def clamp(x):
    return min(max(x, 0), 100)


def fitness_index(dims):
    """rubric.md §8: the five dimensions' weighted sum, within 0 to 100, half up to tenths."""
    survival, economy, social, adaptation, competitiveness = dims
    return hu(
        clamp(
            0.25 * survival
            + 0.25 * economy
            + 0.2 * social
            + 0.15 * adaptation
            + 0.15 * competitiveness
        ),
        1,
    )


def grade_of(index, dims, rubric):
    """By the index; from 2.0 an A or B needs three dimensions at 50 or more, else reads C."""
    # the letter by the floors the index falls short of
    grade = "ABCDF"[sum(index < floor for floor in (80, 65, 50, 35))]
    return "C" if rubric != "1.0" and grade in "AB" and sum(d >= 50 for d in dims) < 3 else grade


# ------------------------------------------------------------------ --explain: the rules' terms
EXPLAINING = threading.local()  # this thread's record of terms (--matches audits in threads)


def note(whose, *figures, **terms):
    """The terms of whose figures (a seat's, a comparison's), by name, recorded by the rule that
    computes them as it runs, where a record is kept (--explain); a figure's first record stands."""
    record = getattr(EXPLAINING, "record", None)
    for figure in figures * (record is not None):
        record.setdefault((whose, figure), terms)


def explained(label, row):
    """Under --explain, a row's derivation as lines, MAX_LISTED at most: the figure or check and
    its rule, each term its rule recorded, then where the recomputed and the published value came
    from, each with its value (none where the row has no derivation)."""
    how = row.get("derivation")
    if how is None:
        return []
    lines = ["explain %s (%s):" % (label, how["section"])]
    lines += ["  %s: %s" % (name, clipped(v)) for name, v in how["terms"].items()]
    ends = ["  %s %s: %s" % (side, clipped(row[side]), at) for side, at in how["sources"].items()]
    return listed(lines, None, MAX_LISTED - 3) + ends


def one_line(message, limit=MAX_SHOWN):
    """Text as it may reach a terminal: one line, controls and bidi marks escaped (\\x1b,
    \\u202e), a password in an address hidden (https://***@host), cut when over-long."""
    message = CREDENTIALS.sub("***@", str(message))
    more = "... [%d characters in all]" % len(message) if len(message) > limit else ""
    return CONTROL.sub(lambda match: repr(match.group())[1:-1], message[:limit]) + more


def terminal_width():
    """The columns a line may take: a terminal's, from 60 to 100; 100 when not a terminal."""
    if not sys.stdout.isatty():
        return 100
    return max(60, min(100, shutil.get_terminal_size((100, 24)).columns))


def bands(columns):
    """A table's lines: its columns (each its head, then a cell a row) padded to their widest cell,
    in bands that each fit the terminal, the first column leading each."""
    first, *rest = [[c.ljust(max(map(len, column))) for c in column] for column in columns]
    out, width = [[first]], terminal_width()
    for column in rest:
        if len(out[-1]) > 1 and len("  ".join(c[0] for c in out[-1] + [column])) > width:
            out.append([first])
        out[-1].append(column)
    return ["  ".join(row).rstrip() for band in out for row in zip(*band)]


def wrapped(line, width):
    """A line escaped, and where wider than width broken into lines that go on indented four
    spaces: at a space, the line ending ` \\`; where no space is near, after a / (in an address)
    or else within the word, the line ending `\\`, the two parts joining as they are. Linear in
    the line's length."""
    line = one_line(line, len(line))
    out, start, indent = [], 0, ""
    while len(indent) + len(line) - start > width:
        offset = start - len(indent)  # where the shown line's position 0 falls in `line`
        at = line.rfind(" ", offset + 8, offset + width - 1) - offset
        mark = " \\"
        if at <= 8:  # no space near: after a / (an address's), else within the word
            at = line.rfind("/", offset + 8, offset + width - 1) + 1 - offset
            at, mark = at if at > 8 else width - 1, "\\"
        out.append((indent + line[start : offset + at]).rstrip() + mark)
        start, indent = offset + at, "    "
        while mark == " \\" and line.startswith(" ", start):
            start += 1
    return out + [indent + line[start:]]


def listed(lines, count=None, most=MAX_LISTED):
    """The first `most` of a list of lines, then one saying how many more, of `count` in all."""
    more = (len(lines) if count is None else count) - most
    return lines[:most] + (["  ... and %d more" % more] if more > 0 else [])


def say(line, begin="", end="\n", tty=False):
    """A line on stderr, escaped, best effort: a stderr closed or full changes no exit status;
    with tty, on a terminal only. A line may be twice MAX_SHOWN: it names a record's text cut."""
    try:
        if sys.stderr.isatty() or not tty:
            sys.stderr.write(begin + one_line(line, 2 * MAX_SHOWN) + end)
            sys.stderr.flush()
    except Exception:  # closed, full, or a write of the main thread's interrupted by a signal
        pass


def progress(line):
    """On a terminal, a line of progress that the next rewrites ("" clears it); else nothing. A
    dumb terminal (TERM=dumb) gets no control sequence: the line is padded with spaces instead."""
    dumb = setting("TERM") == "dumb"
    say(line.ljust(59) if dumb else line, "\r", "\r" if dumb else "\x1b[K", tty=True)


def print_json(document):
    """The one JSON document a run prints, indented, ASCII; a password in an address hidden."""
    print(CREDENTIALS.sub("***@", json.dumps(document, indent=1, ensure_ascii=True)))


def verdict_line(named):
    """The last line: each (word, names) that has names, the first 12 named; or that all agrees."""
    parts = []
    for word, names in named:
        if names:
            more = " and %d more" % (len(names) - 12) if len(names) > 12 else ""
            parts.append("%s: %s%s" % (word, ", ".join(names[:12]), more))
    return "; ".join(parts) or "every figure same, every check agrees"


def fail(message, as_json, status=2):
    """A run that ends on an error: one line on stderr, and under --json a document on stdout."""
    message = "%s: %s" % (Running.script, message)
    say(message)
    if as_json:
        print_json(
            {
                "script": Running.script,
                "version": Running.version,
                "exit": status,
                "error": one_line(message, 2 * MAX_SHOWN),
            }
        )
    return status


# ------------------------------------------------------------------ the JSON reader
def parse_json(raw, name, finite=False):
    """A JSON file. An integer beyond 2**53 (no exact double) is refused wherever it stands,
    named by its place, whatever PYTHONINTMAXSTRDIGITS says; with `finite`, a NaN or infinity
    too. Else they are read as floats, for the checks naming each field to refuse. A file where no
    4 bytes in a row of every fourth are digits holds no run of 16 digits, so no such integer:
    there the C parser's own int() reads every one (a sixth of the time of a long log, against a
    call per integer). Both guards read the bytes translated (a tenth of the time of a regex)."""
    marks = bytes.maketrans(b"123456789[{", b"000000000,,")  # 0: a digit; ,: a value
    if len(raw) > MAX_JSON_VALUES and raw.translate(marks).count(b",") > MAX_JSON_VALUES:
        raise Unreadable(
            "%s: more than %d JSON values: not a record this script reads" % (name, MAX_JSON_VALUES)
        )
    beyond = []
    whole = partial(whole_number, beyond) if b"0000" in raw[::4].translate(marks) else None
    try:  # C's int() where no long run
        doc = json.loads(as_text(raw, name), parse_constant=float, parse_int=whole)
        if beyond or finite:  # the first such number's place
            where = place_of(  # None where a key given twice hid it
                [doc], lambda v: v is beyond or finite and v in (math.inf, -math.inf) or v != v
            )
    except UnicodeDecodeError as err:
        raise Unreadable(
            "%s: not UTF-8 text (byte 0x%02x at offset %d)" % (name, raw[err.start], err.start)
        )
    except (ValueError, RecursionError) as err:
        raise Unreadable("%s: not valid JSON (%s)" % (name, err or "nested too deep"))
    if beyond or finite and where:
        where = "a key given twice" if where is None else where[3:].lstrip(".") or "the document"
        raise Unreadable(
            "%s: %s: not a finite number, nor an integer within 2**53" % (name, one_line(where, 80))
        )
    return doc


def as_text(raw, name, errors="strict"):
    """raw decoded from UTF-8, where its text takes MAX_BYTES of memory at most, whatever the file
    holds: one character past U+00FF makes each take 2 bytes, one past U+FFFF 4."""
    if len(raw) > MAX_BYTES // 4 and not raw.isascii():
        width = 4 if max(raw) >= 0xF0 else 2 if max(raw) >= 0xC4 else 1
        if len(raw) * width > MAX_BYTES:
            raise Unreadable(
                "%s: more than %d bytes once decoded (%d bytes a character): not a record this "
                "script reads" % (name, MAX_BYTES, width)
            )
    return raw.decode("utf-8", errors)


def whole_number(beyond, digits):
    """An integer of JSON as int(); one beyond 2**53 noted in `beyond` and stood for by it, its
    digits not converted (int() of a long one takes its length squared)."""
    if len(digits) <= 17 and abs(int(digits)) <= 2**53:  # int() of 17 characters: cheap
        return int(digits)
    beyond.append(digits)
    return beyond


def place_of(doc, found):
    """Where the first value of doc that `found` holds true of stands, as `a.b[0].c`, or None."""
    for key, value in doc.items() if isinstance(doc, dict) else enumerate(doc):
        inner = "" if found(value) else isinstance(value, (dict, list)) and place_of(value, found)
        if isinstance(inner, str):
            return ("[%d]" % key if isinstance(key, int) else "." + key) + inner
    return None


# ------------------------------------------------------------------ gather: the network
class Network:
    """Every request a run sends: GET, to the server the user named, over one kept-alive
    connection per thread and server (one TLS context for the run), each within one deadline
    (`timeout` seconds, a retry after a 5xx included) that every read from the network is held
    to, its body within MAX_BYTES once decompressed. A 429's or 503's Retry-After is waited out,
    every thread holding, and the request asked again, until the run's waits would pass
    `patience` seconds in all. From the first such wait, requests come PACE apart; with `paced`,
    from the first request (bursts of BURST allowed): a run of many records keeps a little under
    the platform's rate on its own."""

    def __init__(self, agent, timeout, patience, paced=False):
        self.agent, self.timeout, self.patience, self.paced = agent, timeout, patience, paced
        self.lock, self.waited, self.resume, self.due = threading.Lock(), 0.0, 0.0, 0.0
        self.local, self.context = threading.local(), None  # .pool: this thread's connections

    def get(self, url, what, named):
        """The one function that sends requests: the body of a 200 answer to GET url; `what`
        names the file and `named` what named the server, in an error. The modules a request
        needs are imported at a run's first: a run offline starts without them, a fifth sooner."""
        global base64, http, selectors, ssl, urllib
        import base64, http.client, selectors, ssl, urllib.request

        while True:
            if STOPPED.is_set():
                raise Unreadable("%s: not asked for: the run is stopping" % what)
            self.take_turn()
            try:
                return self.request(url, what, named)
            except Unreadable as err:
                if getattr(err, "wait", None) is None:
                    raise
                self.wait_out(err)

    def take_turn(self):
        """Sleep until this request's turn, if one is due: past the platform's last wait and, once
        paced, PACE after the one before (BURST of them at once with `paced`)."""
        with self.lock:
            now = time.monotonic()
            burst = (BURST - 1) * PACE if self.paced is True else 0
            turn = max(now, self.resume, self.due - burst)
            if self.paced:
                self.due = max(self.due, turn) + PACE
        if turn - now > 0.001:  # a wait is due (a float's last bits are not one)
            time.sleep(turn - now)

    def wait_out(self, err):
        """The platform asks the run to wait err.wait seconds: held, or given up past patience."""
        with self.lock:
            now = time.monotonic()
            added = max(now + err.wait - max(self.resume, now), 0)
            most = (
                (MOST_RETRY_AFTER, "at once")
                if err.wait > MOST_RETRY_AFTER
                else (self.patience, "in all (DAISHI_BUSY)")
            )
            if err.wait > MOST_RETRY_AFTER or self.waited + added > self.patience:
                raise Busy(
                    "%s; it asks to wait %d s more, past the %d s a run waits for a busy "
                    "platform %s, after %d s of waiting: try again later"
                    % (err, err.wait, *most, self.waited)
                )
            self.waited += added
            self.resume = max(self.resume, now + err.wait)
            self.paced = self.paced or "since busy"
        progress("waiting %d s: the platform asks (%d)" % (err.wait, err.status))

    def request(self, url, what, named):
        """One GET within one deadline, with one retry after a 5xx (or a 429 that asks no wait):
        the body of its 200 answer, else Unreadable with .status, .body and .wait (the seconds a
        429 or 503 asks for)."""
        deadline, retried = time.monotonic() + self.timeout, False
        while True:
            answer, body, failed = self.attempt(url, named, deadline)
            if answer and answer.status == 200:
                return body
            if time.monotonic() >= deadline:  # an error's body cut short by it included
                raise Unreadable(
                    "%s: %s sent no whole answer within %g s"
                    % (what, server_of(url, named), self.timeout)
                )
            if answer is None:
                raise Unreadable("%s: %s" % (what, what_failed(failed, None, b"", url, named)))
            status = answer.status
            after = (answer.getheader("Retry-After") or "").strip() if status in (429, 503) else ""
            wait = max(int(after), 1) if re.fullmatch("[0-9]{1,6}", after) else None
            if (status == 429 or status >= 500) and wait is None and not retried:
                retried = True
                time.sleep(min(RETRY_PAUSE_SECONDS, max(deadline - time.monotonic(), 0)))
                continue
            error = (Busy if status in (429, 503) else Unreadable)(
                "%s: %s" % (what, what_failed(None, answer, body, url, named))
            )
            error.status, error.body, error.wait = status, body, wait
            raise error

    def attempt(self, url, named, deadline):
        """exchange's (answer, body, None), or (None, None, why) where it fails."""
        try:
            return (*self.exchange(url, named, deadline), None)
        except (OSError, http.client.HTTPException, ValueError) as err:
            return None, None, err

    def exchange(self, url, named, deadline):
        """(answer, body) of GET url on this thread's connection to its server, redirects
        within that server followed: a 200's body within MAX_BYTES, another's within 64 KiB (b""
        past it)."""
        for _ in range(10):
            parts = split(url)
            conn, target, headers = self.connection(parts)
            answer = None
            try:
                answer = ask(conn, target, headers, deadline)
                if answer.status == 200:
                    return answer, decoded(answer, url, MAX_BYTES)
                body = quietly(decoded, answer, url, 65536)
            except BaseException:
                drop(conn, answer)
                raise
            if body is None:
                drop(conn, answer)
            location = answer.getheader("Location") if answer.status in REDIRECTS else None
            if location is None:
                return answer, body or b""
            new = urllib.parse.urlsplit(urllib.parse.urljoin(url, location))
            if (new.scheme, new.netloc.rpartition("@")[2]) != (parts.scheme, host_of(parts)):
                raise Unreadable(
                    "%s redirects to %s, another server than the one named by %s"
                    % (url, new.geturl(), named)
                )
            url = new._replace(netloc=parts.netloc).geturl()  # its password, if any, kept
        raise Unreadable("%s: redirected 10 times" % url)

    def connection(self, parts):
        """This thread's kept-alive connection to the server of `parts`, made at its first request
        (through the proxy the environment names, a CONNECT tunnel for https), with the target to
        ask it for and the headers to send: User-Agent, Accept-Encoding (gzip), Authorization
        where the address holds user:password@, and through an http:// proxy whose address holds
        one, Proxy-Authorization (for https, sent in the CONNECT only)."""
        host = host_of(parts)
        headers = {"User-Agent": self.agent, "Accept-Encoding": "gzip"}
        if host in SECRETS:
            headers["Authorization"] = basic(SECRETS[host])
        pool = vars(self.local).setdefault("pool", {})
        if (parts.scheme, host) not in pool:
            proxy = proxy_for(parts)[0]
            through, _, at = proxy.netloc.rpartition("@") if proxy else ("", "", host)
            tunnel = {"Proxy-Authorization": basic(through)} if through else {}
            if parts.scheme == "https":
                with self.lock:  # one context for the run: the CA bundle is loaded once
                    self.context = self.context or ssl.create_default_context()
                conn = http.client.HTTPSConnection(at, context=self.context)
                if proxy:
                    conn.set_tunnel(host, headers=tunnel)
                pool[parts.scheme, host] = conn, False, {}
            else:
                pool[parts.scheme, host] = http.client.HTTPConnection(at), bool(proxy), tunnel
        conn, whole, more = pool[parts.scheme, host]
        target = parts._replace(netloc=host) if whole else parts._replace(scheme="", netloc="")
        return conn, target.geturl() or "/", dict(headers, **more)


def ask(conn, target, headers, deadline):
    """GET target on conn, the head of its final answer read (1xx interim answers passed over),
    within the deadline. A kept connection with a byte already waiting on it (more after its last
    answer, or the server's close) is not clean: closed and opened anew, those bytes never read
    as an answer; one the server closes as it is asked is opened again, once, silently."""
    conn.response_class = partial(answer, deadline=deadline)
    if conn.sock:  # asked of a selector: select() takes no descriptor past 1,023
        with selectors.DefaultSelector() as waiting:
            waiting.register(conn.sock, selectors.EVENT_READ)
            if isinstance(conn.sock, ssl.SSLSocket) and conn.sock.pending() or waiting.select(0):
                conn.close()
    for again in (True, False):
        kept = conn.sock is not None
        conn.timeout = max(deadline - time.monotonic(), 0.001)  # to connect, and then to send
        if kept:
            conn.sock.settimeout(conn.timeout)
        try:
            conn.request("GET", target, headers=headers)
            return conn.getresponse()
        except ConnectionError:
            conn.close()
            if not (kept and again):
                raise


def answer(sock, deadline, **how):
    """An answer read within the deadline whose interim heads (1xx: 100 Continue, 103 Early Hints
    and the like, never 101) are read and passed over, a proxy's before its answer to CONNECT
    too: the final answer's head is the one read."""
    response = http.client.HTTPResponse(Timed(sock, deadline), **how)
    read_status = response._read_status  # what begin() and a tunnel ask for a head's status line

    def final_status():
        while True:
            version, status, reason = read_status()
            if not 100 <= status < 200 or status == 101:
                return version, status, reason
            http.client.parse_headers(response.fp)  # an interim head's fields, passed over

    response._read_status = final_status
    return response


class Timed(io.RawIOBase):
    """A socket read within a deadline, as an answer reads it (makefile): each read waits until
    then at most and none starts after it, so a server that sends a byte at a time is cut off."""

    def __init__(self, sock, deadline):
        super().__init__()
        self.sock, self.deadline, self.raw = sock, deadline, sock.makefile("rb", buffering=0)

    def makefile(self, mode):
        return io.BufferedReader(self)

    def readable(self):
        return True

    def readinto(self, buffer):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no whole answer by the deadline")
        self.sock.settimeout(left)
        return self.raw.readinto(buffer)

    def close(self):
        self.raw.close()  # the socket itself stays open for the connection's next request
        super().close()


def drop(conn, answer):
    """Close a connection and its answer, if any: nothing left of it is read as the next answer."""
    conn.close()
    if answer is not None:
        quietly(answer.close)


def basic(user):
    """user:password (as an address holds it, %-quoted) as a Basic authorization."""
    return "Basic " + base64.b64encode(urllib.parse.unquote(user).encode("utf-8")).decode("ascii")


def quietly(action, *args):
    """action(*args), or None when what it acts on is closed or broken already (or over its cap)."""
    try:
        return action(*args)
    except (OSError, ValueError, http.client.HTTPException, Unreadable):
        return None


def decoded(answer, url, cap):
    """The whole body, gzip decoded as it arrives, within the cap (decoded)."""
    encoding = (answer.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("identity", "gzip", "x-gzip"):
        raise Unreadable(
            "%s: sent in the %s encoding (Content-Encoding), which this script "
            "does not read" % (url, one_line(repr(encoding), 40))
        )
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding != "identity" else None
    body, chunk = bytearray(), True
    try:
        while chunk:
            chunk = data = answer.read1(1 << 16)
            while data:  # at most one byte past the cap decoded, the rest kept for the next turn
                body += inflate.decompress(data, cap + 1 - len(body)) if inflate else data
                data = inflate.unconsumed_tail if inflate else b""
                if len(body) > cap:
                    raise Unreadable(
                        "%s: response larger than %d bytes%s"
                        % (url, cap, " once decompressed" if inflate else "")
                    )
    except zlib.error as err:
        raise Unreadable("%s: not a whole gzip stream (%s)" % (url, err))
    if answer.length:
        raise Unreadable(
            "%s: the connection closed %d bytes before the end of the answer" % (url, answer.length)
        )
    if inflate and (not inflate.eof or inflate.unused_data):
        raise Unreadable("%s: not a whole gzip stream (cut short, or more after its end)" % url)
    if not inflate and body[:2] == b"\x1f\x8b":
        raise Unreadable("%s: gzip-compressed, and no Content-Encoding says so: not read" % url)
    answer.close()  # read to its end: the connection is free for the next request
    return bytes(body)


def server_of(url, named):
    """The server a url names and what named it, and the proxy on the way, if any."""
    proxy = through(url)
    return "%s (named by %s%s)" % (
        host_of(split(url)),
        named,
        ", through " + proxy if proxy else "",
    )


def through(url):
    """The proxy the environment names for url, as an error names it, or None: over http:// what
    it passes on could be changed, so a record read through one says so."""
    return proxy_for(split(url))[1]


def split(url):
    """url split (urllib.parse.urlsplit), where it is an address: else Usage, naming it."""
    import urllib.parse  # where used, as every module a run offline needs not: it starts the sooner

    try:
        return urllib.parse.urlsplit(url)
    except ValueError as err:  # a [ not closed, or no IP address inside
        raise Usage("%s is not an address (%s)" % (url, err))


def host_of(parts):
    return parts.netloc.rpartition("@")[2]


def taken(text):
    """text (an argument, DAISHI_BASE) with an address's credentials taken out where it is first
    read: everything between // and the last @ of its authority, whatever characters they hold,
    kept in SECRETS for that server; shown and kept as ***@."""
    parts = re.match(r"(.*?://)([^/?#]*)@([^/?#@]*)(.*)", text, re.S)
    if parts is None:
        return text
    scheme, user, host, rest = parts.groups()
    SECRETS[host.strip()] = user
    return scheme + "***@" + host + rest


def proxy_for(parts):
    """The proxy the environment names for a request to `parts`, its address split, and how an
    error names it (never with its password); or (None, None)."""
    import urllib.request  # here too: keep asks for it where no request imported it

    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(host_of(parts)):
        return None, None
    names = (parts.scheme + "_proxy", parts.scheme.upper() + "_PROXY")
    variable = next((name for name in names if os.environ.get(name)), "the system's settings")
    try:
        proxy = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
        if not proxy.hostname or proxy.port == 0:
            raise ValueError("no server named")
    except ValueError as err:  # a port that is no number included
        raise Usage("%s is not a proxy's address (%s)" % (variable, err))
    return proxy, "the proxy %s (named by %s)" % (host_of(proxy), variable)


def what_failed(err, answer, body, url, named):
    """Why a request failed (`err`, or an `answer` and its `body`), naming the culprit: the
    proxy, the server's certificate, the platform's answer (and the address answered) or the
    server, each with what named it."""
    proxy = through(url)
    if answer is None and getattr(err, "verify_message", None):  # ssl's: not trusted
        return (
            "the certificate of %s is not trusted (%s): for a private CA, set SSL_CERT_FILE to "
            "its certificate; on macOS, run Install Certificates.command (python.org's Python)"
            % (server_of(url, named), err.verify_message)
        )
    if answer is None:  # a tunnel the proxy refused included
        why = getattr(err, "strerror", None) or err
        return "cannot reach %s (%s)" % (proxy or server_of(url, named), why)
    if proxy and answer.status == 407:
        return "%s refuses to pass it on (407 %s)" % (proxy, answer.reason)
    busy = "the platform was busy (%s)" if answer.status in (429, 503) else "%s"
    where = "" if answer.status == 409 else " at %s" % url  # which address was wrong
    if answer.status == 404 and "BASE" in named.upper() and re.search(r"\w/(api|u)/(.*/)?\1/", url):
        where += (
            " (%s names the server, and a mirror's prefix, that /api/... and /u/... follow)" % named
        )
    kind = "match" if "/api/matches/" in url else "study"
    return busy % failure_text(answer.status, body, answer.reason, kind) + where


def failure_text(code, body, fallback, kind):
    """`409 the match is still playing: <reason>`, saying a thing once."""
    try:
        reason = json.loads(body.decode("utf-8")).get("reason")
    except (ValueError, AttributeError, RecursionError):
        reason = None
    meaning = {404: "not found", 409: "the %s is still playing" % kind, 400: "refused"}
    meaning = meaning.get(code, str(fallback))
    if not isinstance(reason, str) or reason.strip().lower() in meaning.lower():
        reason = meaning
    elif meaning.lower() not in reason.lower():
        reason = meaning + ": " + reason
    return "%d %s" % (code, reason)


def settings(option, paced=False):
    """(base, what named it, the run's Network): --base as given, else $DAISHI_BASE, else the
    platform, checked by base_of where it is used; the Network's deadline and patience from
    DAISHI_TIMEOUT and DAISHI_BUSY."""
    seconds = []
    for name, default in (("DAISHI_TIMEOUT", 30), ("DAISHI_BUSY", 60)):
        try:
            value = float(setting(name) or default)
        except ValueError:
            value = -1
        if not 0 < value <= 86400:
            raise Usage("$%s must be a number of seconds above 0, a day (86400) at most" % name)
        seconds.append(value)
    net = Network("%s/%s" % (Running.script, Running.version), *seconds, paced=paced)
    env = setting("DAISHI_BASE")
    named = "--base" if option is not None else "DAISHI_BASE" if env else "default"
    # --base's credentials were taken out with every argument's (main)
    base = (option if option is not None else taken(env or DEFAULT_BASE)).strip()
    return base, named, net


def setting(name):
    """The environment's variable `name`, or None: those this script reads itself, read here."""
    return os.environ.get(name)


def base_of(base, named):
    """The base a match id or a study's path is read from, checked only then (an offline audit, or
    an address naming its own server, reads none): an http:// or https:// address, no query."""
    parts = split(base)
    if parts.scheme not in ("http", "https") or not parts.netloc or re.search("[?#]", base):
        raise Usage(
            "%s must be an http:// or https:// address, got %s"
            % (named, one_line(json.dumps(base), 60))
        )
    return base.rstrip("/")


# ------------------------------------------------------------------ gather: a saved copy
def read_file(path, folder, cap=None):
    """A regular file (no FIFO, device or folder, none of them opened: to open one may act),
    inside `folder` where one is given (no link leading out), within `cap` bytes (MAX_BYTES by
    default); a failure to read it names it."""
    cap, raw = cap or MAX_BYTES, None
    try:
        if folder is not None:
            inside(path, folder)
        if stat.S_ISREG(os.stat(path).st_mode):
            with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as f:
                if stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # still, if another was put there
                    raw = f.read(cap + 1)
    except OSError as err:
        raise Unreadable("%s: cannot read (%s)" % (path, err.strerror or err))
    if raw is None:
        raise Unreadable("%s: not a regular file: not read" % path)
    if len(raw) > cap:
        raise Unreadable("%s: larger than %d bytes" % (path, cap))
    return raw


def inside(path, folder):
    """path, where it does not lead out of folder (a link included)."""
    real = os.path.realpath(folder)
    if os.path.commonpath([real, os.path.realpath(path)]) != real:
        raise Unreadable("%s: a link leading outside %s: not read" % (path, folder))
    return path


def read_copy(folder, kind, names):
    """A copy --save wrote, as (about, files): saved.json read and checked, then each file it
    lists read and checked against its sha256, and no other file; `names` matches a file of the
    kind. A file not as saved: Altered (a failed check). No saved.json: (None, {}); the caller
    says what the copy is then."""
    path = os.path.join(folder, SAVED)
    if not os.path.lexists(path):
        return None, {}
    about = parse_json(read_file(path, folder, MAX_SAVED_BYTES), path)
    about = about if isinstance(about, dict) else {}
    forms = {"kind": str, "id": str, "address": str, "savedAt": str, "sha256": dict}
    bad = [key for key, form in forms.items() if not isinstance(about.get(key), form)]
    if bad or about["kind"] != kind:
        raise Unreadable(
            "%s: not a saved %s (%s)"
            % (path, kind, "no " + bad[0] if bad else "kind " + one_line(about["kind"], 40))
        )
    files, faults, count = {}, [], 0
    for name, digest in sorted(about["sha256"].items()):
        fault = file_fault(folder, about, (kind, names), (name, digest), files)
        count += fault is not None
        if fault and len(faults) < MAX_LISTED:  # the first named, the rest counted
            faults.append(fault)
    if faults:
        error = Altered("; ".join(listed(faults, count)))
        error.about, error.faults = about, listed(faults, count)
        raise error
    return about, files


def saved_line(about):
    """The line that names a verified copy: what it is, where from (and through), when saved."""
    proxy = about.get("proxy")
    return "saved copy of %s from %s%s, saved %s, every file verified" % (
        one_line(about["id"]),
        one_line(about["address"]),
        " through " + one_line(proxy) if isinstance(proxy, str) else "",
        one_line(about["savedAt"]),
    )


def file_fault(folder, about, form, listing, files):
    """Why a file saved.json lists is not the file saved, or None with the file put in files."""
    (kind, names), (name, digest), when = form, listing, one_line(about["savedAt"])
    where = os.path.join(folder, *name.split("/"))
    if not re.fullmatch(names, name) or not isinstance(digest, str):
        return "%s lists %s, not a file of a saved %s" % (SAVED, one_line(name), kind)
    if not os.path.lexists(where):
        return "%s: missing from the copy saved %s (%s lists it)" % (name, when, SAVED)
    try:
        raw = read_file(where, folder)
    except Unreadable as err:
        return "%s: not the file saved %s (%s)" % (name, when, str(err).partition(": ")[2])
    if sum(map(len, files.values())) + len(raw) > MAX_COPY_BYTES:
        raise Unreadable(
            "%s: more than %d bytes in all: not a copy this script reads" % (folder, MAX_COPY_BYTES)
        )
    if sha256(raw) != digest:
        return "%s: not the file saved %s (sha256 differs)" % (name, when)
    files[name] = raw
    return None


# ------------------------------------------------------------------ --against: two copies
def copy_changes(old, new, differ=None):
    """Each file one copy holds and the other not, then each field that differs (JSON; another
    file by `differ`, a CSV's by line and column), as (count, the first MAX_CHANGES of {file,
    where, was, now})."""
    changes = Changes()
    for name in sorted(set(old) | set(new)):
        was, now = old.get(name), new.get(name)
        if was is None or now is None:  # a file on one side only: named, its content not carried
            changes.add(name, "", *["(absent)" if b is None else "(the file)" for b in (was, now)])
        elif was != now and differ and name.endswith(".csv"):
            differ(name, was, now, changes)
        elif was != now:
            try:
                json_changes(name, "", parse_json(was, name), parse_json(now, name), changes)
            except (Unreadable, RecursionError):
                changes.add(name, "", "(the saved bytes)", "(other bytes)")
    return changes.count, changes.kept


def against_lines(folder, saved_at, count, changes):
    """--against's lines: unchanged, or CHANGED and the first changes (each side cut short)."""
    where = "(%s)" % one_line(folder)
    if not count:
        return ["unchanged since %s %s" % (one_line(saved_at), where)]
    lines = [
        "  %s %s: %s -> %s"
        % (
            one_line(c["file"]),
            one_line(c["where"] or "(the file)"),
            clipped(c["was"]),
            clipped(c["now"]),
        )
        for c in changes
    ]
    head = "CHANGED since %s %s: %d change%s" % (
        one_line(saved_at),
        where,
        count,
        "s" * (count > 1),
    )
    return [head] + listed(lines, count)


def clipped(value):
    """A value of a record as one short line: a string as it is, another value as JSON writes it
    (a float as repr), 40 characters at most."""
    text = value if isinstance(value, str) else json.dumps(value)  # a float as its repr
    return one_line(cut(text, 40), 40)


def cut(s, width):
    """s as it is, or where longer than width its first width - 3 characters and "..."."""
    return s if len(s) <= width else s[: width - 3] + "..."


class Changes:
    """The changes found: every one counted, the first MAX_CHANGES kept (bounded memory)."""

    def __init__(self):
        self.count, self.kept = 0, []

    def add(self, file, where, was, now):
        self.count += 1
        if len(self.kept) < MAX_CHANGES:
            self.kept.append({"file": file, "where": where, "was": was, "now": now})


def json_changes(name, path, was, now, changes):
    """Each value that differs between two JSON documents, named by its path; 1 and 1.0 differ."""
    if isinstance(was, dict) and isinstance(now, dict):
        for key in list(was) + [k for k in now if k not in was]:
            step = "." + key if re.fullmatch(r"[A-Za-z_]\w*", key) else "[%s]" % json.dumps(key)
            sides = [side.get(key, "(absent)") for side in (was, now)]
            json_changes(name, (path + step).lstrip("."), *sides, changes)
    elif isinstance(was, list) and isinstance(now, list):
        for i in range(max(len(was), len(now))):
            sides = [side[i] if i < len(side) else "(absent)" for side in (was, now)]
            json_changes(name, "%s[%d]" % (path, i), *sides, changes)
    elif type(was) is not type(now) or repr(was) != repr(now):
        changes.add(name, path, was, now)


# ------------------------------------------------------------------ keep
def new_copy(folder):
    """A new folder beside `folder`, to keep a copy in before it is placed; refused where
    `folder` is there already."""
    if os.path.lexists(folder):
        raise Usage(
            "--save: %s is there already: to audit the platform now, name another DIR or leave out "
            "--save; to audit a copy kept there, name the folder alone" % folder
        )
    parent, name = os.path.split(folder.rstrip(os.sep) or os.sep)  # as the system resolves it
    staged = os.path.join(parent, ".%s.part-%s" % (name, os.urandom(6).hex()))
    PARTS.add(staged)  # named before it exists: a signal at any moment finds it
    try:
        writing(staged, os.makedirs, parent or os.curdir, exist_ok=True)
        writing(staged, os.mkdir, staged, 0o700)
    except OSError as err:
        raise Unreadable("--save: cannot write %s (%s)" % (folder, err.strerror or err))
    return staged


def writing(staged, action, *args, **how):
    """action(*args) on the folder new_copy made, under the lock that a signal takes to remove
    it: refused once it is removed, so no thread writes it, or makes it again, after."""
    with WRITING:
        if STOPPED.is_set() or staged not in PARTS:
            raise Unreadable("--save: interrupted")
        return action(*args, **how)


def placed(staged, folder):
    """The folder new_copy made renamed to `folder` in one step, or nothing placed."""
    os.mkdir(folder)  # the name taken for this copy, or refused where another has it
    try:
        os.rename(staged, folder)  # onto that empty folder: refused where it holds anything
    except OSError:
        quietly(os.rmdir, folder)
        raise


def discard(staged):
    """A folder new_copy made and nothing placed: removed, whatever it holds."""
    with WRITING:
        PARTS.discard(staged)
        shutil.rmtree(staged, ignore_errors=True)


def keep(staged, files, about, folder):
    """The one function that writes files: each of `files` ({name: bytes}, names of the
    script's own) into the folder new_copy made, saved.json last (`about` and each file's
    sha256), then the folder renamed to `folder` in one step: a copy is whole or absent, two
    saves of one record cannot mix (the second finds the name taken), no link is written
    through."""
    about = dict(
        about,
        savedAt=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        proxy=through(about["address"]),
        script=Running.script,
        version=Running.version,
        scripts=dict(about.get("scripts", {}), **{Running.script: release()}),
        sha256={name: sha256(body) for name, body in files.items()},
    )
    saved = (json.dumps(about, indent=1) + "\n").encode("ascii")
    try:
        for name, body in [*files.items(), (SAVED, saved)]:  # saved.json last
            path = os.path.join(staged, *name.split("/"))
            writing(staged, os.makedirs, os.path.dirname(path), exist_ok=True)
            with open(path, "xb") as out:  # where a signal removed the folder, none: refused
                writing(staged, out.write, body)
        writing(staged, placed, staged, folder)
    except OSError as err:
        raise Unreadable("--save: cannot keep %s (%s)" % (folder, err.strerror or err))
    finally:
        discard(staged)


# ------------------------------------------------------------------ the command
class Parser(argparse.ArgumentParser):
    """argparse whose error is one line naming --help (Usage, exit 2), never a usage screen;
    --help and --version written to stdout as every output is, then SystemExit(0)."""

    def __init__(self, *args, **how):
        super().__init__(*args, **how)
        self.add_argument(
            "--version",
            nargs=0,
            action=Version,
            help="show the version and the sha256 of this file, to compare with the one published",
        )

    def _print_message(self, message, file=None):  # --help's: a failure to write it not hidden
        sys.stdout.write(message)

    def error(self, message):
        raise Usage(message)


class Version(argparse.Action):
    """--version: the script's name and version, then its file's sha256 (read only when asked)."""

    def __call__(self, parser, *_):
        digest = release()["sha256"] or "not known: the script was not read from a file"
        print("%s %s\nsha256 %s" % (Running.script, Running.version, digest))
        parser.exit()


class Help(argparse.HelpFormatter):
    """--help as wide as the terminal (COLUMNS): each paragraph of a text filled to its width, a
    word longer than the width (an address, a digest) kept whole."""

    def _fill_text(self, text, width, indent):
        import textwrap  # where used, as urllib.parse (split)

        return "\n\n".join(
            textwrap.fill(" ".join(part.split()), width, break_long_words=False)
            for part in text.split("\n\n")
        )


@lru_cache(maxsize=None)
def release():
    """This script as it runs: its VERSION and the sha256 of its file, which a user compares with
    the digest the platform publishes (--version; kept in saved.json), read once: --save asks
    before its first request. None where the script was not read from a file (stdin, -c)."""
    path = globals().get("__file__", "<")
    raw = None if path.startswith("<") else read_file(os.path.abspath(path), None, 1 << 22)
    return {"version": Running.version, "sha256": raw and sha256(raw)}


def sha256(raw):
    """The bytes' SHA-256 in hex, as saved.json and --version give it."""
    import hashlib  # where used, as urllib.parse (split)

    return hashlib.sha256(raw).hexdigest()


def folder_left_out(argv, record):
    """Usage where the command ends with --save or --against and then what names a record (the
    regex `record`): the folder left out."""
    if argv[-2:-1] in (["--save"], ["--against"]) and re.match(record, argv[-1].strip()):
        raise Usage("%s takes a folder: %s DIR %s" % (argv[-2], argv[-2], argv[-1]))


def start(main):
    """main() as the command: its exit status, the run ended by finish. Ctrl-C, SIGTERM and
    SIGHUP: stop. stdout closed: 141; another failure to write it: 2. An exception this script
    did not foresee is named as its own failure, never as the record's."""
    for each in SIGNALS:
        signal.signal(each, stop)
    for stream in (sys.stdout, sys.stderr):  # text a stream cannot encode is written escaped
        getattr(stream, "reconfigure", lambda **_: None)(errors="backslashreplace")
    try:
        if sys.stdout is None:
            raise OSError(errno.EBADF, "it is closed")
        try:
            status = main()
        except SystemExit as done:  # --help, --version
            status = done.code
        sys.stdout.flush()  # a closed pipe shows here, not as the interpreter exits
    except OSError as err:  # stdout's: closed (`| head`) quietly, as a shell's SIGPIPE; else 2
        status = 141  # what it holds is never written again: finish ends by os._exit
        if not isinstance(err, BrokenPipeError):
            status = fail("cannot write the result to stdout (%s)" % (err.strerror or err), False)
    except Exception as err:
        status = fail(
            "%s %s failed (%s: %s): a fault of this script, not of the record; please "
            "report it" % (Running.script, Running.version, type(err).__name__, err),
            False,
        )
    finish(status)


def stop(signum, frame):
    """Ctrl-C, SIGTERM or SIGHUP: another signal ignored from here, the run ended by finish (no
    thread sends or writes, no folder being written is left) and only then one line, whether or
    not stderr takes it: 128 + the signal's number (130, 143, 129)."""
    for each in SIGNALS:
        signal.signal(each, signal.SIG_IGN)
    finish(128 + signum, "interrupted")


def finish(status, line=None):
    """The run's end, however it comes: no thread waited for, none sends or writes after, each
    folder not placed removed; then the line, if any, and the status. What the process's end
    frees is not torn down."""
    STOPPED.set()
    for part in list(PARTS):
        discard(part)
    if line:
        progress("")
        say(line)
    os._exit(status)


SHARED = set(globals()) - OUTSIDE  # this block's own names: under --matches, one copy serves
# ==================================================================== the shared block's end
Running.script, Running.version = SCRIPT, VERSION


# ------------------------------------------------------- appendix: the exact sign-flip test, fast
SPLITMIX_CHUNK = 4096  # draws per packed integer: small enough to stay in cache
SUBSET_BLOCK_BYTES = 256 * 1024  # each class of the packed subset-sum counts: cache-sized
# the packed counts, at most: with the allocator's slack and the rest of a run, under 200 MiB
SIGN_FLIP_MAX_BYTES = 120 * 2**20
# non-zero pairs: from here p is first enclosed (below, counted at once)
SIGN_FLIP_ENCLOSE_FROM = 128
# each enclosure's bytes a slot and the highest and lowest Z it tries (a sum is cut where at most
# e**-2Z of the sign vectors could pass it), the highest whose table fits; the coarsest first
SIGN_FLIP_LEVELS = ((4, 11, 5), (5, 12, 10), (6, 13, 12), (8, 24, 24), (16, 40, 40))
SIGN_FLIP_FLOOR_EVERY = 3  # items between floors: the bits of headroom a slot keeps
PROGRESS_AFTER = 3  # seconds a count runs before a terminal is shown how far it has come


def bootstrap_draws(seed, n, count):
    """`count` pair indices ((next() >> 11) × n) >> 53, mapped slot by slot like the outputs."""
    indices = array("Q")
    for z, mask, k in _splitmix64_chunks(seed, count):
        indices.extend(_slots(((((z >> 11) & mask) * n) >> 53) & mask, k))
    return indices


def _splitmix64_chunks(seed, count):
    """SplitMix64's first `count` outputs (§4.6) as (z, mask, k): k outputs in 128-bit slots of z.
    Plain, mod 2**64: state += γ; z = state; z = (z ^ z >> 30)·M1; z = (z ^ z >> 27)·M2; output
    z ^ z >> 31. Here slot k's state is seed + k·γ, and masking each slot to its low 64 bits is the
    reduction."""
    gamma, mask64 = 0x9E3779B97F4A7C15, (1 << 64) - 1
    chunk = min(count, SPLITMIX_CHUNK) or 1
    ones = int.from_bytes((b"\x01" + bytes(15)) * chunk, "little")
    steps = gamma * int.from_bytes(
        b"".join(k.to_bytes(16, "little") for k in range(1, chunk + 1)), "little"
    )
    mask, base = ones * mask64, seed & mask64
    for start in range(0, count, chunk):
        z = (base * ones + steps) & mask
        z = ((z ^ (z >> 30)) & mask) * 0xBF58476D1CE4E5B9 & mask
        z = ((z ^ (z >> 27)) & mask) * 0x94D049BB133111EB & mask
        yield (z ^ (z >> 31)) & mask, mask, min(chunk, count - start)
        base = (base + chunk * gamma) & mask64


def _slots(z, k):
    """The first k 128-bit slots of z, each below 2**64."""
    return _unpack_slots(z & (1 << 128 * k) - 1, 8, 2 * k)[::2]


def sign_flip_p(diffs, alpha):
    """§4.5's p as (Fraction, how): how None for the exact count; "bound" where Hoeffding's bound
    2·exp(−S1² ÷ (2·Σ D_t²)) is below 0.00005 and alpha (it fixes the printed p and the verdict);
    "enclosed" where an enclosure [lo, hi] of sign_flip_count, each level finer, prints alike on
    one side of alpha (lo); else why not: the exact count over its cap, and where an enclosure
    fitted, p within it across alpha or a 4-place edge."""
    s1, s2 = sum(diffs), sum(d * d for d in diffs)  # integers: exact
    if s2:
        bound = 2 * math.exp(-(s1 * s1) / (2 * s2)) * (1 + 1e-9)  # the margin covers exp's rounding
        if bound < 0.00005 * (1 - 1e-9) and bound < alpha:  # below it p prints 0.0000
            return Fraction(max(bound, 2.0**-1074)), "bound"
    # counted at once, where the count fits; then the enclosures, coarsest first
    few, near = len(diffs) - diffs.count(0) < SIGN_FLIP_ENCLOSE_FROM, ""
    for level in (None,) * few + SIGN_FLIP_LEVELS * bool(s1) + (None,):
        ends = sign_flip_count(diffs, level)
        if isinstance(ends, str):  # over the cap: the next level, or (the last) why not
            continue
        if level is None:
            return Fraction(ends, 1 << len(diffs)), None
        if len({(print_figure(float(end), 4), end <= Fraction(alpha)) for end in ends}) == 1:
            return ends[0], "enclosed"
        near = "; p within %.9f to %.9f, across alpha or a 4-place rounding edge" % ends
    return None, ends + near


def sign_flip_count(diffs, level=None):
    """How many sign vectors s give |Σ s_t D_t| ≥ |S1|; with a level (bytes a slot, Zs), [lo, hi]
    holding that count ÷ 2**n; or why not counted. Plain: a subset of sum x given + has
    Σ s_t|D_t| = 2x − A (A = Σ|D_t|), so the count is 2**n less those with c < x < A − c,
    c = (A − |S1|) ÷ 2 (times 2 for each D_t that is 0): count c[x] from c = [1] and
    c ← c + (c shifted by |D_t|) for each t, then sum c[c + 1 .. A − c − 1]. Fast: _count_inside."""
    n, s1 = len(diffs), sum(diffs)
    if s1 == 0:
        return 1 << n
    common = math.gcd(*diffs)
    sizes = sorted(abs(d) // common for d in diffs if d)
    m, s = len(sizes), abs(s1) // common
    c = (sum(sizes) - s) // 2
    # exact: never floored, nothing cut
    slot_bytes, highest, lowest = level or ((m + SIGN_FLIP_FLOOR_EVERY + 8) // 8, None, None)
    squares = sum(a * a for a in sizes)
    # The plan: after every SIGN_FLIP_FLOOR_EVERY-th item, each large one and the last, [items,
    # their sum A_j, lowest x kept, Σ a² of the rest]; the last keeps only c < x. The table runs
    # to the next point's centre. Z from the level's highest down, the first whose table fits.
    for z in range(highest, lowest - 1, -1) if level else [None]:
        reach, square, plan = 0, 0, []
        for j, a in enumerate(sizes, 1):
            reach, square = reach + a, square + a * a
            if j % SIGN_FLIP_FLOOR_EVERY == 0 or j == m or 400 * a * a > squares:
                low = max(0, (reach - _cut(square, squares, s, z) + 1) // 2)
                plan.append([j, reach, low, squares - square])
        plan[-1][2] = max(plan[-1][2], c + 1)
        peak = slot_bytes * max([plan[0][1]] + [b[1] // 2 - a[2] for a, b in zip(plan, plan[1:])])
        if peak <= SIGN_FLIP_MAX_BYTES:
            break
    else:
        return "needs %d MiB, cap %d MiB" % (peak >> 20, SIGN_FLIP_MAX_BYTES >> 20)
    if z != highest:  # Z held down by the cap: each band as wide as the widest, so less is cut
        for a, b in zip(plan, plan[1:]):
            a[2] = max(0, min(a[2], b[1] // 2 - peak // slot_bytes))
    inside, slack = _count_inside(sizes, c, plan, slot_bytes, max(1, peak // SUBSET_BLOCK_BYTES))
    outside = (1 << m) - inside
    if level is None:
        return outside << n - m
    return Fraction(outside - slack, 1 << m), Fraction(outside, 1 << m)


def _cut(square, squares, s, z):
    """2τ: of the sums of the first items (their Σ a² = square) those more than τ below the
    centre go. A subset cut there ends with |Σ s_t D_t| < |S1| only if the first items fall τ
    below their mean and the rest (Σ a² = squares − square) rise τ − |S1|/2 above theirs; by
    Hoeffding's inequality, at most a share exp(−2τ² ÷ square − 2(τ − |S1|/2)² ÷ rest) ≤ e**−2Z
    of the sign vectors does (the least such τ, rounded up): where the plan cuts; what a cut
    loses is bounded where it is made (_count_inside). Exact (no Z): none go (square ≥ A_j)."""
    if z is None:
        return square
    v = 4 * z * square
    if v <= s * s:  # the first factor alone
        return math.isqrt(v) + 1
    root = math.isqrt(square * (squares - square) * (4 * z * squares - s * s))
    return (s * square + root + squares) // squares


# Why [lo, lo + slack] holds the count: the counts kept are those of the subsets whose sums at
# every point so far lay within [b, A_j − b] (b the row at or below the plan's lowest: a band
# symmetric about A_j ÷ 2), floored alike on both sides of it, so each count above the centre is
# its mirror's. Each is at most the true one: lo is. What lo misses goes at a point, twice over
# (the half not kept): prefixes of sum x, each of which g(x) ≤ 2**(items to come) choices of the
# rest take inside, Σ_x g(x) = 2**(items to come)·(A − 2c − 1) (each choice leaves A − 2c − 1
# sums inside). A floor loses under a unit a slot: at most a unit times the lesser of 2·slots and
# A − 2c − 1, times 2**(items to come). A cut drops the sums below k·r: one ends inside only if
# the rest (sum R) rise d = c + 2 − k·r − R/2 above their mean, which by Hoeffding's inequality at
# most 2**(items to come)·e**(−2d² ÷ their Σ a²) choices do; the count cut is at most r times
# its rows' OR, and what a point loses is a whole number: the floor of its bound. Nothing is
# counted that does not end inside: the last point keeps only c < x, to the centre, and the count
# above it is the mirror's.
def _count_inside(sizes, c, plan, slot_bytes, r):
    """(lo, slack): between lo and lo + slack subsets of `sizes` sum to x with c < x < A − c.
    Packed: c[x] in r residue classes of ~SUBSET_BLOCK_BYTES, class t holding x ≡ t (mod r) from
    row k0 on; an item q·r + ρ adds class t − ρ shifted q rows (q + 1 if t < ρ). The counts are
    symmetric, c[x] = c[A_j − x], so only those up to a little past the centre are kept: at each
    of plan's points the sums below its lowest go, counts that could outgrow their slot lose low
    bits (under a new unit a slot), and above the centre, to where the next point's centre lies,
    each count is that of its mirror below."""
    bits, m, whole, started = 8 * slot_bytes, len(sizes), plan[-1][1], time.monotonic()
    classes, k0, dropped, done, slack, cap = [1] + [0] * (r - 1), 0, 0, 0, 0, -1
    for (point, reach, low, rest), (_, after, *_) in zip(plan, plan[1:] + plan[-1:]):
        for size in sizes[done:point]:
            q, rho = divmod(size, r)
            cycles = math.gcd(rho, r)
            # along each cycle of t → t + ρ, so each reads a class not yet updated
            for t in range(cycles):
                before = classes[t - rho]
                for _ in range(r // cycles):
                    added = classes[t] + (before << bits * (q + (t < rho))) & cap
                    before, classes[t] = classes[t], added
                    t = (t + rho) % r
            done += 1
            if time.monotonic() - started > PROGRESS_AFTER:  # a slow count, on a terminal
                say(
                    "the sign-flip test: %d%% counted" % (100 * done // m),
                    "\r",
                    "\n" * (done == m),
                    tty=True,
                )
        # a row of the classes' OR is 0 where each class's slot is
        every = reduce(operator.or_, classes)
        ors = _unpack_slots(every, slot_bytes, every.bit_length() // bits + 1)
        drop = max(0, max(ors).bit_length() - bits + SIGN_FLIP_FLOOR_EVERY)
        if drop:  # under a unit a slot, each times the lesser of 2·slots and A − 2c − 1
            lost = min(2 * r * (len(ors) - ors.count(0)), whole - 2 * c - 1)
            slack += lost << dropped + drop + m - point
        centre, k = reach // 2, max(k0, low // r)
        if rest and k > k0:  # the rows cut: e ≤ 2d² log2 e ÷ Σ a² (2d = 2(c + 2 − k·r) − R)
            e = max(0, 2 * (c + 2 - k * r) - whole + reach) ** 2 * 721347 // (10**6 * rest)
            slack += 2 * r * sum(ors[: k - k0]) << dropped + m - point >> e
        slot = ((1 << bits - drop) - 1).to_bytes(slot_bytes, "little")
        masks = [int.from_bytes(slot * max(0, centre // r - k + b), "little") for b in (1, 0)]
        for t in range(r):  # the sums from the lowest up to the centre, floored
            classes[t] = (classes[t] >> bits * (k - k0) + drop) & masks[t > centre % r]
        top = min(after // 2, reach - k * r)
        for t in range(r):  # above: the count of x is that of reach − x, class (reach − t) % r
            h, (row, u) = (centre - t) // r, divmod(reach - t, r)
            rows = (top - t) // r - h
            if rows > 0:
                seg = classes[u] >> bits * (row - h - k - rows) & (1 << bits * rows) - 1
                classes[t] |= _reversed_slots(seg, slot_bytes, rows) << bits * (h + 1 - k)
        k0, dropped = k, dropped + drop
        cap = (1 << bits * (after // 2 // r - k + 1)) - 1  # the rows an item may fill (first, all)
    x, odd = divmod(whole, 2)
    inside = 0  # the last point kept c < x from row k0: none in the row below
    for t, cls in enumerate(classes):
        cls >>= bits * (t + k0 * r <= c)
        inside += sum(_unpack_slots(cls, slot_bytes, cls.bit_length() // bits + 1))
    middle = 0 if odd else classes[x % r] >> bits * (x // r - k0) & (1 << bits) - 1
    return 2 * inside - middle << dropped, slack


def _reversed_slots(packed, slot_bytes, count):
    """The first `count` slots of `slot_bytes` bytes of an integer, in reverse order."""
    raw = packed.to_bytes(count * slot_bytes, "little")[::-1]
    out = bytearray(raw)
    for j in range(slot_bytes):  # each slot's bytes back in order, by strided copies
        out[j::slot_bytes] = raw[slot_bytes - 1 - j :: slot_bytes]
    return int.from_bytes(out, "little")


def _unpack_slots(packed, slot_bytes, count):
    """The first `count` unsigned integers of `slot_bytes` bytes each packed in an integer, lowest
    first, the work in C."""
    raw = packed.to_bytes(count * slot_bytes, "little")
    if slot_bytes > 8:
        ends = range(slot_bytes, len(raw) + slot_bytes, slot_bytes)
        slots = map(raw.__getitem__, map(slice, range(0, len(raw), slot_bytes), ends))
        return list(map(int.from_bytes, slots, itertools.repeat("little")))
    spread = raw
    if slot_bytes < 8:  # each slot to a 64-bit word by strided byte copies
        spread = bytearray(8 * (len(raw) // slot_bytes))
        for j in range(slot_bytes):
            spread[j::8] = raw[j::slot_bytes]
    words = array("Q", spread)
    if sys.byteorder != "little":
        words.byteswap()
    return words


if __name__ == "__main__":
    start(main)
