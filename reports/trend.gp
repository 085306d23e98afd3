# reports/trend.gp - gnuplot template of `hybench trend`: one SVG per (op, backend), one line per case.
#
# hybench sets these variables, then `load`s this file (see harness/trend.c):
#   datafile    the .dat file: one block per case (blocks separated by two blank lines); each block
#               starts with a quoted title line, then rows "run_index median_seconds flag run_id";
#               flag 1 = step judged a regression by `hybench compare` (red triangle),
#               -1 = improvement (green), 2 = status failure (wrong/crashed/lost; black cross)
#   outfile     the .svg to write           plottitle   the title
#   ncases      number of blocks            nruns       number of runs on the x axis
#   ylabel_text y-axis label                xtics_cmd   a `set xtics (...)` command (dates, commits)
# Edit freely: sizes, colours and fonts here apply to every trend plot.

set terminal svg size 1200,620 dynamic enhanced font "sans,10" background rgb "white"
set output outfile
set title plottitle noenhanced
set xlabel "nightly run (date, commit)"
set ylabel ylabel_text
set logscale y
set format y "%.1s %cs"
set grid xtics ytics mytics lc rgb "#e0e0e0"
set key outside right top vertical font ",8" noenhanced spacing 0.9
set key autotitle columnheader
set datafile missing "NaN"
eval xtics_cmd
set xrange [-0.5:nruns-0.5]
set bmargin 6
set style line 100 pt 9 ps 1.6 lc rgb "#d62728"
set style line 101 pt 11 ps 1.4 lc rgb "#2ca02c"
set style line 102 pt 2 ps 1.6 lw 2 lc rgb "black"

plot for [i=0:ncases-1] datafile index i using 1:2 with linespoints pt 7 ps 0.45 lw 1.2, \
     for [i=0:ncases-1] datafile index i using 1:($3==1 ? $2 : NaN) with points ls 100 notitle, \
     for [i=0:ncases-1] datafile index i using 1:($3==-1 ? $2 : NaN) with points ls 101 notitle, \
     for [i=0:ncases-1] datafile index i using 1:($3==2 ? $2 : NaN) with points ls 102 notitle, \
     NaN with points ls 100 title "regression step", \
     NaN with points ls 101 title "improvement step", \
     NaN with points ls 102 title "status failure"
