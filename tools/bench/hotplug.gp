# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The hot-plug plot of make bench (dir is set by report.py).
set terminal pngcairo size 900,540 noenhanced
set output dir."/hotplug.png"
set title "hot-plug of a GPU-shaped device set (4 nodes, one CDI name): median of alternated rounds"
set ylabel "ms"
set grid ytics
set key top left
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -15
set yrange [0:*]
plot dir."/hotplug.dat" using 2:xtic(1) title "attach", \
     "" using 3 title "detach"
