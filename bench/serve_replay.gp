# Plot of the Table 4 replay (bench/serve_replay.mjs): end-to-end time per
# trace and turn shape, observe-only vs serve. The numbers are the ones
# recorded in docs/PROXY_SERVE.md (edit both together).
# Use: gnuplot bench/serve_replay.gp   (writes docs/img/serve_replay.png)
set terminal pngcairo size 900,420 font ",10"
set output 'docs/img/serve_replay.png'
set title "toolcache proxy --serve: end-to-end time of whole traces (model 50 ms/call, tool latency x0.1)"
set ylabel "seconds"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key top right
set yrange [0:*]
set grid ytics
$data << EOD
"movie, 1 call/turn (500)" MOVIE_SEQ_OBS MOVIE_SEQ_SRV
"ParallelQA, 1 call/turn (113)" 93.74 69.13
"movie, parallel (500)" 116.64 113.87
"ParallelQA, parallel (113)" 49.60 40.36
EOD
plot $data using 2:xtic(1) title "observe", '' using 3 title "serve"
