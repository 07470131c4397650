# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Plots of make bench (dir is set by report.py).
set terminal pngcairo size 900,540 noenhanced
set logscale x
set grid
set key top left
set xlabel "rules"

# (report.py sets has_cost, has_replace, has_scale: a run of some rows
# plots what it measured)
if (has_cost) {
set output dir."/cost.png"
set title "open()+close() of /dev/null, cost as a ratio to no program"
set ylabel "x no program"
plot dir."/cost.dat" using 1:2 with linespoints title "devcg filter", \
     dir."/cost.dat" using 1:3 with linespoints title "compare chain (missing: refused by the verifier)"
}

if (has_replace) {
set output dir."/replace.png"
set title "replacing the policy"
set ylabel "ms (log)"
set logscale y
plot dir."/replace.dat" using 1:2 with linespoints title "devcg_replace() in process", \
     dir."/replace.dat" using 1:3 with linespoints title "devcg replace command", \
     dir."/replace.dat" using 1:4 with linespoints title "compare chain load + swap", \
     dir."/replace.dat" using 1:5 with linespoints title "cgroup v1 'a' + list", \
     dir."/replace.dat" using 1:6 with linespoints title "floor (minimal program, same bytes)"
}
set logscale y

if (has_scale) {
set output dir."/scale.png"
set title "N containers, a 100-rule policy each, with and without sharing"
set xlabel "cgroups"
set ylabel "ms (log)"
set y2label "kernel memory, MiB (log)"
set logscale y2
set ytics nomirror
set y2tics
plot dir."/scale.dat" using 1:2 with linespoints title "install all", \
     dir."/scale.dat" using 1:3 with linespoints title "replace each once", \
     dir."/scale.dat" using 1:4 axes x1y2 with linespoints title "kernel memory (memlock)", \
     dir."/scale-shared.dat" using 1:2 with linespoints title "install all, sharing one program", \
     dir."/scale-shared.dat" using 1:3 with linespoints title "replace each once, sharing", \
     dir."/scale-shared.dat" using 1:4 axes x1y2 with linespoints title "kernel memory, sharing"
}
