# Plot of the Table 4 replay (bench/serve_replay.mjs): end-to-end time
# reduction of `--serve` vs observe-only per trace and turn shape, with the
# paper's goals. The numbers are the ones recorded in docs/PROXY_SERVE.md
# (edit both together: observe s, serve s, paper goal %).
# Use: gnuplot bench/serve_replay.gp   (writes docs/img/serve_replay.png)
set terminal pngcairo size 900,420 font ",10"
set output 'docs/img/serve_replay.png'
set title "toolcache proxy --serve: end-to-end time saved on whole traces (model 50 ms/call, tool latency x0.1)"
set ylabel "reduction vs observe-only (%)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key top right
set yrange [0:50]
set grid ytics
$data << EOD
"movie\n1 call/turn\n(500 sessions)" 590.38 364.93 34
"ParallelQA\n1 call/turn\n(113 sessions)" 93.74 69.13 23
"movie\nparallel calls\n(500 sessions)" 116.64 113.87 34
"ParallelQA\nparallel calls\n(113 sessions)" 49.60 40.36 23
EOD
set bmargin 5
plot $data using (100*(1-$3/$2)):xtic(1) title "serve (measured)", \
     '' using 4 title "paper's Table 4 goal"
