package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable renders results as an aligned text table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tPARAM\tOPS\tOPS/S\tP50\tP99\tP99.9\tMAX\tERRORS\tNOTES")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s=%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
			r.Name(), r.Param, r.N, r.Ops, fmtRate(r.OpsPerSec),
			fmtMs(r.Latency.P50), fmtMs(r.Latency.P99), fmtMs(r.Latency.P999), fmtMs(r.Latency.Max),
			r.Errors, notes(r))
	}
	return tw.Flush()
}

// summaryLine is the one-line form printed as each run finishes.
func summaryLine(r Result) string {
	s := fmt.Sprintf("%s ops/s  p50 %s  p99 %s  p99.9 %s  errors %d",
		fmtRate(r.OpsPerSec), fmtMs(r.Latency.P50), fmtMs(r.Latency.P99), fmtMs(r.Latency.P999), r.Errors)
	if n := notes(r); n != "" {
		s += "  (" + n + ")"
	}
	return s
}

// notes are the workload-specific numbers of a result.
func notes(r Result) string {
	var parts []string
	x := r.Extra
	switch r.Workload {
	case Mixed:
		if x != nil {
			parts = append(parts, fmt.Sprintf("get p99 %s, set p99 %s", fmtMs(x["get_p99_ms"]), fmtMs(x["set_p99_ms"])))
		}
	case Fanout:
		if x != nil {
			parts = append(parts, fmt.Sprintf("last notification; %.0f rounds, first p50 %s, %.1fs to connect",
				x["rounds"], fmtMs(x["first_p50_ms"]), x["connect_seconds"]))
		}
	case Expiry:
		if x != nil && x["timeout_ms"] > 0 {
			T := x["timeout_ms"] / 1000
			tick := x["tick_ms"] / 1000
			parts = append(parts, fmt.Sprintf("T=%gs: %.2f-%.2f T, %.0f/%d in [T, T+2 ticks]",
				T, x["ratio_min"], x["ratio_max"], x["in_bounds"], r.N))
			if x["early"] > 0 || x["late"] > 0 {
				parts = append(parts, fmt.Sprintf("%.0f early, %.0f late (tick %gs)", x["early"], x["late"], tick))
			}
		}
	case Scale:
		if x != nil {
			if v, ok := x["rss_per_znode_bytes"]; ok {
				parts = append(parts, fmt.Sprintf("RSS +%.0f B/znode (%s -> %s", v,
					fmtBytes(x["rss_before_bytes"]), fmtBytes(x["rss_after_bytes"])))
				if a, ok := x["rss_anon_per_znode_bytes"]; ok {
					parts[len(parts)-1] += fmt.Sprintf("; anon %+.0f, file %+.0f B/znode", a, x["rss_file_per_znode_bytes"])
				}
				if pk, ok := x["rss_peak_per_znode_bytes"]; ok {
					parts[len(parts)-1] += fmt.Sprintf("; peak %+.0f B/znode", pk)
				}
				parts[len(parts)-1] += ")"
			}
		}
	case LockFair, LockHerd:
		parts = append(parts, "hand-offs; release -> next acquire")
	}
	if r.ServerCPUPerOp > 0 {
		parts = append(parts, fmt.Sprintf("server CPU %s/op", fmtMs(r.ServerCPUPerOp/1000)))
	}
	if r.ServerRSS > 0 && r.Workload != Scale {
		parts = append(parts, "server RSS "+fmtBytes(float64(r.ServerRSS)))
	}
	if len(r.ErrorSamples) > 0 {
		parts = append(parts, "error: "+r.ErrorSamples[0])
	}
	return strings.Join(parts, "; ")
}

// fmtMs formats milliseconds with 2-3 significant digits.
func fmtMs(v float64) string {
	switch {
	case v <= 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.0fµs", v*1000)
	case v < 10:
		return fmt.Sprintf("%.2fms", v)
	case v < 100:
		return fmt.Sprintf("%.1fms", v)
	case v < 10000:
		return fmt.Sprintf("%.0fms", v)
	default:
		return fmt.Sprintf("%.1fs", v/1000)
	}
}

func fmtRate(v float64) string {
	if v <= 0 {
		return "-"
	}
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return humanCount(v)
}

func fmtBytes(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.0f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.0f KiB", v/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", v)
	}
}
