#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
r"""Recompute a daishi.ai match's published scores from its public record.

    python3 recompute.py m_aa6f85fab659 [--save DIR]  # download and audit a match (keep a copy)
    python3 recompute.py DIR                           # re-audit saved copies offline

For each seat: replay the final wealth, recount the counters, map coverage, trade ledger and
circular reputation from the event log, derive the five dimensions, rank, Fitness Index, grade
and achievements under the report's rubric (1.0 to 2.4), print each published figure beside the
recomputed one, and check the archive's metrics, ledger and exploration blocks against the
events. Options: --base URL, --rubric V, --save DIR, --against OLD, --all, --json, --explain
(--help).
Exit status: 0 every figure matches and every check agrees; 1 a figure differs, a check fails or
the record changed; 2 a record cannot be read (or the platform was busy, or a usage error); 130,
143, 129 interrupted (Ctrl-C, SIGTERM, SIGHUP); 141 stdout closed. Python 3.9 or later, standard
library only.

An audit guide. The data moves one way: gather, read, recompute, report, keep.
- The rules: rubric.md, in its order, from "§1 arithmetic" to "§12 checks of the blocks", each
  formula beside its section number; records.md's fields and forms in FIELDS and EVENT_FIELDS. Under
  --explain each rule records the terms it computes a figure from by note (line 2123), in the shared
  block, into a record of the thread's own; compare_seat (line 1175) reads them back.
- Sent, and only by Network.get (line 2329), in the shared block, through
  Network.request (line 2380), Network.exchange (line 2416), Network.connection (line 2446) and
  ask (line 2475): GET of a record's address, to the server the user named (--base, DAISHI_BASE or
  the address given), a redirect followed only within that server, nothing else. Headers: Host,
  User-Agent (recompute.py/VERSION) and Accept-Encoding (gzip), always; Authorization (Basic) where
  that address holds user:password@, in the clear over http://; through a proxy the environment
  names (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, in lower case too, or the system's settings;
  proxy_for (line 2641)), the whole address to it for an http:// record, a CONNECT for an https://
  one, and Proxy-Authorization (Basic) where the proxy's address holds user:password@. A proxy is
  spoken to in plain HTTP whatever its own address's scheme (as urllib does): that
  Proxy-Authorization crosses to it in the clear. Their modules (http.client, ssl, urllib.request,
  base64, selectors) imported at a run's first request; urllib.parse where an address is first
  split, by split (line 2615). One TLS context a run, one kept-alive connection per thread and
  server.
- The environment read: setting (line 2722), the one function that reads a variable of its own,
  reads DAISHI_BASE, DAISHI_TIMEOUT, DAISHI_BUSY (for settings (line 2701)) and TERM (for
  progress (line 2209): dumb, no control sequences); proxy_for (line 2641) the proxy variables;
  Network.connection (line 2446) opens connections: socket's DNS look-ups (the resolver's files),
  and ssl's default context, which reads the CA bundle (SSL_CERT_FILE, SSL_CERT_DIR), OpenSSL's
  configuration (OPENSSL_CONF) and SSLKEYLOGFILE (where it is set, ssl writes each connection's TLS
  secrets to the file it names); urllib's proxies ignore HTTP_PROXY where REQUEST_METHOD is set (as
  under CGI); terminal_width (line 2152) and Help (line 3020) the terminal's size (COLUMNS, LINES);
  Parser (line 2991), through argparse's gettext, the locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG:
  the language of argparse's own words, from the interpreter's translations).
- Written, made, renamed or removed, only under --save: new_copy (line 2916) makes DIR (os.makedirs,
  left in place) and in it a new folder .<match id>.part-<12 hex digits> (os.mkdir; os.urandom names
  it), named for removal before it exists; keep (line 2961) writes into it, each write through
  writing (line 2935) under the lock that a signal takes: export/ and report/ (os.makedirs), the
  files (open "xb") and saved.json last, then placed (line 2944) makes DIR/<match id> empty
  (os.mkdir: refused where that name is taken) and renames the new folder onto it (os.rename;
  os.rmdir of that empty one where it fails); discard (line 2954) removes the new folder where the
  copy is not placed (shutil.rmtree). Besides, start (line 3057) makes stop (line 3086) the handler
  of SIGINT, SIGTERM and SIGHUP (signal.signal), makes both streams write what they cannot encode
  escaped and ends every run by finish (line 3095): no thread sends or writes after, every folder
  not placed is removed, then os._exit, nothing torn down that the process's end frees (its status;
  a signal: further ones ignored, the folders removed, only then the line "interrupted", and 128 +
  its number: 130, 143, 129; a closed pipe: 141); while the script loads, ended (line 104) does so
  for those signals.
- Read, only the files named on the command line and inside them: read_file (line 2740), the one
  function that reads a file's bytes (a saved copy through read_copy (line 2769), every file checked
  against saved.json; a folder laid out as the platform serves it, with no saved.json, is read
  unverified, and its audit's first line says so); folder_names (line 1654), the one that lists a
  folder's names; release (line 3034) reads this script's own file once, for its sha256. Code
  loaded: the standard library's modules only, this script's folder taken off sys.path before the
  first (near the top, as python -P does): no module beside the script is imported.
- The trust surface, in a minute: every line able to touch the machine (the network, files and
  folders, the environment, signals, descriptors, the exit, code loaded) is shown by
    grep -nE -e 'os[.](open|fdopen|f?stat|mkdir|makedirs|rename|rmdir|listdir|dup2|_exit)' \
      -e 'os[.](environ|urandom)|open[(]|shutil|signal|socket|ssl[.]|selectors[.]|sock[.]' \
      -e 'http[.]client|urllib[.]req|conn[.]|exec[(]|isdir|isfile|lexists|realpath|isatty' \
      -e '__file__|sys[.](exit|path)|sys[.]std[a-z]+ =|field_size_limit|reconfigure|keep[(]' \
      -e 'readinto|^ +import ' \
      -e 'new_copy|writing[(]|read_file[(]|saved_match[(]|download[(]|net[.]get' recompute.py
  and each stands in the shared block, in the lines before "--- constants", or in one of:
  saved_match (line 1633), folder_names (line 1654), folder_holds (line 1662),
  against_copy (line 1742), sources_for (line 1847), saved_source (line 1898),
  saved_folders (line 1904), not_a_target (line 1944), download (line 1581) and save (line 1837):
  whether a name is a folder or a file (os.path's isdir, lexists, realpath), or a call of the
  shared block's Network.get (download), new_copy and keep (save) or read_file (saved_match),
  nothing else.
- The shared block, from "the shared block" to its end, is the same text in recompute_study.py;
  under --matches the study loads this file and gives it its own copy of the block, then calls
  download, saved_match, read_match, read_report, audit and print_audit.
"""

import sys

if sys.version_info < (3, 9):  # first, before anything an older Python lacks
    sys.stderr.write(
        "recompute.py needs Python 3.9 or later; this is Python %s\n" % sys.version.split()[0]
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
import argparse, errno, gc, io, json, math, re, shutil, stat, threading, time, zlib
from bisect import bisect_right
from collections import Counter, defaultdict
from functools import lru_cache, partial
from itertools import chain, repeat
from operator import eq, itemgetter
from os.path import isdir, join, lexists

# --- constants
# in User-Agent, saved.json, errors:
SCRIPT = "recompute.py"
VERSION = "3.1"
MATCH_ID = re.compile(r"m_[0-9a-f]{12}\Z")
RUBRICS = "1.0 2.0 2.1 2.2 2.3 2.4".split()  # in order: a later version is the greater text
EXACT_INTEGERS = 2**53  # beyond this an integer is no exact double: not a number we read
MAX_PAGES = 10000  # a pageCount beyond this is not a record we read
# rubric.md §2.1, in table order: the order of every sum over items; structures' (max hp, value).
ITEM_VALUES = {
    "wood": 2,
    "stone": 3,
    "ore": 5,
    "fiber": 0.75,
    "food": 1.25,
    "plank": 4.5,
    "brick": 6.25,
    "rope": 2.5,
    "tool": 14,
    "meal": 3.75,
}
STRUCTURES = {
    "shelter": (100, 20),
    "storehouse": (120, 30),
    "workshop": (120, 45),
    "market": (120, 60),
}
DIMENSIONS = tuple("survival economy social adaptation competitiveness".split())
# §3.1: the counters (the `metrics` keys) and the event types each counts.
COUNTERS = tuple("gather craft build repair move train attack raid trade dormant awake".split())
COUNTED_EVENTS = dict(
    {kind: kind for kind in COUNTERS[:8]},
    trade_completed="trade",
    trade_fulfilled="trade",
    agent_dormant="dormant",
    agent_awake="awake",
)
TRUSTED = "messages sent per seat (raw.messagesSent: the export leaves direct messages out)"


# --- §1 arithmetic (half up, hu, in the shared block: the study's checks round by it too)
def running_sum(terms):
    """Left to right from 0.0: the platform never compensates its sums."""
    total = 0.0
    for term in terms:
        total += term
    return total


# --- §2 wealth
def item_values(engine):
    """The table's values; ore at 8 in the archives of engine 0.1.0."""
    return dict(ITEM_VALUES, ore=8) if engine == "0.1.0" else ITEM_VALUES


def replay_structures(events, end, skipped, notes):
    """§2.2: the structures standing at the end, in build order (1 hp lost a round, gone at 0), from
    the structure events as (seq, tick, type, structureId, agentId, what: a build's structure, the
    items moved), replayed in seq order. A structure's `crumbles` is the tick its hp reaches 0; one
    rebuilt under its id has crumbled."""
    standing = {}
    built = []
    for seq, tick, kind, sid, agent, what in sorted(events):  # seq first, each its own
        if seq in skipped:
            continue
        structure = standing.get(sid)
        if structure and structure["crumbles"] <= tick:
            structure = None  # gone, with its contents
        if kind == "build":
            if what not in STRUCTURES:
                notes.add(
                    "a build of %r (seq %d), not a structure of the rubric, changes nothing"
                    % (what, seq)
                )
            elif not structure:
                structure = standing[sid] = {
                    "id": sid,
                    "kind": what,
                    "contents": {},
                    "owner": agent,
                    "crumbles": tick + STRUCTURES[what][0],
                }
                built.append(structure)
        elif structure and kind == "repair":  # 25 hp, up to its max
            structure["crumbles"] = tick + min(
                structure["crumbles"] - tick + 25, STRUCTURES[structure["kind"]][0]
            )
        elif structure and structure["kind"] == "storehouse":  # deposit, withdraw, raid
            contents = structure["contents"]
            for item, qty in what.items():
                contents[item] = max(
                    contents.get(item, 0) + (qty if kind == "deposit" else -qty), 0
                )
    return [dict(s, hp=s["crumbles"] - end) for s in built if s["crumbles"] > end]


def replay_wealth(seat, structures, values):
    """§2.3: inventory, then each standing structure owned, one running sum, then hu(·, 2). Each
    term as (its words, what it adds): quantity × value, a structure's value × hp ÷ max hp."""
    terms = item_terms(("inventory",), seat["inventory"], values)
    for structure in structures:
        if structure["owner"] == seat["id"]:
            max_hp, value = STRUCTURES[structure["kind"]]
            where = structure["kind"], structure["id"]
            terms.append(
                (
                    (*where, value, "×", structure["hp"], "÷", max_hp),
                    value * structure["hp"] / max_hp,
                )
            )
            # a storehouse's contents (no other kind holds any)
            terms += item_terms(where, structure["contents"], values)
    wealth = hu(running_sum(added for _, added in terms), 2)
    note(seat["id"], "wealth replay", "wealth", terms=terms, replayed_as_logged=wealth)
    return wealth


def item_terms(where, quantities, values):
    """Each item's term in table order: its words and quantity × value."""
    return [
        ((*where, item, quantity, "×", value), quantity * value)
        for item, value in values.items()
        for quantity in [quantities.get(item, 0)]
    ]


def wealth_replays(archive, notes):
    """Each seat's replayed wealth as logged, and without the errata's events (None if none)."""
    values = item_values(archive["engine"])
    seats = archive["seats"]
    notes.update(
        "%s holds %r, an item the rubric values at 0" % (seat["id"], item)
        for seat in seats
        for item in seat["inventory"]
        if item not in values
    )
    skipped = {seq for erratum in archive["errata"] for seq in erratum["events"]}

    def replay(skip):
        standing = replay_structures(archive["log"]["structures"], archive["end"], skip, notes)
        return [replay_wealth(seat, standing, values) for seat in seats]

    return replay(set()), replay(skipped) if skipped else None


# --- §3 counters, rates, map coverage
def seat_counters(archive, report):
    """§3.1: each seat's counters and messages, or None where not recorded."""
    by_kind = archive["log"]["counts"]
    out = {}
    for seat, card in zip(archive["seats"], report["cards"]):
        sid = seat["id"]
        entry = (archive["metrics"] or {}).get(sid)
        out[sid] = None
        if entry is None and not any(sid in agents for agents in by_kind.values()):
            continue  # not recorded
        out[sid] = c = {key: 0 if archive["events"] else entry[key] for key in COUNTERS}
        for kind, key in COUNTED_EVENTS.items():  # no events: none counted
            c[key] += by_kind.get(kind, {}).get(sid, 0)
        c["messages"] = card["messagesSent"]  # else the metrics entry's, else 0
        if c["messages"] is None:
            c["messages"] = 0 if entry is None else entry["message"] + entry["message_private"]
    return out


def rate(count, seat, match_rounds, rubric):
    """§3.2: a flow per 100 rounds alive under 2.x; the count itself under 1.0."""
    if rubric == "1.0":
        return count
    divisor = max(seat["roundsAlive"], min(match_rounds, 300))
    return 0 if divisor == 0 else count * 100 / divisor


def coverage_of(regions, map_regions):
    return math.floor(1000 * regions / map_regions + 0.5) / 1000


def map_coverage(archive):
    """§3.3: each seat's coverage and number of regions visited; whether the archive has a map
    record."""
    block = archive["exploration"]
    log = archive["log"]
    ids = [seat["id"] for seat in archive["seats"]]
    has_map = block is not None or not {"agent_spawned", "agent_registered"}.isdisjoint(
        log["counts"]
    )
    visited = Counter(
        agent for agent, _ in log["visited"]
    )  # the set holds each (seat, region) once
    if not archive["events"]:  # the exploration block's
        block = block or {}
        return {sid: block[sid]["coverage"] if sid in block else 0 for sid in ids}, visited, has_map
    return {sid: coverage_of(visited[sid], archive["regions"]) for sid in ids}, visited, has_map


# --- §4 the trade ledger
def net_share(received, given, values):
    n = running_sum(abs(received.get(i, 0) - given.get(i, 0)) * v for i, v in values.items())
    d = running_sum((received.get(i, 0) + given.get(i, 0)) * v for i, v in values.items())
    return 0 if d == 0 else hu(n / d, 3)


def ledger_from_events(trades, values, seats):
    """§4, §7 from trade_completed as (from, to, give, receive): per pair trades, net share, paid
    points (5 each way, 20 in all), counted in log order until each of the `seats` has its 20."""
    flows = defaultdict(list)  # (from, to): the items that went that way, trade by trade
    points = defaultdict(int)
    paid_in_all = defaultdict(int)
    paid = 0  # in all: at 20 a seat, no point is paid after, and none is looked for
    for giver, taker, give, receive in trades:
        flows[giver, taker].append(give)
        flows[taker, giver].append(receive)
        paying = give and receive and paid < 20 * seats
        for key in ((giver, taker), (taker, giver)) if paying else ():
            if points[key] < 5 and paid_in_all[key[0]] < 20:
                points[key] += 1
                paid_in_all[key[0]] += 1
                paid += 1
    return [
        {
            "a": a,
            "b": b,
            "trades": len(flows[a, b]),
            "netShare": net_share(totals(flows[b, a]), totals(flows[a, b]), values),
            "rep": {a: points[a, b], b: points[b, a]},
        }
        for a, b in sorted(flows)
        if a < b  # each pair once, a the lower id: a received flows[b, a]
    ]


def totals(bundles):
    """Each item's quantity over the bundles (each a tuple of (item, quantity); integers: any
    order)."""
    out = Counter()
    for (item, qty), times in Counter(chain.from_iterable(bundles)).items():
        out[item] += qty * times  # each (item, quantity) counted in C first
    return out


def commons_shares(draws, collapses, seats):
    """§4: each seat's share of the pools that collapsed while several drew; draws[region,
    resource, agent]: the ticks and units of its gathers, collapses (region, resource, tick), in log
    order."""
    sums = {seat["id"]: 0.0 for seat in seats}
    # the units each seat drew in the window: g <= c, c - g < 50
    for region, resource, c in collapses:
        drew = {}
        for agent in sums:
            ticks, units = draws.get((region, resource, agent), ((), ()))
            n = sum(units[bisect_right(ticks, c - 50) : bisect_right(ticks, c)])  # integers
            if n:
                drew[agent] = n
        if len(drew) > 1:  # a pool only one seat drew from is not counted
            total = sum(drew.values())
            for agent, n in drew.items():
                sums[agent] += n / total
    return {sid: hu(s, 3) for sid, s in sums.items()}


def trade_ledger(archive, values):
    """§4: replayed from the events; without them the archive's ledger block, or None."""
    if not archive["events"]:
        return archive["ledger"]
    log = archive["log"]
    return {
        "pairs": ledger_from_events(log["trade_completed"], values, len(archive["seats"])),
        "hasRep": True,
        "commons": commons_shares(log["gather"], log["region_collapsed"], archive["seats"]),
    }


def partners(ledger, sid):
    """The seat's pairs, its partners in ascending id order."""
    mine = [pair for pair in ledger["pairs"] if sid in (pair["a"], pair["b"])]
    return sorted(mine, key=lambda pair: pair["a"] if pair["b"] == sid else pair["b"])


def credited_trades(ledger, sid, counters):
    """hu(Σ min(trades, 5) × net share, 3) over partners; completed trades without a ledger."""
    if ledger is None:
        return counters["trade"]
    return hu(
        running_sum(min(pair["trades"], 5) * pair["netShare"] for pair in partners(ledger, sid)), 3
    )


# --- §5 rank, §6 the five dimensions (r: the seat's rate, §3.2)
def ranks(wealths, rubric):
    if rubric < "2.1":  # ties in roster order
        position = {
            i: p for p, i in enumerate(sorted(range(len(wealths)), key=lambda i: -wealths[i]), 1)
        }
        return [position[i] for i in range(len(wealths))]
    ascending = sorted(wealths)
    return [1 + len(ascending) - bisect_right(ascending, mine) for mine in wealths]


def survival_score(seat, counters, match_rounds, rubric):
    c = counters or dict.fromkeys(COUNTERS, 0)
    alive = 0 if match_rounds == 0 else 100 * seat["roundsAlive"] / match_rounds
    base = {"active": 100, "dormant": 55}.get(
        seat["status"], alive
    )  # dead: the share of rounds alive
    if rubric >= "2.3" and counters is not None:  # world actions: all counters but the last two
        base *= min(rate(sum(c[key] for key in COUNTERS[:9]), seat, match_rounds, rubric) / 10, 1)
    note(seat["id"], "survival", base_x_share=base, dormancies=c["dormant"], recoveries=c["awake"])
    return hu(clamp(base - 12 * c["dormant"] + 5 * c["awake"]), 1)


def economy_score(seat, wealth, counters, r):
    activity = r(sum(counters[key] for key in COUNTERS[:4]))  # gather, craft, build, repair
    note(seat["id"], "economy", W=wealth, rate_of_activity=activity)
    return hu(0.6 * clamp(100 * wealth / 400) + 0.4 * clamp(100 * activity / 40), 1)


def social_score(rep, credited, commons, counters, seat, r, rubric):
    credits = rubric >= "2.3"  # credited trades, less aggression and the commons
    trades, messages = r(credited if credits else counters["trade"]), r(counters["messages"])
    inner = clamp(22 * trades + 8 * rep + 1.5 * min(messages, 15))
    less = credits and (seat["aggression"], r(commons))  # aggression, the commons' rate
    note(
        seat["id"],
        "social",
        rate_of_trades=trades,
        Rep=rep,
        rate_of_messages=messages,
        less_aggression_and_rate_of_commons=less,
    )
    return hu(clamp(inner - 8 * less[0] - 8 * less[1]) if credits else inner, 1)


def reads_coverage(rubric, has_map_record):
    return rubric >= "2.3" or rubric == "2.2" and has_map_record


def adaptation_score(seat, counters, coverage, reads_map, r):
    last = 30 * min(coverage / 0.25, 1) if reads_map else 1.5 * min(r(counters["move"]), 20)
    crafts = r(counters["craft"])
    note(seat["id"], "adaptation", trained=seat["trained"], rate_of_crafts=crafts, last_term=last)
    return hu(clamp(12 * seat["trained"] + 10 * crafts + last), 1)


def competitiveness_score(seat, rank, wealth, field_size):
    rank_points = 100 if field_size == 1 else 100 * (field_size - rank) / (field_size - 1)
    note(seat["id"], "competitiveness", rank=rank, N=field_size, W=wealth, status=seat["status"])
    c = (rank_points + clamp(100 * wealth / 500)) / 2
    return hu(c / 2 if seat["status"] == "dead" else c, 1)


# --- §7 circular reputation (2.4), §8 the index, grade (fitness_index, grade_of: in the shared
# block, the study checks each scorecard by them), achievements
def circular_reputation(ledger, sid):
    """(circular, estimated): hu(Σ points × (1 − net share), 3) over partners."""
    if ledger is None:
        return 0, False
    mine = partners(ledger, sid)
    estimated = not ledger["hasRep"]
    points = [min(pair["trades"], 5) if estimated else pair["rep"][sid] for pair in mine]
    total = sum(points)  # integers
    if estimated and total > 20:  # min(trades, 5) each, scaled to 20 in all
        points = [p * (20 / total) for p in points]
    shares = [pair["netShare"] for pair in mine]
    circular = hu(running_sum(p * (1 - share) for p, share in zip(points, shares)), 3)
    note(sid, *FIGURE_ORDER[-4:], points=points, net_shares=shares)
    return circular, estimated and bool(mine)


def index_stocks(seat, circular):
    """Index wealth and reputation: the archive's, less what circular trade earned."""
    if circular <= 0:
        return seat["wealth"], seat["reputation"]
    return hu(seat["wealth"] - 2 * circular, 3), hu(seat["reputation"] - circular, 3)


def achievements(seat, wealth, rep, coverage, reads_map, match_rounds):
    earned = dict(
        survivor=seat["status"] == "active" and seat["roundsAlive"] >= match_rounds,
        prospered=wealth >= 250,
        earned_reputation=rep >= 10,
        explorer=reads_map and coverage >= 0.25,
    )
    note(seat["id"], "achievements", **earned)
    return [name for name, won in earned.items() if won]


# --- the whole scorecard
def recompute(archive, report):
    """Every seat's recomputed figures under the report's rubric; the checks, notes and ledger."""
    rubric, seats, rounds, notes = report["rubric"], archive["seats"], archive["rounds"], set()
    as_logged, without_errata = wealth_replays(archive, notes)
    counters = seat_counters(archive, report)
    coverage, visited, has_map_record = map_coverage(archive)
    ledger = trade_ledger(archive, item_values(archive["engine"]))
    circulars = [circular_reputation(ledger, seat["id"]) for seat in seats]
    stocks = [
        index_stocks(seat, circular if rubric == "2.4" else 0)
        for seat, (circular, _) in zip(seats, circulars)
    ]
    wealths = [wealth for wealth, _ in stocks]
    seat_ranks = ranks(wealths, rubric)
    results = []
    reads_map = reads_coverage(rubric, has_map_record)
    for i, seat in enumerate(seats):
        sid = seat["id"]
        (wealth, rep), (circular, estimated) = stocks[i], circulars[i]
        r = partial(rate, seat=seat, match_rounds=rounds, rubric=rubric)  # §3.2
        c = counters[sid] or dict.fromkeys(COUNTERS + ("messages",), 0)
        commons = ledger["commons"].get(sid, 0) if ledger else 0
        cover = coverage[sid]
        dims = (
            survival_score(seat, counters[sid], rounds, rubric),
            economy_score(seat, wealth, c, r),
            social_score(rep, credited_trades(ledger, sid, c), commons, c, seat, r, rubric),
            adaptation_score(seat, c, cover, reads_map, r),
            competitiveness_score(seat, seat_ranks[i], wealth, len(seats)),
        )
        index = fitness_index(dims)
        note(sid, "fitnessIndex", "grade", dimensions=dims, index=index)
        note(sid, "rank", W=wealth, the_field=wealths)
        figures = dict(
            zip(DIMENSIONS, dims),
            fitnessIndex=index,
            grade=grade_of(index, dims, rubric),
            wealth=seat["wealth"],
            status=seat["status"],
            rank=seat_ranks[i],
            mapCoverage=cover,
            achievements=achievements(seat, wealth, rep, cover, reads_map, rounds),
        )
        if rubric == "2.4":
            figures.update(
                indexWealth=wealth,
                indexReputation=rep,
                circularReputation=circular,
                circularEstimated=estimated,
            )
        results.append(
            {
                "figures": figures,
                "notRecorded": counters[sid] is None,
                "replay": as_logged[i],
                "replayWithoutErrata": without_errata and without_errata[i],
            }
        )
    checks = block_checks(archive, counters, visited, coverage, ledger)
    return results, checks, sorted(notes), ledger


# --- §12 checks of the blocks
def check(name, stamped, replayed):
    agrees = stamped == replayed
    return {
        "check": name,
        "agrees": agrees,
        "detail": None
        if agrees
        else "archive says %s, events give %s" % (shown(stamped), shown(replayed)),
        "published": stamped,
        "recomputed": replayed,
    }


def block_checks(archive, counters, visited, coverage, ledger):
    """The archive's blocks against its events: each metrics entry, the ledger, the exploration."""
    if not archive["events"]:
        return []
    checks = [
        check("metrics %s.%s" % (sid, key), entry[key], counters[sid][key])
        for sid, entry in (archive["metrics"] or {}).items()
        for key in COUNTERS
    ]
    if archive["ledger"] is not None:
        checks += ledger_checks(archive["ledger"], ledger)
    exploration = archive["exploration"]
    if exploration is not None:  # the block lists every seat
        checks += [
            check("exploration %s" % sid, "absent", "present")
            for sid in coverage
            if sid not in exploration
        ]
        for sid, entry in exploration.items():
            checks += [
                check("exploration %s.visited" % sid, entry["visited"], visited[sid]),
                check("exploration %s.coverage" % sid, entry["coverage"], coverage[sid]),
            ]
    return checks


def ledger_checks(block, ledger):
    replayed, stamped = (
        {(p["a"], p["b"]): p for p in pairs} for pairs in (ledger["pairs"], block["pairs"])
    )
    out = []
    for key in sorted(set(replayed) | set(stamped)):
        name = "ledger %s~%s" % key
        mine = replayed.get(key)
        theirs = stamped.get(key)
        if not (mine and theirs):
            out.append(check(name, *("present" if pair else "absent" for pair in (theirs, mine))))
            continue
        out += [check(name + "." + f, theirs[f], mine[f]) for f in ("trades", "netShare")]
        if theirs["rep"] is not None:
            out += [
                check(name + ".rep." + side, theirs["rep"][side], mine["rep"][side]) for side in key
            ]
    return out + [
        check("ledger commons.%s" % sid, block["commons"].get(sid, 0), share)
        for sid, share in ledger["commons"].items()
    ]


# --- reading records
def shown(value):
    """A value of a record in an error: as JSON writes it (a float as its repr), cut at 40."""
    return cut(repr(value) if isinstance(value, float) else json.dumps(value), 40)


# rubric.md §11: each form of a field: its words in an error, its values' types.
FORMS = {
    "count": ("an integer from 0 to 2**53", {int}),
    "int": ("an integer", {int}),  # seq and tick: their checks bound them, the faster for it
    "rank": ("an integer >= 1", {int}),
    "positive": ("an integer from 1 to 2**53", {int}),
    "number": ("a finite number", {int, float}),
    "text": ("a string", {str}),
    "flag": ("true or false", {bool}),
    "object": ("an object", {dict}),
    "list": ("a list", {list}),
    "status": ("one of active, dormant, dead", {str}),
    "seat": ("a seat of the roster", {str}),
    "items": ("item names mapped to integers from 1 to 2**53", {dict}),
}
LEAST = {"count": 0, "rank": 1, "positive": 1}  # an integer form's least value (its most: 2**53)
REQUIRED = object()


def fits(values, form):
    """Whether every one of the values (None: one is missing) has the form, a column at a time (a
    seat's column: `column` gives None where one is not of the roster)."""
    if form == "seat":  # column() gave the roster's own strings, or None: nothing more to see
        return values is not None
    if form == "text":  # join takes strings only (no None): faster than type() each
        try:
            "".join(values)
            return True
        except TypeError:
            return False
    if values is None or not set(map(type, values)) <= FORMS[form][1]:
        return False
    if form == "status":
        return set(values) <= {"active", "dormant", "dead"}
    if form == "number":
        return all(abs(v) <= EXACT_INTEGERS if type(v) is int else math.isfinite(v) for v in values)
    if form == "items":
        return fits(list(chain.from_iterable(map(dict.values, values))), "positive")
    return (
        form not in LEAST
        or not values
        or LEAST[form] <= min(values)
        and max(values) <= EXACT_INTEGERS
    )


def checked(value, form, at):
    """The value, where it has the form; `at` names the file and field for the error."""
    if not fits([value], form):
        raise Unreadable("%s: expected %s, got %s" % (at, FORMS[form][0], shown(value)))
    return value


def field(obj, key, at):
    if not isinstance(obj, dict):
        raise Unreadable("%s: expected an object" % at)
    if key not in obj:
        raise Unreadable("%s.%s: missing" % (at, key))
    return obj[key]


def get(obj, key, form, at, default=REQUIRED):
    """obj[key] of its form (a dotted key reaches in), or default where absent (or null, for
    None)."""
    if "." in key:
        outer, key = key.rsplit(".", 1)
        obj = get(obj, outer, "object", at)
        at = at + "." + outer
    if default is not REQUIRED and isinstance(obj, dict) and obj.get(key, default) is default:
        return default
    return checked(field(obj, key, at), form, at + "." + key)


def field_table(table):
    """{part: its fields, in the order checked} from `part [part ...]: key:form ...;` entries, each
    field key:form then *form: each element's form; =JSON: the default where absent (=null: or
    null, None)."""
    return {
        part: [re.fullmatch(r"([\w.]+):(\w+)(?:\*(\w+))?(=.+)?", f).groups() for f in spec.split()]
        for parts, spec in (entry.split(": ") for entry in table.split(";"))
        for part in parts.split()
    }


# records.md §1.1: the fields read of each part of a record.
FIELDS = field_table("""
    archive: config.engine_version:text config.map.width:count config.map.height:count
        startedAtTick:count endedAtTick:count config.rounds:count=null agents:list;
    agent: trained:object status:status agentId:text roundsAlive:count wealth:number
        reputation:number aggression:count trained.strength:count trained.vitality:count
        trained.endurance:count inventory:object*count;
    meter: turns:count roundsSatOut:count errorTurns:count spend:number;
    metrics: gather:count=0 craft:count=0 build:count=0 repair:count=0 move:count=0 train:count=0
        attack:count=0 raid:count=0 trade:count=0 dormant:count=0 awake:count=0 message:count=0
        message_private:count=0 rest:count=0 look:count=0;
    pair: a:text b:text rep:object=null trades:count netShare:number;
    exploration: visited:count coverage:number;
    erratum: events:list*count id:text agents:list=[] affects:list=[] scoresDepend:flag;
    card: dimensions:object raw:object={} achievements:list*text rank:rank wealth:number status:text
        fitnessIndex:number grade:text dimensions.survival:number dimensions.economy:number
        dimensions.social:number dimensions.adaptation:number dimensions.competitiveness:number;
    raw: mapCoverage:number indexWealth:number indexReputation:number circularReputation:number
        circularEstimated:flag""")


def fields(obj, part, at):
    """The part's fields of obj, each of its form; the error names the file and field."""
    out = {}
    for key, form, each, default in FIELDS[part]:
        default = [json.loads(default[1:])] if default else []
        value = out[key] = get(obj, key, form, at, *default)
        for i, item in (value.items() if form == "object" else enumerate(value)) if each else ():
            checked(item, each, ("%s.%s.%s" if form == "object" else "%s.%s[%d]") % (at, key, i))
    return out


def roster_seat(agent, roster, at):
    if agent not in roster:
        raise Unreadable("%s: %s names no seat of the roster" % (at, shown(agent)))
    return agent


def by_seat(block, roster, at):
    """(seat, value, its place) for each entry of an object keyed by seats of the roster."""
    for agent, value in checked(block, "object", at).items():
        where = at + "." + agent
        yield roster_seat(agent, roster, where), value, where


def check_page(page, number, first, name):
    """records.md §1.1 on one page (first: page 1, None for page 1 itself)."""
    if field(checked(page, "object", name), "page", name) != number:
        raise Unreadable("%s: page is %s, expected %d" % (name, shown(page["page"]), number))
    count = field(page, "pageCount", name)
    if not fits([count], "positive") or count > MAX_PAGES:
        raise Unreadable(
            "%s: pageCount must be an integer from 1 to %d, got %s"
            % (name, MAX_PAGES, shown(count))
        )
    for key in ("errata", "events"):
        checked(field(page, key, name), "list", name + ": " + key)
    if (page.get("archive") is None) == (first is None):
        raise Unreadable(
            name + (": archive is on page 1 only" if first else ": page 1 carries no archive")
        )
    first = first or page
    if count != first["pageCount"]:
        raise Unreadable(
            "%s: pageCount %d disagrees with page 1's %d" % (name, count, first["pageCount"])
        )
    if page["errata"] != first["errata"]:
        raise Unreadable("%s: errata differ from page 1's" % name)
    if not page["events"] and number < count:
        raise Unreadable(
            "%s: page %d of %d holds no events: only the last may hold none (records.md §1.1)"
            % (name, number, count)
        )
    return page


def read_archive(page, name, source):
    """Page 1's archive: the fields the rules read, checked (records.md §1.1), its match id that of
    the match asked for, and an empty log of its events."""
    archive = page["archive"]
    at = name + ": archive"
    got = fields(archive, "archive", at)
    start = got["startedAtTick"]
    end = got["endedAtTick"]
    regions = got["config.map.width"] * got["config.map.height"]
    if regions == 0:
        raise Unreadable("%s.config.map: the map has no regions" % at)
    if end < start:
        raise Unreadable("%s.endedAtTick: %d is before startedAtTick %d" % (at, end, start))
    if not got["agents"]:
        raise Unreadable("%s.agents: the roster is empty" % at)
    seats = [read_agent(agent, "%s.agents[%d]" % (at, i)) for i, agent in enumerate(got["agents"])]
    roster = {seat["id"]: seat["id"] for seat in seats}  # each seat's own string, by its id
    if len(roster) != len(seats):
        raise Unreadable("%s.agents: an agentId appears twice" % at)
    blocks = {
        key: None if archive.get(key) is None else read(archive[key], roster, at + "." + key)
        for key, read in (
            ("metrics", read_metrics),
            ("ledger", read_ledger_block),
            ("exploration", read_exploration),
        )
    }
    match_id = archive.get("matchId", page.get("matchId"))
    if not MATCH_ID.match(str(match_id)):  # a string of the form, no other value
        raise Unreadable("%s: archive.matchId %s is not a match id" % (name, shown(match_id)))
    if source.match_id not in (None, match_id):
        raise Unreadable(
            "%s: archive.matchId %s is not the match asked for, %s"
            % (name, match_id, source.match_id)
        )
    return dict(
        blocks,
        id=match_id,
        engine=got["config.engine_version"],
        regions=regions,
        end=end,
        rounds=end - start,
        planned=got["config.rounds"],
        seats=seats,
        log=defaultdict(
            list,
            seq=1,
            tick=start,
            end=end,
            roster=roster,
            counts={},
            visited=set(),  # lists: empty until read
            gather=defaultdict(lambda: ([], [])),
        ),
    )


def read_agent(agent, at):
    seat = fields(agent, "agent", at)
    meter = agent.get("meter")
    return dict(
        seat,
        id=seat["agentId"],
        name=str(agent.get("name", "")),
        model=str(agent.get("model", "")),
        trained=seat["trained.strength"] + seat["trained.vitality"] + seat["trained.endurance"],
        meter=None if meter is None else fields(meter, "meter", at + ".meter"),
        at=at,  # its place in the record, for --explain
    )


def read_metrics(block, roster, at):
    return {
        agent: dict(
            fields(checked(entry, "object", where), "metrics", where),
            seen=frozenset(key for key, *_ in FIELDS["metrics"] if key in entry),
        )
        for agent, entry, where in by_seat(block, roster, at)
    }


def read_ledger_block(block, roster, at):
    pairs = [
        fields(pair, "pair", "%s.pairs[%d]" % (at, i))
        for i, pair in enumerate(get(block, "pairs", "list", at))
    ]
    for i, pair in enumerate(pairs):
        where = "%s.pairs[%d]" % (at, i)
        a, b = (roster_seat(pair[side], roster, where + "." + side) for side in "ab")
        if not a < b:
            raise Unreadable("%s: a and b must be two seats in ascending id order" % where)
        if pair["rep"] is not None:
            pair["rep"] = {side: get(pair["rep"], side, "count", where + ".rep") for side in (a, b)}
    if len({(p["a"], p["b"]) for p in pairs}) != len(pairs):
        raise Unreadable("%s.pairs: a pair appears twice" % at)
    without_rep = {p["rep"] is None for p in pairs}
    if len(without_rep) > 1:
        raise Unreadable("%s.pairs: rep is on some pairs only" % at)
    commons = {
        agent: checked(share, "number", where)
        for agent, share, where in by_seat(block.get("commons", {}), roster, at + ".commons")
    }
    return {"pairs": pairs, "commons": commons, "hasRep": without_rep == {False}}


def read_exploration(block, roster, at):
    return {
        agent: fields(entry, "exploration", where)
        for agent, entry, where in by_seat(field(block, "agents", at), roster, at + ".agents")
    }


def read_errata(errata, at):
    return [
        {
            "id": e["id"],
            "title": str(erratum.get("title", "")),
            **e,
            "agents": list(map(str, e["agents"])),
            "affects": list(map(str, e["affects"])),
        }
        for i, erratum in enumerate(errata)
        for e in [fields(erratum, "erratum", "%s[%d]" % (at, i))]
    ]


# Events: each known type's fields that some rule reads (the ones §11 checks), beyond seq, tick and
# type. A move's `from`, a craft's item and count, a build's region and a train's stat are read by
# no rule.
EVENT_FIELDS = field_table("""
    agent_spawned agent_registered: agentId:seat region:text;
    move: agentId:seat to:text;
    gather: agentId:seat region:text resource:text gathered:positive;
    build: agentId:seat structure:text structureId:text;
    repair: agentId:seat structureId:text;
    deposit withdraw: agentId:seat structureId:text items:items;
    attack: agentId:seat target:seat;
    raid: agentId:seat target:seat structureId:text taken:items;
    trade_completed: agentId:seat from:seat to:seat give:items receive:items;
    trade_fulfilled: agentId:seat from:seat to:seat;
    craft train agent_dormant agent_awake agent_died message rest: agentId:seat;
    region_collapsed: region:text resource:text""")


def read_events(page, name, log):
    """§11 on a page's events, a type at a time (a fault is named event by event); the page then
    reduced to what the rules read, as tuples, onto the log."""
    events = page["events"]
    seq = log["seq"]
    tick = log["tick"]
    groups = {}
    if event_fault(events, seq, tick, log, groups):
        for i, event in enumerate(events):
            key, what = event_fault([event], seq, tick, log, {}) or (0, 0)
            at = "%s: events[%d]" % (name, i) + ("" if key in (None, "seq") else " (seq %d)" % seq)
            if what:
                raise Unreadable("%s%s: %s" % (at, "." + key if key else "", what))
            seq += 1
            tick = event["tick"]
        raise Unreadable("%s: the event log is not well formed" % name)
    log["seq"] = seq + len(events)
    log["tick"] = events[-1]["tick"] if events else tick
    for kind, (group, cols) in groups.items():
        ticks = map(itemgetter("tick"), group)  # read where a rule reads them
        if "agentId" in cols:
            log["counts"].setdefault(kind, Counter()).update(cols["agentId"])
        if kind in ("agent_spawned", "agent_registered", "move"):  # (agentId, region or to)
            log["visited"].update(zip(*cols.values()))
        if kind == "region_collapsed":  # (region, resource, tick)
            log[kind] += zip(*cols.values(), ticks)
        if kind == "trade_completed":  # (from, to, give, receive), the items as tuples of pairs
            bundles = (map(tuple, map(dict.items, cols[key])) for key in ("give", "receive"))
            log[kind] += zip(cols["from"], cols["to"], *bundles)
        if kind == "gather":  # each gather's tick and units onto its pool and seat's lists
            pools = map(
                log[kind].__getitem__, zip(cols["region"], cols["resource"], cols["agentId"])
            )
            for (pool_ticks, pool_units), tick, units in zip(pools, ticks, cols["gathered"]):
                pool_ticks.append(tick)
                pool_units.append(units)
        if "structureId" in cols:  # build, repair, deposit, withdraw, raid: as (seq, tick, type,
            # structureId, agentId, what: a build's structure, else its last field, the items moved)
            what = cols.get("structure") or [*cols.values()][-1]
            seqs = map(itemgetter("seq"), group)  # in log order once sorted: seq first
            log["structures"] += zip(
                seqs, ticks, repeat(kind), cols["structureId"], cols["agentId"], what
            )


def event_fault(events, seq, tick, log, groups):
    """A rule of §11 these events break, as (field, what was expected), `seq` being the first
    one's and `tick` the last tick before (the log's end and roster bound the rest): for one event,
    the first it breaks. Else None, with groups[type] = (its events, {field: column})."""
    first = events[0] if events else {}
    end = log["end"]
    if type(first) is not dict:  # the others: their columns below are None
        return None, "expected an object, got %s" % shown(first)
    seqs, ticks = (column(events, key) for key in ("seq", "tick"))
    if not fits(seqs, "int") or seqs != list(range(seq, seq + len(events))):
        return "seq", "expected %d (seq is the position in the log), got %s" % (
            seq,
            shown(first.get("seq")),
        )
    # in order and in range
    if not fits(ticks, "int") or [tick, *ticks, end] != sorted([tick, *ticks, end]):
        return "tick", (
            "expected an integer from %d to %d (ticks never decrease), got %s"
            % (tick, end, shown(first.get("tick")))
        )
    lists = defaultdict(list)  # the types in the order they first appear
    try:  # each event onto its type's list, as a `for` loop would, in C (append's None keeps on)
        any(map(list.append, map(lists.__getitem__, map(itemgetter("type"), events)), events))
    except (KeyError, TypeError):  # one has no type, or a list or an object for it
        lists = {None: events}
    if not fits(list(lists), "text"):
        return "type", "expected a string, got %s" % shown(first.get("type"))
    for kind, group in lists.items():
        cols = {}
        groups[kind] = group, cols
        for key, form, _, _ in EVENT_FIELDS.get(kind, ()):
            cols[key] = column(group, key, log["roster"] if form == "seat" else None)
            if not fits(cols[key], form):
                return key, "expected %s, %s" % (
                    FORMS[form][0],
                    "got " + shown(first[key]) if key in first else "missing",
                )
        side = {"trade_completed": "from", "trade_fulfilled": "to"}.get(kind)  # agentId's side
        if side and any(map(eq, cols["from"], cols["to"])):
            return "", "a trade's from and to are the same seat"
        if side and cols["agentId"] != cols[side]:
            return "agentId", "expected the trade's %s on %s" % (side, kind)


def column(events, key, seats=None):
    """The key's values over the events, None where one lacks it (or is no object); with `seats`
    (the roster), each seat's own string (hashed once, for every rule after), None where one is
    not of the roster."""
    try:
        if seats is None:
            return [event[key] for event in events]
        return [seats[event[key]] for event in events]
    except (KeyError, TypeError):
        return None


def read_report(raw, name, archive, version):
    """The report of the archive's match, read under `version` (None: its own rubric)."""
    report = checked(parse_json(raw, name), "object", name)
    if report.get("matchId") not in (None, archive["id"]):
        raise Unreadable(
            "%s.matchId: %s is not the archive's %s"
            % (name, shown(report["matchId"]), archive["id"])
        )
    rubric = field(report, "rubricVersion", name)
    if rubric not in RUBRICS:
        raise Unreadable(
            "%s.rubricVersion: %s is not a known rubric (%s)"
            % (name, shown(rubric), ", ".join(RUBRICS))
        )
    if version not in (None, rubric):
        raise Unreadable(
            "%s.rubricVersion: %s, but the report was asked for under %s" % (name, rubric, version)
        )
    reason = get(report, "rubricReason", "text", name, None)
    cards = get(report, "scorecards", "list", name)
    if [card.get("agentId") if isinstance(card, dict) else None for card in cards] != [
        seat["id"] for seat in archive["seats"]
    ]:
        raise Unreadable(
            "%s.scorecards: the seats are not the archive's roster, in roster order" % name
        )
    return {
        "rubric": rubric,
        "reason": reason,
        "cards": [read_card(card, "%s.scorecards[%d]" % (name, i)) for i, card in enumerate(cards)],
    }


def read_card(card, at):
    """A scorecard's published figures (the dimensions by name), each checked for its form."""
    got = fields(card, "card", at)
    raw = got["raw"]
    published = {
        key.split(".")[-1]: value for key, value in got.items() if key not in ("dimensions", "raw")
    }
    published.update(
        (key, get(raw, key, form, at + ".raw")) for key, form, _, _ in FIELDS["raw"] if key in raw
    )
    return {
        "published": published,
        "messagesSent": get(raw, "messagesSent", "count", at + ".raw", None),
        "notes": list(map(str, get(card, "notes", "list", at, []))),
        # each published figure's place in the record, for --explain
        "at": {k.split(".")[-1]: "%s.%s" % (at, k) for k in [*got, *("raw." + k for k in raw)]},
    }


def read_match(source, version):
    """Every page, as it arrives, and then the report, checked as rubric.md §11 asks: the first
    fault stops the reading (and a download) there."""
    first = None
    number = 0
    while number < (first["pageCount"] if first else 1):  # page 1, then every page it announces
        number += 1
        raw, name = source.page(number)
        page = check_page(parse_json(raw, name), number, first, name)
        if number == 1:
            first = dict(page, events=())  # what the next pages are held to, not its events
            archive = read_archive(page, name, source)
            mid = archive["id"]
        if page.get("matchId", mid) != mid:
            raise Unreadable(
                "%s: matchId %s is not the archive's %s" % (name, shown(page["matchId"]), mid)
            )
        if number == 1:
            archive["errata"] = read_errata(page["errata"], name + ": errata")
        read_events(page, name, archive["log"])
        del page  # freed while its objects are in the cache, before the next is parsed
    archive["events"] = archive["log"]["seq"] - 1
    raw, name = source.report(version)
    return archive, read_report(raw, name, archive, version)


# ------------------------------------------------------------- reporting
FIGURE_ORDER = (
    "wealth status rank survival economy social adaptation competitiveness fitnessIndex grade "
    "achievements mapCoverage indexWealth indexReputation circularReputation circularEstimated"
).split()
# The decimals each figure is published to: a difference is counted in units of the last (rank: 0).
PLACES = {
    **dict.fromkeys(DIMENSIONS + ("fitnessIndex",), 1),
    "wealth": 2,
    "wealth replay": 2,
    **dict.fromkeys("mapCoverage indexWealth indexReputation circularReputation".split(), 3),
}
COLUMNS = {
    "survival": "survive",
    "adaptation": "adapt",
    "competitiveness": "compete",
    "fitnessIndex": "index",
    "mapCoverage": "coverage",
    "indexWealth": "idxWealth",
    "indexReputation": "idxRep",
    "circularReputation": "circular",
    "circularEstimated": "estimated",
    "wealth replay": "replay",
}


def figure_row(key, published, recomputed):
    """A figure's row (key: its match, seat and figure), the same where equal (true is no 1); where
    two numbers differ, by how many units of the last published place."""
    same = (
        published is recomputed
        if bool in (type(published), type(recomputed))
        else published == recomputed
    )
    d = None
    if not same and {type(published), type(recomputed)} <= {int, float}:
        d = (recomputed - published) * 10 ** PLACES.get(key["figure"], 0)
        d = int(math.floor(d + 0.5)) if math.isfinite(d) and abs(d) < EXACT_INTEGERS else None
    return {
        "key": key,
        "label": "%(seat)s %(figure)s" % key,
        "published": published,
        "recomputed": recomputed,
        "same": same,
        "difference": d,
    }


def compare_seat(seat, card, result, archive):
    """§12: each figure the report or the rules give, then the wealth replay against the archive's
    (§2.3). No figure is None: one missing differs."""
    replay = result["replay"]
    published = dict(card["published"], **{"wealth replay": seat["wealth"]})
    mine = dict(result["figures"], **{"wealth replay": replay})
    rows = [
        figure_row(
            {"match": archive["id"], "seat": seat["id"], "figure": name},
            published.get(name),
            mine.get(name),
        )
        for name in FIGURE_ORDER + ["wealth replay"]
        if name in published or name in mine and name != "mapCoverage"
    ]  # coverage where published
    row = rows[-1]
    corrected = result["replayWithoutErrata"]
    if corrected not in (None, replay):  # the errata's events move this seat's wealth
        row.update(
            asLogged=replay,
            withoutErrata=corrected,
            errata=[e["id"] for e in archive["errata"] if e["events"]],
        )
        if not row["same"] and corrected == seat["wealth"]:
            row.update(same=True, recomputed=corrected, difference=None, explained=True)
    elif not row["same"] and not archive["events"] and replay < seat["wealth"]:
        # structures only add value: an inventory worth less is not compared
        row.update(
            same=None,
            difference=None,
            uncounted="inventory only: no event log shows the structures",
        )
    # --explain: a figure that differs, derived from the terms its rule recorded as it ran, and
    # where its two sides came from (the record's file and field, or the rules)
    for row in (row for row in rows if row["same"] is False and EXPLAINING.record is not None):
        name = row["key"]["figure"]
        terms = dict(EXPLAINING.record.get((seat["id"], name), {}))
        words = terms.pop("terms", ())  # a wealth replay's: each term's words, what it adds
        at = seat["at"] + "."  # the archive's agent
        row["derivation"] = {
            "section": "rubric.md " + SECTIONS[name],
            "terms": dict({cut(" ".join(map(str, w)), 80): a for w, a in words if a}, **terms),
            "sources": {
                "recomputed": at + name if name in ("wealth", "status") else RULES,
                "published": at + "wealth" if name == "wealth replay" else card["at"].get(name),
            },
        }
    return rows


def audit(archive, report):
    """The match's result as data: what --json prints and the text shows."""
    EXPLAINING.record = {} if Running.explain else None
    results, checks, notes, ledger = recompute(archive, report)
    seats = [
        dict(
            agentId=seat["id"],
            name=seat["name"],
            model=seat["model"],
            figures=compare_seat(seat, card, result, archive),
            notRecorded=result["notRecorded"],
            notes=card["notes"],
            messagesSent=card["messagesSent"],
        )
        for seat, card, result in zip(archive["seats"], report["cards"], results)
    ]
    figures = [row["same"] for s in seats for row in s["figures"] if row["same"] is not None]
    trusted = [TRUSTED] * any(s["messagesSent"] is not None for s in seats)
    unshown = [s["agentId"] for s in seats for row in s["figures"] if row.get("uncounted")]
    if unshown:
        trusted.append(
            "the structures' part of final wealth for %s (no event log to replay)"
            % ", ".join(unshown)
        )
    if ledger is None:
        source = "none: every completed trade counts, no commons share, no circular reputation"
    elif archive["events"]:
        source = "replayed from the events (circular reputation too)"
    else:
        source = "the archive's ledger block, circular reputation " + (
            "from its paid points (rep)" if ledger["hasRep"] else "estimated (the block has no rep)"
        )
        trusted.append("the archive's ledger block (the events that made it are not in the export)")
    same = sum(figures)
    agree = sum(c["agrees"] for c in checks)
    for c in (c for c in checks if EXPLAINING.record is not None and not c["agrees"]):
        sources = {
            "recomputed": RULES,
            "published": "the archive's " + c["check"],
        }
        c["derivation"] = {"section": "rubric.md §12", "terms": {}, "sources": sources}
    return dict(
        ledger=source,
        matchId=archive["id"],
        rubric=report["rubric"],
        rubricReason=report["reason"],
        **{key: archive[key] for key in ("engine", "rounds", "events", "errata")},
        seats=seats,
        checks=checks,
        notes=notes,
        figuresSame=same,
        figuresCompared=len(figures),
        checksAgree=agree,
        checksMade=len(checks),
        trusted=trusted,
        exit=int(same < len(figures) or agree < len(checks)),
    )


# --explain: each figure's section of rubric.md; the recomputed side of all but wealth and status
RULES = "the rules, from the archive and its events"
SECTIONS = dict(
    zip(
        FIGURE_ORDER + ["wealth replay"],
        "§2.3, §12;§12;§5;§6;§6;§6;§6;§6;§8;§8;§8;§3.3;§7;§7;§7;§7;§2.2, §2.3".split(";"),
    )
)


def text(value):
    """A value as printed; what a record or server sent is escaped to stay on its line."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):  # the first MAX_LISTED items, then how many more
        more = ",... and %d more" % (len(value) - MAX_LISTED) if len(value) > MAX_LISTED else ""
        return ",".join(text(v) for v in value[:MAX_LISTED]) + more if value else "-"
    return repr(value) if isinstance(value, float) else one_line(str(value))


def put(w, line):
    """One line, escaped, wrapped to the terminal; a wrapped line ends with ` \\` and goes on."""
    for part in wrapped(line, terminal_width()):
        w(part + "\n")


def cell(row):
    """A figure in the table: recomputed where the two are the same, else published/recomputed."""
    if row["same"]:
        return cut(text(row["recomputed"]), 48)
    pair = cut(text(row["published"]), 20) + "/" + cut(text(row["recomputed"]), 20)
    return pair if row["same"] is False else "(%s)" % pair


def print_table(w, seats):
    """After a blank line: a row per seat, a column per figure, in as many tables as fit."""
    cells = [{r["key"]["figure"]: cell(r) for r in s["figures"]} for s in seats]
    cols = [
        [COLUMNS.get(n, n)] + [c.get(n, "-") for c in cells] for n in dict.fromkeys(chain(*cells))
    ]
    cols += [
        [key] + [cut(text(s[key]), n) for s in seats] for key, n in (("name", 24), ("model", 30))
    ]
    w("\n")
    for line in bands([["seat"] + [cut(text(s["agentId"]), 24) for s in seats]] + cols):
        w(line + "\n")
    if any(r["same"] is not True for s in seats for r in s["figures"]):
        put(w, "a/b: published a, recomputed b where they differ; (a/b): shown, not compared")


def texts(record):
    """Each value of a row, check or erratum as printed (`text`), for a line's %(key)s: a record
    of a few values (a seat's would print each of its rows)."""
    return {key: text(value) for key, value in record.items()}


def print_rows(w, seats):
    """--all: every figure of every seat on its own row."""
    for seat in seats:
        w("\n")
        put(
            w,
            "  ".join(text(seat[key]) for key in ("agentId", "name", "model"))
            + "  (counters not recorded)" * seat["notRecorded"],
        )
        w(
            "  figure              published                recomputed\n"
        )  # the columns of the rows below
        for row in seat["figures"]:
            verdict = {True: "same", False: "DIFFERS", None: "not compared"}[row["same"]]
            verdict += "" if row["difference"] is None else " %+d" % row["difference"]
            put(  # each value whole (a long one wraps), the row within the terminal's width
                w,
                "  %-19s %-24s %-24s %s"
                % (row["key"]["figure"], text(row["published"]), text(row["recomputed"]), verdict),
            )


def print_audit(result, out, rows=False, batch=False):
    """The audit as text: the match, its figures (a table, or a row each), then what to read below
    them."""
    w = out.write
    seats = result["seats"]
    if result.get("copy"):
        put(w, result["copy"])
    put(
        w,
        "%(matchId)s  rubric %(rubric)s  engine %(engine)s  %(rounds)d rounds  %(n)d seats  "
        "%(events)d events" % dict(result, engine=text(result["engine"]), n=len(seats)),
    )
    if batch and result["source"] != result["matchId"]:
        put(w, "  read from %s" % text(result["source"]))
    if result.get("report"):
        put(w, "  report read: %s" % text(result["report"]))
    if result.get("proxy"):
        put(w, "  read through %s" % result["proxy"])
    if result["rubricReason"]:
        put(w, "  read under %s: %s" % (result["rubric"], text(result["rubricReason"])))
    put(w, "trade ledger: %s" % result["ledger"])
    (print_rows if rows else print_table)(w, seats)
    w("\n")
    lines = [line for seat in seats for line in seat_notes(seat, rows)]
    for c in (c for c in result["checks"] if not c["agrees"]):
        lines.append(
            "check FAILS: %(check)s: archive says %(published)s, events give %(recomputed)s"
            % texts(c)
        )
        lines += explained(text(c["check"]), c)
    lines += ["note: %s" % text(note) for note in result["notes"]] + ["errata: none"] * (
        not result["errata"]
    )
    for e in result["errata"]:
        events = e["events"]
        seqs = ", ".join(map(str, events[:8])) + " ... (%d events)" % len(events) * (
            len(events) > 8
        )
        lines += [
            "erratum %(id)s: %(title)s" % texts(e),
            "  events %s; seats %s; affects %s; scores depend on them: %s"
            % (seqs, *map(text, (e["agents"], e["affects"], e["scoresDepend"]))),
        ]
    lines.append(
        "%(matchId)s: figures same %(figuresSame)d of %(figuresCompared)d; "
        "checks agree %(checksAgree)d of %(checksMade)d" % result
    )
    for line in lines + ["taken on trust: %s" % item for item in result["trusted"]]:
        put(w, line)


def seat_notes(seat, rows):
    """Under the table: what differs, what the errata explain, what was not compared."""
    lines = []
    for row in seat["figures"]:  # one the same, the errata aside, gives no line
        t = texts(row)
        d = row["difference"]
        if row["same"] is False:
            lines.append(
                "DIFFERS %(label)s: published %(published)s, recomputed %(recomputed)s" % t
                + ("" if d is None else ", %+d in the last place" % d)
            )
            lines += explained(t["label"], row)
        if "withoutErrata" in row:
            t["errata"] = ", ".join(map(text, row["errata"]))
            reading = (
                "explained by " + t["errata"]
                if row.get("explained")
                else "the archive's is the log as logged"
                if row["same"]
                else "the archive's is neither"
            )
            lines.append(
                "%(label)s: as logged %(asLogged)s; without %(errata)s's events %(withoutErrata)s: "
                % t
                + reading
            )
        if row.get("uncounted"):
            lines.append("%(label)s not compared: %(uncounted)s" % t)
    notes = ["counters not recorded"] * bool(seat["notRecorded"] and not rows) + seat["notes"]
    return lines + [text(seat["agentId"]) + ": " + "; ".join(map(text, notes))] * bool(notes)


def summary(results, failures):
    """A run's counts over its matches (--json's summary, the text's last lines)."""
    seats = [s for r in results for s in r["seats"]]
    rows = [row for s in seats for row in s["figures"]]
    same = Counter(r["key"]["figure"] for r in rows if r["same"])
    return dict(
        matches=len(results) + len(failures),
        read=len(results),
        unreadable=[f["source"] for f in failures],
        seats=len(seats),
        fitnessIndexReproduced=same["fitnessIndex"],
        finalWealthReproduced=same["wealth"],
        wealthReplayReproduced=same["wealth replay"],
        wealthReplayNotCompared=sum(r["same"] is None for r in rows),
        **{
            k: sum(r[k] for r in results)
            for k in "figuresSame figuresCompared checksAgree checksMade".split()
        },
        differ=[r["source"] for r in results if r["exit"]],
    )


def match_verdict(results, failures, changes, batch):
    """The run's verdict line: what differs, fails, changed or could not be read, match by match."""
    ids = Counter(r["matchId"] for r in results)  # a match read twice: named by its source
    named = [
        (text(r["source" if ids[r["matchId"]] > 1 else "matchId"]) + " " if batch else "", r)
        for r in results
    ]
    return verdict_line(
        [
            (
                "DIFFERS",
                [
                    prefix + text(row["label"])
                    for prefix, r in named
                    for s in r["seats"]
                    for row in s["figures"]
                    if row["same"] is False
                ],
            ),
            (
                "FAILS",
                [
                    prefix + text(c["check"])
                    for prefix, r in named
                    for c in r["checks"]
                    if not c["agrees"]
                ]
                + [text(f["source"]) + " (not as saved)" for f in failures if f["exit"] == 1],
            ),
            ("CHANGED", ["%d since the saved copy" % changes] if changes else []),
            ("NOT READ", [text(f["source"]) for f in failures if f["exit"] == 2]),
        ]
    )


# ------------------------------------------------------------------ gather a match
# A match's files by name, as --save keeps them: export/<N>.json, report.json (report/<V>.json
# under --rubric V); and playing.json, the platform's 409 while the match is still playing, read
# in a copy laid out as the platform serves it (--save keeps none: a 409 is no record).
MATCH_FILE = r"(export/[1-9][0-9]{0,4}|report|report/[0-9]\.[0-9]|playing)\.json"
ADDRESS = re.compile(
    r"(https?://[^/?#\s]+(?:/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*?)"  # a mirror's prefix: no . or ..
    r"(?:/api)?/matches/(m_[0-9a-f]{12})(?:/export|/report)?/?(?:[?#]\S*)?\Z"
)
STUDY_ADDRESS = re.compile(
    r"(https?://\S+)?/u/[a-z0-9_-]{1,32}/studies/s_[0-9a-f]{8}/?([?#]\S*)?\Z"
)
STUDY_FILES = ("trials.csv", "seats.csv")  # in a study's folder, which recompute_study.py reads


class Match:
    """A match's files as gathered ({"export/1.json": bytes, ...}) and where they came from:
    `origin`, the platform's address of the match or the folder of a saved copy; `about`, the
    copy's saved.json (None when downloaded, or saved without one)."""

    def __init__(self, match_id, files, origin, about=None, folder=None):
        self.match_id = match_id
        self.files = files
        self.origin = origin
        self.about = about
        self.folder = folder
        self.fetch = None  # a download's: (name, what) -> bytes, asked as the reader reads

    def page(self, number):
        """(raw, the name an error gives it) of export page `number`."""
        if number == 1 and "playing.json" in self.files:
            raw, name = self.file("playing.json", "export page 1")
            kept = " (a 409 kept as a copy by an earlier version: move it aside)" * bool(self.about)
            raise Unreadable(name + ": " + failure_text(409, raw, "", "match") + kept)
        name = "export/%d.json" % number
        if self.folder and self.about is None and name not in self.files:
            count = parse_json(self.files["export/1.json"], "export/1.json").get("pageCount")
            raise Unreadable(
                "incomplete copy (no saved.json): pages 1-%d of %s present, not %s"
                % (number - 1, count, name)
            )
        return self.file(name, "export page %d" % number)

    def report(self, version):
        return self.file(*report_file(version))

    def address(self, version):
        """The report read under `version`: its address (a saved copy's, as saved.json names it),
        or its file in a copy laid out as the platform serves it."""
        if self.folder and self.about is None:
            return join(self.folder, "report", version + ".json")
        return (self.about or {}).get("address", self.origin) + "/report?rubric=" + version

    def file(self, name, what):
        if self.folder is None:  # a download's: a file not gathered yet, asked for now
            return (self.files[name] if name in self.files else self.fetch(name, what)), what
        path = join(self.folder, *name.split("/"))
        if name in self.files:
            return self.files[name], path
        if self.about is None:
            raise Unreadable("incomplete copy (no saved.json): every page present, no %s" % name)
        raise Unreadable("%s: not in this copy (saved.json lists no such file)" % path)

    def line(self, save=None):
        """The line that names a saved copy before its audit; under --save DIR, one kept there
        before, read instead of the platform."""
        if self.about is None:
            return "a copy laid out as the platform serves it, no saved.json to verify its files by"
        if save:
            return (
                "%s: the saved copy of %s, kept there before, audited instead of the platform "
                "(every file verified); to audit the platform now, name another DIR or leave "
                "out --save" % (self.folder, one_line(self.about["savedAt"]))
            )
        return saved_line(self.about)


def download(net, base, named, match_id, rubrics=(None,), tell=True, whole=False):
    """Gather a match from the platform: export page 1, then every page it announces and the
    report under each of `rubrics` (None: its own), all at once where the copy is to be kept
    `whole`, else each as the reader asks for it, so none past a fault; a match still playing, as
    the platform's 409 (playing.json)."""
    api = base + "/api/matches/" + match_id
    try:
        first = net.get(api + "/export?page=1", "export page 1", named)
    except Unreadable as err:
        if getattr(err, "status", None) != 409 or whole:  # a 409 is no record to keep
            raise
        return Match(match_id, {"playing.json": err.body}, api)
    match = Match(match_id, {"export/1.json": first}, api)
    try:  # the pages page 1 announces, as check_page reads it
        count = check_page(parse_json(first, "export page 1"), 1, None, "export page 1")[
            "pageCount"
        ]
    except Unreadable:  # page 1 is not one the reader takes: it says why, nothing more is asked
        return match
    asks = {"export/%d.json" % n: "/export?page=%d" % n for n in range(2, count + 1)}
    for rubric in rubrics:  # one of RUBRICS: nothing to quote
        asks[report_file(rubric)[0]] = "/report" + ("?rubric=" + rubric if rubric else "")
    sizes = [len(first)]

    def fetch(name, what):
        page = name.startswith("export")
        if tell:  # a page's number and the count, cleared at the report
            progress("%s: page %s/%d" % (match_id, name[7:-5], count) if page else "")
        raw = net.get(api + asks[name], what, named)
        sizes.append(len(raw))
        if sum(sizes) > MAX_COPY_BYTES:
            raise Unreadable(
                "%s: more than %d bytes in all: not a record this script reads"
                % (api, MAX_COPY_BYTES)
            )
        return raw

    match.fetch = fetch
    for number in range(2, count + 1) if whole else ():
        match.files["export/%d.json" % number] = match.page(number)[0]
    for rubric in rubrics if whole else ():
        match.files[report_file(rubric)[0]] = match.report(rubric)[0]
    return match


def report_file(version):
    """The report's file name under a rubric version (None: its own), and its name in an error."""
    if version is None:
        return "report.json", "report"
    return "report/%s.json" % version, "report (rubric %s)" % version


def saved_match(folder, rubric=None):
    """Gather a match from a folder --save wrote: every file its saved.json lists, each checked
    against its sha256 (Altered where one is not as saved); without saved.json, the pages and
    the report (under `rubric`) there, said to be unverified."""
    about, files = read_copy(folder, "match", MATCH_FILE)
    if about is not None and (
        not MATCH_ID.match(about["id"]) or about.get("rubric") not in (None, *RUBRICS)
    ):
        raise Unreadable(
            "%s: id %s or rubric %s is not of its form"
            % (join(folder, SAVED), one_line(about["id"]), one_line(about.get("rubric")))
        )
    pages = join(folder, "export")
    names = ["export/" + n for n in folder_names(pages)] if isdir(pages) else []
    for name in names + [report_file(rubric)[0], "playing.json"] if about is None else ():
        path = join(folder, *name.split("/"))
        if re.fullmatch(MATCH_FILE, name) and lexists(path):
            files[name] = read_file(path, folder)
    return Match(about and about["id"], files, folder, about, folder)


def folder_names(path):
    """The names in a folder, sorted; Unreadable where it cannot be listed."""
    try:
        return sorted(os.listdir(path))
    except OSError as err:
        raise Unreadable("%s: cannot read the folder (%s)" % (path, err.strerror or err))


def folder_holds(path):
    """What a folder holds: "match", "matches" (folders of them), "study", or None."""
    names = set(folder_names(path))
    if names & {"export", "report.json", "report", "playing.json"}:
        return "match"
    if names & set(STUDY_FILES):
        return "study"
    if SAVED in names:
        return "match"  # a copy cut short: read, to say so
    return "matches" if any(map(MATCH_ID.match, names)) else None


# ------------------------------------------------------------------ --against


# ------------------------------------------------------------------ main
EPILOG = """example: python3 recompute.py m_aa6f85fab659 --save copies; and later, offline:
python3 recompute.py copies

A table cell a/b is published/recomputed, shown where the two differ (--all: a row per figure).
--against OLD wants the match's own folder: OLD/<match id> where --save wrote a folder of them.

environment: DAISHI_BASE (as --base); DAISHI_TIMEOUT, seconds a request may take (30);
DAISHI_BUSY, seconds a run waits for a busy platform in all (60)

exit status: 0 every figure matches and every check agrees; 1 a figure differs, a check fails or
(--against) the record changed; 2 a record cannot be read, the platform busy, or a usage error;
130, 143, 129 interrupted (Ctrl-C, SIGTERM, SIGHUP); 141 stdout closed"""


def parse_args(argv):
    parser = Parser(
        "recompute.py",
        epilog=EPILOG,
        formatter_class=Help,
        description="Recompute a daishi.ai match's published scores from its public record.",
    )
    add = parser.add_argument
    add(
        "matches",
        nargs="+",
        metavar="MATCH",
        help="a match id (m_ + 12 hex digits), a match address "
        "(https://daishi.ai/matches/m_...), or a folder of saved copies",
    )
    add(
        "--base",
        metavar="URL",
        help="server to download from (default %s, or $DAISHI_BASE)" % DEFAULT_BASE,
    )
    add("--rubric", choices=RUBRICS, help="read the report under this version")
    add("--save", metavar="DIR", help="keep what was downloaded in DIR/<id>/")
    add("--against", metavar="OLD", help="compare what is read with a copy saved earlier")
    add("--all", action="store_true", help="every figure on its own row")
    add("--json", action="store_true", help="print one JSON document")
    add("--explain", action="store_true", help="how each figure that differs was derived")
    folder_left_out(argv, r"m_[0-9a-f]{12}\Z|https?://")
    args = parser.parse_args(argv)
    Running.explain = args.explain
    args.base, args.named, args.net = settings(args.base)
    args.matches = [t.strip() for t in args.matches]
    if args.save:
        release()  # this file's digest, for saved.json, read before the first request
    return args


def main(argv=None):
    argv = [taken(a) for a in (sys.argv[1:] if argv is None else argv)]  # no password kept
    try:
        args = parse_args(argv)
        old = against_copy(args)
    except Unreadable as err:
        return fail(str(err), "--json" in argv, 1 if isinstance(err, Altered) else 2)
    gc.disable()  # records are trees, with no cycles: collecting while a log loads only rescans
    try:
        return audit_matches(args, old)
    finally:
        gc.enable()


def against_copy(args):
    """--against OLD: the copy it names, whole and verified, of a like kind, or refused."""
    folder = args.against
    if folder is None:
        return
    if not lexists(folder):
        raise Usage("--against %s: no such folder" % folder)
    kind = isdir(folder) and folder_holds(folder)
    if kind == "study":
        raise Usage("--against: " + study_folder(folder, text(folder)))
    if kind != "match":
        raise Usage(
            "--against compares one match with one saved copy (a folder holding export/ "
            "and report.json): %s" % text(folder)
        )
    if not lexists(join(folder, SAVED)):  # nothing to check its files by
        raise Usage("--against %s: no saved.json, so not a copy --save wrote" % folder)
    try:
        old = saved_match(folder)
    except Altered as err:
        raise Altered("--against %s: %s" % (folder, err))
    except Unreadable as err:
        raise Unreadable("--against: %s" % err)
    rubric = old.about["rubric"]
    if args.rubric not in (None, rubric):
        raise Usage(
            "--against %s holds the report under %s: compare like with like, with "
            "--rubric %s or none" % (folder, rubric or "its own rubric", rubric or "left out")
        )
    args.rubric = rubric
    return old


def audit_matches(args, old):
    """Each match the arguments name, once however often it is named (a download by its server
    and id, a copy by its folder); with --against, the one match against its saved copy."""
    results = []
    failures = []
    sources = []
    for target in args.matches:
        try:
            sources += sources_for(target, args)
        except Unreadable as err:
            failures.append(failure(target, err))
    batch = len(sources) + len(failures) > 1
    if old and batch:
        matches = " ".join(text(t) for t in args.matches)
        return fail(
            str(Usage("--against compares one match with one saved copy: " + matches)), args.json
        )
    count = 0
    changes = []
    seen = set()
    for label, gather, key in sources:
        if key in seen:
            continue
        seen.add(key)
        kept = None
        try:
            match = gather()
            try:
                rubric = args.rubric or (match.about or {}).get("rubric")  # else its copy's
                result = dict(audit(*read_match(match, rubric)), source=label)
                if rubric:  # the report read under ?rubric=V, named even where V is its own
                    result["report"] = match.address(rubric)
                if match.folder:  # a copy's line names its proxy, as its saved.json says it
                    result["copy"] = match.line(args.save)
                elif through(match.origin):
                    result["proxy"] = through(match.origin)
            finally:
                kept = save(args, match)
            if kept:
                result["kept"] = kept
            if old:
                if old.match_id != result["matchId"]:
                    raise Usage(
                        "--against: %s is a copy of %s, not of %s"
                        % (args.against, old.match_id, result["matchId"])
                    )
                count, changes = copy_changes(old.files, match.files)
                result["exit"] = max(result["exit"], 1 if count else 0)
            results.append(result)
        except Unreadable as err:
            if args.save and isinstance(key, tuple):  # a download: kept whole, or nothing kept
                err = Unreadable("%s (%s)" % (err, "kept in " + kept if kept else "nothing kept"))
            failures.append(failure(label, err))
    status = max([r["exit"] for r in results] + [f["exit"] for f in failures])
    if args.json and not results and len(failures) == 1:  # the error, as fail() gives one
        return fail(failures[0]["error"], True, status)
    for f in failures:
        say("recompute.py: " + f["error"])
    print_matches(args, results, failures, status, batch, old, count, changes)
    return status


def save(args, match):
    """--save: a downloaded match kept whole in DIR/<id>/, saved.json last."""
    if not args.save or match.folder:
        return
    folder = join(args.save, match.match_id)
    about = {"kind": "match", "id": match.match_id, "address": match.origin, "rubric": args.rubric}
    keep(new_copy(folder), match.files, about, folder)
    return folder


def sources_for(target, args):
    """(label, how to gather it, its key) per match a target names: a saved folder or a folder
    of them, a match id or address."""
    address = ADDRESS.match(target)
    shown_as = text(target)  # as errors print it
    is_folder = isdir(target)
    if STUDY_ADDRESS.match(target):
        raise Usage(
            "%s is a study, not a match: audit it end to end with recompute_study.py %s --matches"
            % (shown_as, shown_as)
        )
    if is_folder and folder_holds(target) == "study":
        raise Usage(study_folder(target, shown_as))
    if is_folder and MATCH_ID.match(target):
        raise Usage(
            "%s names both a match and a folder here: give ./%s for the folder, or move it"
            % (target, target)
        )
    if is_folder:
        return saved_folders(target, args)
    if not address and not MATCH_ID.match(target):
        raise Unreadable(not_a_target(target))
    query = re.search(r"[?&]rubric=([^&#]*)", target)  # a match id holds none
    if query:
        raise Usage(
            "%s: an address's ?rubric= is not read: give --rubric %s"
            % (shown_as, text(query.group(1)))
        )
    if address and args.named == "--base":
        raise Usage(
            "%s: --base names the server for a match id, and an address names its own: "
            "give one or the other" % shown_as
        )
    base, mid, named = (
        (*address.groups(), "the address")
        if address
        else (base_of(args.base, args.named), target, args.named)
    )
    copy = join(args.save or "", mid)
    if args.save and lexists(copy):  # a whole copy kept earlier: read, not downloaded
        if not lexists(join(copy, SAVED)):
            raise Usage(
                "--save: %s holds a copy with no saved.json, not whole: name another DIR "
                "or move it aside" % copy
            )
        return [saved_source(copy, args.save, args)]
    keeps = bool(args.save or args.against)  # a copy kept or compared: gathered whole
    fetch = partial(download, args.net, base.rstrip("/"), named, mid, (args.rubric,), whole=keeps)
    return [(mid, fetch, (base, mid))]


def saved_source(path, folder, args):
    """A saved copy as a source: (its folder, how to read it, its real path)."""
    gather = partial(saved_match, inside(path, folder), args.rubric)
    return path, gather, os.path.realpath(path)


def saved_folders(target, args):
    """A saved match, or each of a folder of them, in name order."""
    if args.save:
        raise Usage(
            "%s: --save keeps what is downloaded, and this is a saved copy: copy the "
            "folder itself to keep it" % text(target)
        )
    kind = folder_holds(target)
    if kind is None:
        raise Unreadable(
            "%s: no saved match here (expected export/1.json and report.json, "
            "or folders of them, as --save writes)" % target
        )
    if kind == "match":
        return [saved_source(target, target, args)]
    paths = [join(target, name) for name in folder_names(target)]
    return [
        saved_source(path, target, args)
        for path in paths
        if isdir(path) and (MATCH_ID.match(os.path.basename(path)) or folder_holds(path) == "match")
    ]


def study_folder(folder, shown_as):
    """What reads a study's folder: recompute_study.py, given the folder --save wrote (with
    --matches where it holds the matches), else its files beside the study's address."""
    names = folder_names(folder)
    if SAVED in names:
        return "%s is a study's copy, not a match: audit it with recompute_study.py %s%s" % (
            shown_as,
            shown_as,
            " --matches" * any(map(MATCH_ID.match, names)),
        )
    files = ["--%s %s" % (n[:-4], text(join(folder, n))) for n in STUDY_FILES if n in names]
    return (
        "%s holds a study's files and no saved.json, not a match: audit them with "
        "recompute_study.py <the study's address> %s" % (shown_as, " ".join(files))
    )


def not_a_target(target):
    """Why an argument names no match, in the words that fix it."""
    lower = target.lower()
    if MATCH_ID.match(lower):
        return "%s is not a match id: the hex digits are lowercase (%s)" % (text(target), lower)
    if target.startswith((os.sep, ".", "~")) or os.sep in target and isdir(os.path.dirname(target)):
        return "%s: no such folder" % text(target)
    return (
        "%s is neither a match id (m_ and 12 lowercase hex digits), nor a match address "
        "(https://daishi.ai/matches/m_...), nor a folder of saved copies" % text(target)
    )


# A batch's last lines: the counts `summary` gives, over every match named.
SUMMARY = (
    "\n%(matches)d matches: %(read)d read, %(notRead)d could not be read; %(seats)d seats\n"
    "Fitness Index reproduced for %(fitnessIndexReproduced)d of %(seats)d seats; "
    "final wealth (published) for %(finalWealthReproduced)d of %(seats)d\n"
    "wealth replay (inventory and structures) reproduced for %(wealthReplayReproduced)d of "
    "%(seats)d seats (%(wealthReplayNotCompared)d not compared)\n"
    "figures same %(figuresSame)d of %(figuresCompared)d; checks agree %(checksAgree)d of "
    "%(checksMade)d"
)


def print_matches(args, results, failures, status, batch, old, count, changes):
    totals = summary(results, failures)
    verdict = match_verdict(results, failures, count, batch)
    if args.json:
        doc = {
            "script": SCRIPT,
            "version": VERSION,
            "exit": status,
            "summary": totals,
            "matches": results,
            "unreadable": failures,
            "verdict": verdict,
        }
        if old:
            doc["against"] = {
                "folder": args.against,
                "savedAt": old.about["savedAt"],
                "count": count,
                "changes": changes,
            }
        return print_json(doc)
    w = sys.stdout.write
    for i, result in enumerate(results):
        w("\n" if i else "")
        if result.get("kept"):
            put(w, "kept in %s" % text(result["kept"]))
        for line in (
            against_lines(args.against, old.about["savedAt"], count, changes) if old else ()
        ):
            put(w, line)
        print_audit(result, sys.stdout, args.all, batch)
    for f in failures:
        if f["exit"] == 1:  # a copy not as saved: nothing else shown
            put(w, "check FAILS: %s" % f["error"])
    if batch:
        lines = (SUMMARY % dict(totals, notRead=len(totals["unreadable"]))).split("\n")
        for line in lines + ["could not be read: %s" % text(f["error"]) for f in failures]:
            put(w, line)  # each fits the terminal
    if results or status == 1:  # nothing read: the error on stderr is the answer
        if args.explain and verdict == verdict_line([]):
            put(w, "nothing differs: nothing to explain")
        print(one_line(verdict, len(verdict)))


def failure(source, err):
    """A match not audited: the error names the source once; a copy not as saved is exit 1."""
    message = str(err)
    return {
        "source": source,
        "exit": 1 if isinstance(err, Altered) else 2,
        "error": message if message.startswith(source) else source + ": " + message,
    }


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


if __name__ == "__main__":
    start(main)
