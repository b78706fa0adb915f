# ncu_summary.awk: the ncu block of a bench summary, the same lines for every chapter so that two chapters'
# kernels can be compared line by line (called by ncu_summary in bench-lib.sh).
#
#   { metric|unit|value lines of the kernel (ncu_metrics.awk), then its stall metrics prefixed "stall:" } |
#   awk -f common/scripts/csv.awk -f common/scripts/ncu_summary.awk -v bytes="MODEL_R|COUNTED_R|MODEL_W|COUNTED_W"
#
# bytes: the report row's model and counted bytes (empty fields print '-'). A metric ncu did not report
# prints '-'; a line whose metrics are all missing is left out.

BEGIN { FS = "|"; split(bytes, b, "|") }
/^stall:/ { sub(/^stall:/, ""); stall[$1] = $3; next }
{ v[$1] = $3 }

function has(m) { return (m in v) && v[m] != "" }
function val(m) { return has(m) ? v[m] : "-" }
function pct(m) { return has(m) ? v[m] "%" : "-" }
function num(x) { return x == "" || x == "-" ? "-" : with_commas(x) }
function ratio(a, c) { return a == "" || a == "-" || c == "" || c == "-" || c + 0 == 0 ? "-" : sprintf("%.4f", a / c) }

END {
    if (has("gpu__time_duration.sum")) printf "  kernel time %.3f ms\n", v["gpu__time_duration.sum"] / 1e6
    dr = val("dram__bytes_read.sum"); dw = val("dram__bytes_write.sum")
    gr = val("l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"); gw = val("l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum")
    printf "  %-6s %16s %16s %16s %16s %10s %10s\n", "bytes", "model", "counted", "l1tex global", "DRAM",
        "l1tex/cnt", "DRAM/model"
    printf "  %-6s %16s %16s %16s %16s %10s %10s\n", "read", num(b[1]), num(b[2]), num(gr), num(dr), ratio(gr, b[2]),
        ratio(dr, b[1])
    printf "  %-6s %16s %16s %16s %16s %10s %10s\n", "write", num(b[3]), num(b[4]), num(gw), num(dw), ratio(gw, b[4]),
        ratio(dw, b[3])

    q = val("smsp__sass_inst_executed_op_shared_ld.sum"); l = has("smsp__inst_executed_op_ldsm.sum") ? v["smsp__inst_executed_op_ldsm.sum"] : 0
    w = val("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    c = val("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
    if (q != "-" || w != "-" || c != "-") {
        printf "  shared loads: requests %s (+ ldsm %s), wavefronts %s, bank conflicts %s\n", num(q), num(l), num(w), num(c)
        if (w != "-" && w > 0 && q != "-" && q + l > 0 && c != "-")
            printf "  conflict rate %.2f%% (conflicts / wavefronts), %.2f-way (wavefronts / requests)\n",
                100 * c / w, w / (q + l)
    }
    if (has("launch__registers_per_thread"))
        printf "  registers/thread %s; blocks/SM limited by registers %s, shared memory %s, warps %s\n",
            val("launch__registers_per_thread"), val("launch__occupancy_limit_registers"),
            val("launch__occupancy_limit_shared_mem"), val("launch__occupancy_limit_warps")
    if (has("sm__warps_active.avg.pct_of_peak_sustained_active"))
        printf "  occupancy: theoretical %s, achieved %s; DRAM throughput %s of peak\n",
            pct("sm__maximum_warps_per_active_cycle_pct"), pct("sm__warps_active.avg.pct_of_peak_sustained_active"),
            pct("dram__throughput.avg.pct_of_peak_sustained_elapsed")
    mio = "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"
    m = has(mio) ? v[mio] : ((mio in stall) ? stall[mio] : "")
    lat = val("smsp__average_warp_latency_per_inst_issued.ratio")
    if (m != "" && lat != "-" && lat > 0)
        printf "  MIO throttle: %.2f of %.2f cycles per issued instruction (%.1f%%)\n", m, lat, 100 * m / lat
    n = 0
    for (s in stall) {
        name = s
        if (!sub(/^smsp__average_warps_issue_stalled_/, "", name) || !sub(/_per_issue_active\.ratio$/, "", name)) continue
        if (stall[s] + 0 <= 0.005) continue
        # insertion sort, largest first
        for (i = ++n; i > 1 && sv[i - 1] < stall[s] + 0; i--) { sv[i] = sv[i - 1]; sn[i] = sn[i - 1] }
        sv[i] = stall[s] + 0; sn[i] = name
    }
    if (n > 0) {
        print "  stall reasons, cycles per issued instruction (largest first):"
        for (i = 1; i <= n && i <= 8; i++) printf "    %-22s %6.2f\n", sn[i], sv[i]
    }
}
