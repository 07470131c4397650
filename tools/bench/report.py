#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Turn build/bench/results.json into a Markdown table (results.md) and
plots (per-open cost and replace time against rule count, log scale)."""
import json
import os
import shutil
import subprocess
import sys

res = json.load(open(sys.argv[1]))
out = sys.argv[2]
rows = res["rows"]


def ms(cell):
    if cell is None:
        return "n/a"
    if "refused" in cell:
        return "refused by the verifier (%s, after %.0f ms)" % (cell["refused"], cell.get("after_ms", 0))
    return "%.3f (%.3f-%.3f)" % (cell["median"], cell["p10"], cell["p90"])


def ratio(cell):
    if cell is None:
        return "n/a"
    if "refused" in cell:
        return "no program: refused by the verifier"
    return "%.2fx (%.2f-%.2f)" % (cell["median"], cell["p10"], cell["p90"])


def eperm(cell):
    return "n/a" if cell is None else "%d in %d swaps" % (cell["eperm"], cell["swaps"])


lines = []
lines.append("Replace latency, ms: median (p10-p90); devcg in-process also p99")
lines.append("")
lines.append("| rules | devcg_replace() | p99 | `devcg replace` command | compare chain, load + swap | cgroup v1 `a` + list |")
lines.append("| ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    lines.append("| %d | %s | %.3f | %s | %s | %s |" % (
        r["rules"], ms(r["replace_lib_ms"]), r["replace_lib_ms"]["p99"], ms(r["replace_cli_ms"]),
        ms(r.get("chain_ms")), ms(r.get("v1_rewrite_ms"))))
lines.append("")
lines.append("Per-access cost: open()+close() of /dev/null, as a ratio to no program (median of alternated rounds)")
lines.append("")
lines.append("| rules | opens/s, no program | devcg filter | compare chain |")
lines.append("| ---: | ---: | ---: | ---: |")
for r in rows:
    lines.append("| %d | %.0f | %s | %s |" % (r["rules"], r["opens_per_s_none"]["median"],
                                          ratio(r["cost_devcg"]), ratio(r.get("cost_chain"))))
lines.append("")
lines.append("The gap: EPERMs two readers of /dev/urandom and /dev/null saw during swaps between two policies that both allow them")
lines.append("")
lines.append("| rules | cgroup v1 deny-all replay | `devcg replace --v1` | devcg on v2 |")
lines.append("| ---: | ---: | ---: | ---: |")
for r in rows:
    lines.append("| %d | %s | %s | %s |" % (r["rules"], eperm(r.get("eperm_v1_replay")),
                                         eperm(r.get("eperm_devcg_v1")), eperm(r.get("eperm_devcg_v2"))))
lines.append("")
t = res.get("trace_cost")
s = res.get("trace_loop_summary") or {}
fl = res.get("trace_flood_summary") or {}


def lost_of(x):
    return x.get("lost", {}).get("ringbuf", 0) + x.get("lost", {}).get("read", 0)


lines.append("Trace cost: the open loop with `devcg trace` running, as a ratio to without: %s, "
             "%d events lost. In a flood of refused opens (a deny-all filter under the loop) it "
             "handled %.0f events/s and lost %d."
             % (ratio(t), lost_of(s), fl.get("events_per_second", 0), lost_of(fl)))
lines.append("")


def cell(r, k):
    c = r.get(k)
    return c if c and "median" in c else None


# Targets (issue "make bench"), judged plainly.
targets = []
big = [r for r in rows if r["rules"] == 10000]
hundred = [r for r in rows if r["rules"] == 100]
if big:
    c = big[0]["cost_devcg"]["median"]
    targets.append(("devcg filter at most 1.1x no program at 10,000 rules", "%.2fx" % c, c <= 1.1))
    c = big[0]["replace_lib_ms"]["median"]
    targets.append(("in-process replace at most 1 ms at 10,000 rules", "%.3f ms" % c, c <= 1.0))
if hundred:
    c = hundred[0]["replace_lib_ms"]["median"]
    targets.append(("in-process replace at most 0.1 ms at 100 rules", "%.3f ms" % c, c <= 0.1))
zero = all(r["eperm_devcg_v2"]["eperm"] == 0 and (r.get("eperm_devcg_v1") or {"eperm": 0})["eperm"] == 0
           for r in rows)
targets.append(("zero EPERMs for devcg in every row", "yes" if zero else "no", zero))
if t:
    targets.append(("trace slows the open loop by at most 5%", "%.2fx" % t["median"], t["median"] <= 1.05))
targets.append(("trace loses no events (open loop)", "%d lost" % lost_of(s), lost_of(s) == 0))
lines.append("| target | measured | met |")
lines.append("| --- | --- | --- |")
for name, got, ok in targets:
    lines.append("| %s | %s | %s |" % (name, got, "yes" if ok else "**no, missed**"))
lines.append("")
if res.get("quick"):
    lines.append("(quick run: fewer repetitions)")

md = "\n".join(lines)
open(os.path.join(out, "results.md"), "w").write(md + "\n")
print(md)

# Plots, with gnuplot where it is installed.
if shutil.which("gnuplot"):
    with open(os.path.join(out, "cost.dat"), "w") as f:
        for r in rows:
            f.write("%d %s %s\n" % (r["rules"], r["cost_devcg"]["median"],
                                    cell(r, "cost_chain")["median"] if cell(r, "cost_chain") else "NaN"))
    with open(os.path.join(out, "replace.dat"), "w") as f:
        for r in rows:
            f.write("%d %s %s %s %s\n" % (
                r["rules"], r["replace_lib_ms"]["median"], r["replace_cli_ms"]["median"],
                cell(r, "chain_ms")["median"] if cell(r, "chain_ms") else "NaN",
                cell(r, "v1_rewrite_ms")["median"] if cell(r, "v1_rewrite_ms") else "NaN"))
    subprocess.run(["gnuplot", "-e", "dir='%s'" % out, os.path.join(os.path.dirname(__file__), "plot.gp")],
                   check=False)
    print("\nplots: %s/cost.png %s/replace.png" % (out, out))
