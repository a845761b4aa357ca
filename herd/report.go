package herd

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Result is one run: one recipe at one number of contenders.
type Result struct {
	Recipe        Recipe  `json:"recipe"`
	Label         string  `json:"label"`
	HerdProne     bool    `json:"herd_prone"`
	Mode          Mode    `json:"mode"`
	Contenders    int     `json:"contenders"`
	Connections   int     `json:"connections"`
	Writers       int     `json:"writers,omitempty"`
	Readers       int     `json:"readers,omitempty"`
	LeadersKilled bool    `json:"leaders_killed,omitempty"`
	HoldMs        float64 `json:"hold_ms"`

	// Handoffs are the acquisitions a release let in (a reader let in by
	// a writer's release, a writer or a mutex holder by any release);
	// Acquisitions counts every acquisition of the window.
	Handoffs     int     `json:"handoffs"`
	Acquisitions int     `json:"acquisitions"`
	Seconds      float64 `json:"seconds"`
	// HandoffsPerSec includes the hold time.
	HandoffsPerSec float64 `json:"handoffs_per_sec"`

	// Notifications and Requests over the window, from the server when
	// it can tell (source "server"), else counted on the contenders'
	// connections (source "client"); Client* are always the latter.
	// Notifications leave out NotificationsToDeparting: those a killed
	// election leader's session receives as it closes (its own watch on
	// its node fires when the session's ephemeral node is deleted).
	Notifications       int64  `json:"notifications"`
	NotificationsSource string `json:"notifications_source"`
	ClientNotifications int64  `json:"client_notifications"`
	Requests            int64  `json:"requests"`
	RequestsSource      string `json:"requests_source"`
	ClientRequests      int64  `json:"client_requests"`
	// NotificationsToDeparting are delivered to sessions being closed.
	NotificationsToDeparting int64 `json:"notifications_to_departing"`
	// Reconnects are the sessions opened in the window (killed leaders
	// coming back).
	Reconnects int64 `json:"reconnects"`

	NotificationsPerHandoff       float64 `json:"notifications_per_handoff"`
	ClientNotificationsPerHandoff float64 `json:"client_notifications_per_handoff"`
	RequestsPerHandoff            float64 `json:"requests_per_handoff"`

	// Hand-off latency: from a holder's release (the call to Unlock,
	// Resign or Close) to the next acquisition returning.
	LatencyP50Ms  float64 `json:"latency_p50_ms"`
	LatencyP99Ms  float64 `json:"latency_p99_ms"`
	LatencyMeanMs float64 `json:"latency_mean_ms"`
	LatencyMaxMs  float64 `json:"latency_max_ms"`

	// CPU time of the server over the window (see Report.CPUSource).
	HasCPU          bool    `json:"has_cpu"`
	CPUSeconds      float64 `json:"cpu_seconds"`
	CPUPerHandoffMs float64 `json:"cpu_per_handoff_ms"`

	// CPUResolutionMs is the unit CPUSeconds was counted in (10 ms ticks
	// from /proc/PID/stat; 0: finer than a microsecond).
	CPUResolutionMs float64 `json:"cpu_resolution_ms,omitempty"`

	// Measured is false for a run that measured nothing (its figures are
	// zeros, not measurements; Errors says why).
	Measured     bool     `json:"measured"`
	Errors       int      `json:"errors"`
	ErrorSamples []string `json:"error_samples,omitempty"`
	// lostServer: the run ended because the server was gone.
	lostServer bool

	// HandoffLatenciesMs lists every measured hand-off in order.
	HandoffLatenciesMs []float64 `json:"handoff_latencies_ms,omitempty"`
	// Releases lists, for each release of the window, what the
	// contenders' connections received and sent until the next release.
	Releases []ReleaseCounts `json:"releases,omitempty"`
}

// ReleaseCounts is what the contenders' connections saw from one release
// to the next.
type ReleaseCounts struct {
	Notifications int64 `json:"notifications"`
	Requests      int64 `json:"requests"`
}

// Report is a whole `paddock herd` run.
type Report struct {
	Date    string  `json:"date"`
	Seconds float64 `json:"seconds"`
	Server  string  `json:"server"`
	// ServerVersion is what the server says it is (mntr's zk_version;
	// empty when mntr could not be read).
	ServerVersion string       `json:"server_version,omitempty"`
	CPUSource     string       `json:"cpu_source,omitempty"`
	GoVersion     string       `json:"go_version"`
	OS            string       `json:"os"`
	NumCPU        int          `json:"num_cpu"`
	GOMAXPROCS    int          `json:"gomaxprocs"`
	Config        ReportConfig `json:"config"`
	Results       []Result     `json:"results"`
}

// ReportConfig is the configuration recorded with a report.
type ReportConfig struct {
	Recipes     []Recipe `json:"recipes"`
	Contenders  []int    `json:"contenders"`
	Handoffs    int      `json:"handoffs"`
	Warmup      int      `json:"warmup"`
	HoldMs      float64  `json:"hold_ms"`
	Mode        Mode     `json:"mode"`
	Connections int      `json:"connections,omitempty"`
	Readers     float64  `json:"readers"`
	Kill        bool     `json:"kill"`
}

func reportConfig(c *Config) ReportConfig {
	rc := ReportConfig{Recipes: c.Recipes, Contenders: c.Contenders, Handoffs: c.Handoffs, Warmup: c.Warmup,
		HoldMs: ms(c.Hold), Mode: c.Mode, Readers: c.Readers, Kill: c.kills()}
	if c.Mode == Goroutines {
		rc.Connections = c.Connections
	}
	return rc
}

// WriteTable prints the results as an aligned table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RECIPE\tHERD\tK\tHAND-OFFS\tNOTIF/HO\tREQ/HO\tP50\tP99\tHO/S\tCPU/HO\tERRORS\t")
	for _, r := range results {
		herd := "free"
		if r.HerdProne {
			herd = "prone"
		}
		if r.Handoffs == 0 {
			// A run that measured nothing shows no figures, not zeros.
			fmt.Fprintf(tw, "%s\t%s\t%d\t0\t-\t-\t-\t-\t-\t-\t%d\t\n", r.Recipe, herd, r.Contenders, r.Errors)
			continue
		}
		cpu := "-"
		if r.HasCPU {
			cpu = r.cpuPerHandoff()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%s\t%s\t%.0f\t%s\t%d\t\n",
			r.Recipe, herd, r.Contenders, r.Handoffs, r.NotificationsPerHandoff, r.RequestsPerHandoff,
			fmtMs(r.LatencyP50Ms), fmtMs(r.LatencyP99Ms), r.HandoffsPerSec, cpu, r.Errors)
	}
	return tw.Flush()
}

// WriteNotes says where the table's figures come from.
func (rep *Report) WriteNotes(w io.Writer) error {
	var srcs []string
	for _, r := range rep.Results {
		if r.Handoffs == 0 {
			continue
		}
		for _, s := range []string{"notifications: " + r.NotificationsSource, "requests: " + r.RequestsSource} {
			if !slices.Contains(srcs, s) {
				srcs = append(srcs, s)
			}
		}
	}
	cpu := "not measured (--pid)"
	if rep.CPUSource != "" {
		cpu = rep.CPUSource
	}
	_, err := fmt.Fprintf(w, "server: %s\nsources: %s (the contenders' own counts: client_* in %s)\n"+
		"CPU time: %s\nHO/S includes the %gms hold; P50/P99: from a release to the next acquisition\n",
		rep.serverName(), strings.Join(srcs, ", "), CSVFile, cpu, rep.Config.HoldMs)
	return err
}

// serverName is the server and, when it said, its version.
func (rep *Report) serverName() string {
	if rep.ServerVersion == "" || strings.Contains(rep.Server, rep.ServerVersion) {
		return rep.Server
	}
	return rep.Server + " (version " + rep.ServerVersion + ")"
}

// cpuPerHandoff prints CPU/HO with no more significant digits than the
// ticks it was counted in carry: 3 ticks over 500 hand-offs is 0.06ms,
// not 0.060ms.
func (r Result) cpuPerHandoff() string {
	if r.CPUResolutionMs <= 0 || r.Handoffs == 0 {
		return fmtMs(r.CPUPerHandoffMs)
	}
	ticks := r.CPUSeconds * 1000 / r.CPUResolutionMs
	if ticks < 0.5 {
		return "<" + fmtSig(r.CPUResolutionMs/float64(r.Handoffs), 1)
	}
	digits := 3
	switch {
	case ticks < 9.5:
		digits = 1
	case ticks < 99.5:
		digits = 2
	}
	return fmtSig(r.CPUPerHandoffMs, digits)
}

// fmtSig prints milliseconds rounded to n significant digits.
func fmtSig(v float64, n int) string {
	if v <= 0 {
		return "0ms"
	}
	mag := int(math.Floor(math.Log10(v)))
	return fmt.Sprintf("%.*fms", max(0, n-1-mag), v)
}

// fmtMs prints milliseconds with 2 to 3 significant digits.
func fmtMs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	default:
		return fmt.Sprintf("%.2fms", v)
	}
}

var csvHeader = []string{"recipe", "herd_prone", "mode", "contenders", "connections", "writers", "readers",
	"hold_ms", "handoffs", "acquisitions", "seconds", "handoffs_per_sec",
	"notifications", "notifications_source", "client_notifications", "requests", "requests_source",
	"client_requests", "notifications_to_departing", "reconnects", "notifications_per_handoff", "client_notifications_per_handoff",
	"requests_per_handoff", "latency_p50_ms", "latency_p99_ms", "latency_mean_ms", "latency_max_ms",
	"cpu_seconds", "cpu_per_handoff_ms", "errors"}

// csvFirstFigure is the first column of csvHeader holding a measurement
// (after the run's configuration and its hand-off count); the last column
// is errors.
const csvFirstFigure = 9

// WriteCSV writes one row per result.
func WriteCSV(w io.Writer, results []Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	f3 := func(v float64) string { return strconv.FormatFloat(round3(v), 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range results {
		cpu, cpuHO := "", ""
		if r.HasCPU {
			cpu, cpuHO = f3(r.CPUSeconds), f3(r.CPUPerHandoffMs)
		}
		row := []string{string(r.Recipe), strconv.FormatBool(r.HerdProne), string(r.Mode),
			strconv.Itoa(r.Contenders), strconv.Itoa(r.Connections), strconv.Itoa(r.Writers), strconv.Itoa(r.Readers),
			f(r.HoldMs), strconv.Itoa(r.Handoffs), strconv.Itoa(r.Acquisitions), f3(r.Seconds), f3(r.HandoffsPerSec),
			i(r.Notifications), r.NotificationsSource, i(r.ClientNotifications), i(r.Requests), r.RequestsSource,
			i(r.ClientRequests), i(r.NotificationsToDeparting), i(r.Reconnects), f3(r.NotificationsPerHandoff), f3(r.ClientNotificationsPerHandoff),
			f3(r.RequestsPerHandoff), f3(r.LatencyP50Ms), f3(r.LatencyP99Ms), f3(r.LatencyMeanMs), f3(r.LatencyMaxMs),
			cpu, cpuHO, strconv.Itoa(r.Errors)}
		if r.Handoffs == 0 {
			// A run that measured nothing leaves its figures empty, not
			// zeros that read as a measurement.
			for c := csvFirstFigure; c < len(row)-1; c++ {
				row[c] = ""
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Files written by WriteFiles into the output directory.
const (
	CSVFile               = "herd.csv"
	JSONFile              = "herd.json"
	NotificationsChartPNG = "herd-notifications.png"
	NotificationsChartSVG = "herd-notifications.svg"
	LatencyChartPNG       = "herd-latency.png"
	LatencyChartSVG       = "herd-latency.svg"
)

// WriteFiles writes the CSV, the JSON and the charts (PNG and SVG) into
// dir, creating it, and returns the paths written.
func (rep *Report) WriteFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	write := func(name string, fn func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	}
	if err := write(CSVFile, func(w io.Writer) error { return WriteCSV(w, rep.Results) }); err != nil {
		return written, err
	}
	if err := write(JSONFile, rep.WriteJSON); err != nil {
		return written, err
	}
	charts, err := rep.Charts()
	if err != nil {
		return written, err
	}
	for _, c := range charts {
		for _, name := range []string{c.PNG, c.SVG} {
			p := filepath.Join(dir, name)
			if err := c.save(p); err != nil {
				return written, err
			}
			written = append(written, p)
		}
	}
	return written, nil
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
