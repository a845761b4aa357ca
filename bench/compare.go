package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Side is one server's results in one configuration.
type Side struct {
	Label   string
	Results []Result
	Meta    *Meta
	// Runs counts the repetitions behind each result, by key (1 unless a
	// key appeared in several reports; see LoadSide).
	Runs map[string]int
}

// LoadSide reads every *.json report in dir (in name order) into one side.
// A key measured in several reports (compare.sh --repeat) is reduced to
// its median run (medianRun).
func LoadSide(dir, label string) (Side, error) {
	s := Side{Label: label, Runs: map[string]int{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return s, err
	}
	if len(files) == 0 {
		return s, fmt.Errorf("no *.json reports in %s", dir)
	}
	sort.Strings(files)
	idx := map[string]int{}
	var runs [][]Result
	for _, f := range files {
		rep, err := ReadReport(f)
		if err != nil {
			return s, err
		}
		if s.Meta == nil {
			m := rep.Meta
			s.Meta = &m
		}
		for _, r := range rep.Results {
			i, ok := idx[r.Key()]
			if !ok {
				i = len(runs)
				idx[r.Key()] = i
				runs = append(runs, nil)
			}
			runs[i] = append(runs[i], r)
		}
	}
	for _, rs := range runs {
		s.Results = append(s.Results, medianRun(rs))
		s.Runs[rs[0].Key()] = len(rs)
	}
	return s, nil
}

// medianRun picks the median of repeated runs of one key: by throughput,
// or by p50 latency where that is the measure (fan-out's time to the last
// notification, expiry's delay) or there is no throughput, the lower
// throughput or the higher latency of the two middle runs when there is
// an even number. The whole run is kept (its p99 with its throughput), and
// its error count becomes the sum over all runs, so that a failure in any
// repetition still shows. A run that measured nothing (no operation
// completed) is left out of the pick, whatever the order of the files.
func medianRun(rs []Result) Result {
	if len(rs) == 1 {
		return rs[0]
	}
	w := rs[0].Workload
	byOps := w != Fanout && w != Expiry && slices.ContainsFunc(rs, func(r Result) bool { return r.OpsPerSec > 0 })
	sorted := slices.DeleteFunc(slices.Clone(rs), func(r Result) bool {
		if byOps {
			return r.OpsPerSec <= 0
		}
		return r.Latency.Count == 0 && r.Latency.P50 == 0
	})
	if len(sorted) == 0 {
		sorted = slices.Clone(rs)
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if byOps {
			return sorted[i].OpsPerSec < sorted[j].OpsPerSec
		}
		return sorted[i].Latency.P50 > sorted[j].Latency.P50
	})
	m := sorted[(len(sorted)-1)/2]
	m.Errors = 0
	m.ErrorSamples = nil
	for _, r := range rs {
		m.Errors += r.Errors
		m.ErrorSamples = append(m.ErrorSamples, r.ErrorSamples...)
	}
	if len(m.ErrorSamples) > maxErrorSamples {
		m.ErrorSamples = m.ErrorSamples[:maxErrorSamples]
	}
	return m
}

// Row compares one run of the two sides. Ratios are candidate/baseline
// (0 when undefined).
type Row struct {
	Config        string  `json:"config"`
	Key           string  `json:"key"`
	Workload      string  `json:"workload"`
	Op            string  `json:"op"`
	Param         string  `json:"param"`
	N             int     `json:"n"`
	BaseOpsPerSec float64 `json:"baseline_ops_per_sec"`
	CandOpsPerSec float64 `json:"candidate_ops_per_sec"`
	OpsRatio      float64 `json:"ops_ratio"`
	BaseP50       float64 `json:"baseline_p50_ms"`
	CandP50       float64 `json:"candidate_p50_ms"`
	P50Ratio      float64 `json:"p50_ratio"`
	BaseP99       float64 `json:"baseline_p99_ms"`
	CandP99       float64 `json:"candidate_p99_ms"`
	P99Ratio      float64 `json:"p99_ratio"`
	// The servers' CPU per operation, in microseconds (0: not counted).
	BaseCPUPerOp float64 `json:"baseline_cpu_us_per_op,omitempty"`
	CandCPUPerOp float64 `json:"candidate_cpu_us_per_op,omitempty"`
	CPURatio     float64 `json:"cpu_per_op_ratio,omitempty"`
	BaseErrors   int64   `json:"baseline_errors"`
	CandErrors   int64   `json:"candidate_errors"`
	// Scale: server RSS growth per znode.
	BaseRSSPerZnode float64 `json:"baseline_rss_per_znode_bytes,omitempty"`
	CandRSSPerZnode float64 `json:"candidate_rss_per_znode_bytes,omitempty"`
	RSSRatio        float64 `json:"rss_ratio,omitempty"`
	// The anonymous (heap) part of that growth.
	BasePeakPerZnode float64 `json:"baseline_peak_rss_per_znode_bytes,omitempty"`
	CandPeakPerZnode float64 `json:"candidate_peak_rss_per_znode_bytes,omitempty"`
	BaseAnonPerZnode float64 `json:"baseline_anon_per_znode_bytes,omitempty"`
	CandAnonPerZnode float64 `json:"candidate_anon_per_znode_bytes,omitempty"`
	// Target is the goal this row is held to ("" if none); Met says
	// whether it was reached.
	Target string `json:"target,omitempty"`
	Met    *bool  `json:"met,omitempty"`
	Note   string `json:"note,omitempty"`
	// Runs is the number of repetitions each side's figures are the
	// median of (0 when each side ran once).
	Runs int `json:"runs,omitempty"`

	base, cand *Result
}

// Comparison is one configuration's rows.
type Comparison struct {
	Config    string `json:"config"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	Rows      []Row  `json:"rows"`
}

// Compare pairs the two sides' results by key, in the baseline's order
// (then any the candidate alone has).
func Compare(config string, base, cand Side) Comparison {
	c := Comparison{Config: config, Baseline: base.Label, Candidate: cand.Label}
	candBy := map[string]*Result{}
	for i := range cand.Results {
		candBy[cand.Results[i].Key()] = &cand.Results[i]
	}
	seen := map[string]bool{}
	for i := range base.Results {
		b := &base.Results[i]
		seen[b.Key()] = true
		c.Rows = append(c.Rows, makeRow(config, b, candBy[b.Key()]))
	}
	for i := range cand.Results {
		if r := &cand.Results[i]; !seen[r.Key()] {
			c.Rows = append(c.Rows, makeRow(config, nil, r))
		}
	}
	for i := range c.Rows {
		c.Rows[i].noteRuns(base.Runs[c.Rows[i].Key], cand.Runs[c.Rows[i].Key])
	}
	// Workloads in AllWorkloads order, then by parameter; within those,
	// as the reports list them (write's create before its set).
	order := func(w string) int {
		for i, a := range AllWorkloads {
			if a == w {
				return i
			}
		}
		return len(AllWorkloads)
	}
	sort.SliceStable(c.Rows, func(i, j int) bool {
		a, b := c.Rows[i], c.Rows[j]
		if oa, ob := order(a.Workload), order(b.Workload); oa != ob {
			return oa < ob
		}
		return a.N < b.N
	})
	return c
}

func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

func makeRow(config string, b, c *Result) Row {
	ref := b
	if ref == nil {
		ref = c
	}
	row := Row{Config: config, Key: ref.Key(), Workload: ref.Workload, Op: ref.Op, Param: ref.Param, N: ref.N,
		base: b, cand: c}
	if b != nil {
		row.BaseOpsPerSec, row.BaseP50, row.BaseP99, row.BaseErrors = b.OpsPerSec, b.Latency.P50, b.Latency.P99, b.Errors
		row.BaseCPUPerOp = b.ServerCPUPerOp
		row.BaseRSSPerZnode = b.Extra["rss_per_znode_bytes"]
		row.BaseAnonPerZnode = b.Extra["rss_anon_per_znode_bytes"]
		row.BasePeakPerZnode = b.Extra["rss_peak_per_znode_bytes"]
	}
	if c != nil {
		row.CandOpsPerSec, row.CandP50, row.CandP99, row.CandErrors = c.OpsPerSec, c.Latency.P50, c.Latency.P99, c.Errors
		row.CandCPUPerOp = c.ServerCPUPerOp
		row.CandRSSPerZnode = c.Extra["rss_per_znode_bytes"]
		row.CandAnonPerZnode = c.Extra["rss_anon_per_znode_bytes"]
		row.CandPeakPerZnode = c.Extra["rss_peak_per_znode_bytes"]
	}
	row.OpsRatio = ratio(row.CandOpsPerSec, row.BaseOpsPerSec)
	row.P50Ratio = ratio(row.CandP50, row.BaseP50)
	row.P99Ratio = ratio(row.CandP99, row.BaseP99)
	row.RSSRatio = ratio(row.CandRSSPerZnode, row.BaseRSSPerZnode)
	row.CPURatio = ratio(row.CandCPUPerOp, row.BaseCPUPerOp)
	switch {
	case b == nil:
		row.Note = "baseline missing"
	case c == nil:
		row.Note = "candidate missing"
	case row.BaseErrors > 0 || row.CandErrors > 0:
		row.Note = fmt.Sprintf("errors: %d vs %d", row.BaseErrors, row.CandErrors)
	}
	row.setTarget()
	return row
}

// noteRuns records that the row's figures are medians of repeated runs.
func (row *Row) noteRuns(base, cand int) {
	n := max(base, cand)
	if n <= 1 {
		return
	}
	row.Runs = n
	runs := fmt.Sprintf("median of %d runs", n)
	if base != cand {
		runs = fmt.Sprintf("median of %d and %d runs", base, cand)
	}
	if row.Note != "" {
		runs = row.Note + "; " + runs
	}
	row.Note = runs
}

// setTarget applies issue #9's goals.
func (row *Row) setTarget() {
	met := func(ok bool) {
		// Errors on either side void the comparison: a disturbed
		// baseline run would flatter the ratio.
		ok = ok && row.base != nil && row.cand != nil && row.CandErrors == 0 && row.BaseErrors == 0
		row.Met = &ok
	}
	switch row.Workload {
	case Write, Read, Mixed:
		if row.N == 16 || row.N == 64 {
			row.Target = "ops >= 1.5x, p99 <= 1x"
			met(row.OpsRatio >= 1.5 && row.P99Ratio > 0 && row.P99Ratio <= 1)
		}
	case LockFair:
		if row.N == 50 || row.N == 200 {
			row.Target = "hand-offs >= 1.5x"
			met(row.OpsRatio >= 1.5)
		}
	case Fanout:
		if row.N == 1000 {
			row.Target = "last notification <= 0.5x"
			met(row.P50Ratio > 0 && row.P50Ratio <= 0.5)
		}
	case Scale:
		if row.BaseRSSPerZnode > 0 || row.CandRSSPerZnode > 0 {
			row.Target = "RSS/znode <= 0.3x"
			met(row.RSSRatio > 0 && row.RSSRatio <= 0.3)
		}
	case Expiry:
		row.Target = "all in [T, T+2 ticks]"
		ok := row.cand != nil && row.cand.Extra["in_bounds"] == float64(row.N)
		met(ok)
	}
}

// WriteCompareText renders comparisons as aligned text tables.
func WriteCompareText(w io.Writer, cs []Comparison) error {
	return writeCompare(w, cs, false)
}

// WriteCompareMarkdown renders comparisons as Markdown tables.
func WriteCompareMarkdown(w io.Writer, cs []Comparison) error {
	return writeCompare(w, cs, true)
}

func writeCompare(w io.Writer, cs []Comparison, md bool) error {
	total, met := 0, 0
	for ci, c := range cs {
		if ci > 0 {
			fmt.Fprintln(w)
		}
		b, p := c.Baseline, c.Candidate
		if md {
			fmt.Fprintf(w, "**%s** (ratios are %s/%s)\n\n", c.Config, p, b)
		} else {
			fmt.Fprintf(w, "== %s (ratios are %s/%s)\n", c.Config, p, b)
		}
		head := []string{"workload", "param", b + " ops/s", p + " ops/s", "ops ×",
			b + " p50", p + " p50", b + " p99", p + " p99", "p99 ×", "target", "met"}
		withCPU := c.hasCPU()
		if withCPU {
			head = slices.Insert(head, 10, b+" CPU/op", p+" CPU/op", "CPU/op ×")
		}
		var rows [][]string
		var extra []string
		for _, r := range c.Rows {
			mark := ""
			if r.Met != nil {
				total++
				if *r.Met {
					met++
					mark = "yes"
				} else {
					mark = "NO"
				}
			}
			target := r.Target
			opsRatio, p99Ratio := fmtRatio(r.OpsRatio), fmtRatio(r.P99Ratio)
			if r.Workload == Expiry {
				opsRatio = "-"
			}
			switch r.Workload {
			case Fanout:
				// The goal is on the time to the last notification (p50 of rounds).
				if target != "" {
					target += fmt.Sprintf(" (p50 %s)", fmtRatio(r.P50Ratio))
				}
			case Scale:
				if r.Target != "" {
					line := fmt.Sprintf("memory at %d znodes (server RSS growth): %s %.0f B/znode, %s %.0f B/znode: %s (target <= 0.30×: %s)",
						r.N, b, r.BaseRSSPerZnode, p, r.CandRSSPerZnode, fmtRatio(r.RSSRatio), mark)
					if r.BaseAnonPerZnode != 0 || r.CandAnonPerZnode != 0 {
						line += fmt.Sprintf("; of which anonymous (heap): %s %.0f, %s %.0f B/znode",
							b, r.BaseAnonPerZnode, p, r.CandAnonPerZnode)
					}
					if r.BasePeakPerZnode != 0 || r.CandPeakPerZnode != 0 {
						line += fmt.Sprintf("; peak right after the creates: %s %.0f, %s %.0f B/znode (%s)",
							b, r.BasePeakPerZnode, p, r.CandPeakPerZnode, fmtRatio(ratio(r.CandPeakPerZnode, r.BasePeakPerZnode)))
					}
					extra = append(extra, line)
					target += fmt.Sprintf(" (%s)", fmtRatio(r.RSSRatio))
				}
			case Expiry:
				extra = append(extra, expiryLine(b, r.base)+"; "+expiryLine(p, r.cand))
			}
			if r.Note != "" {
				if target != "" {
					target += "; "
				}
				target += r.Note
			}
			cells := []string{
				r.Workload + "/" + r.Op, fmt.Sprintf("%s=%d", r.Param, r.N),
				fmtRate(r.BaseOpsPerSec), fmtRate(r.CandOpsPerSec), opsRatio,
				fmtMs(r.BaseP50), fmtMs(r.CandP50), fmtMs(r.BaseP99), fmtMs(r.CandP99), p99Ratio,
				target, mark,
			}
			if withCPU {
				cells = slices.Insert(cells, 10, fmtMs(r.BaseCPUPerOp/1000), fmtMs(r.CandCPUPerOp/1000), fmtRatio(r.CPURatio))
			}
			rows = append(rows, cells)
		}
		if err := writeGrid(w, head, rows, md); err != nil {
			return err
		}
		if len(extra) > 0 {
			fmt.Fprintln(w)
			for _, e := range extra {
				if md {
					fmt.Fprintf(w, "- %s\n", e)
				} else {
					fmt.Fprintf(w, "  %s\n", e)
				}
			}
		}
	}
	if total > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Targets met: %d of %d\n", met, total)
	}
	return nil
}

// hasCPU reports whether any row carries the servers' CPU per operation.
func (c Comparison) hasCPU() bool {
	for _, r := range c.Rows {
		if r.BaseCPUPerOp > 0 || r.CandCPUPerOp > 0 {
			return true
		}
	}
	return false
}

func expiryLine(label string, r *Result) string {
	if r == nil || r.Extra == nil {
		return label + ": no result"
	}
	x := r.Extra
	return fmt.Sprintf("%s expiry (T=%gs, tick %gs): delay after last contact %.2f-%.2f T (median %.2f), %.0f of %d in [T, T+2 ticks]",
		label, x["timeout_ms"]/1000, x["tick_ms"]/1000, x["ratio_min"], x["ratio_max"], x["ratio_p50"], x["in_bounds"], r.N)
}

func fmtRatio(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", v)
}

func writeGrid(w io.Writer, head []string, rows [][]string, md bool) error {
	if md {
		fmt.Fprintf(w, "| %s |\n", strings.Join(head, " | "))
		seps := make([]string, len(head))
		for i := range seps {
			seps[i] = "---"
			if i >= 2 && i < len(head)-2 {
				seps[i] = "---:"
			}
		}
		fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(head, "\t")))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// CompareDirs compares DIR/<baseline>/*.json with DIR/<candidate>/*.json
// for every configuration directory given; the configuration's name is the
// directory's base name.
func CompareDirs(dirs []string, baseline, candidate string) ([]Comparison, error) {
	var out []Comparison
	for _, d := range dirs {
		b, err := LoadSide(filepath.Join(d, baseline), baseline)
		if err != nil {
			return nil, err
		}
		c, err := LoadSide(filepath.Join(d, candidate), candidate)
		if err != nil {
			return nil, err
		}
		out = append(out, Compare(filepath.Base(filepath.Clean(d)), b, c))
	}
	return out, nil
}

// WriteCompareJSON writes comparisons to path.
func WriteCompareJSON(path string, cs []Comparison) error {
	b, err := json.MarshalIndent(struct {
		Host        Host         `json:"host"`
		Comparisons []Comparison `json:"comparisons"`
	}{ThisHost(), cs}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
