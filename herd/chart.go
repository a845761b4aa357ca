package herd

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart is one plot of a report, saved as PNG and SVG.
type Chart struct {
	PNG, SVG string // file names
	plot     *plot.Plot
}

// Chart size.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 4.5 * vg.Inch
)

func (c Chart) save(path string) error { return c.plot.Save(chartWidth, chartHeight, path) }

// Styles: one color and glyph per family; herd-prone variants dashed with
// filled glyphs, herd-free ones solid with hollow glyphs.
var familyColor = map[string]color.RGBA{
	"mutex":    {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"rw":       {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"election": {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

var familyGlyph = map[string][2]draw.GlyphDrawer{
	"mutex":    {draw.CircleGlyph{}, draw.RingGlyph{}},
	"rw":       {draw.PyramidGlyph{}, draw.TriangleGlyph{}},
	"election": {draw.BoxGlyph{}, draw.SquareGlyph{}},
}

// Charts returns the report's two charts: notifications per hand-off
// against contenders, and p50 hand-off latency against contenders, one
// line per recipe.
func (rep *Report) Charts() ([]Chart, error) {
	sub := rep.subtitle()
	notif, err := rep.chart("Watch notifications per hand-off"+sub, "notifications per hand-off",
		func(r Result) float64 { return r.NotificationsPerHandoff }, true)
	if err != nil {
		return nil, err
	}
	lat, err := rep.chart("Hand-off latency, p50 (release to next acquisition)"+sub, "milliseconds",
		func(r Result) float64 { return r.LatencyP50Ms }, false)
	if err != nil {
		return nil, err
	}
	return []Chart{
		{PNG: NotificationsChartPNG, SVG: NotificationsChartSVG, plot: notif},
		{PNG: LatencyChartPNG, SVG: LatencyChartSVG, plot: lat},
	}, nil
}

func (rep *Report) subtitle() string {
	mode := "one session per contender"
	if rep.Config.Mode == Goroutines {
		mode = fmt.Sprintf("contenders sharing %d sessions", rep.Config.Connections)
	}
	return fmt.Sprintf("\n%s, %s, hold %gms, %d CPUs", rep.serverName(), mode, rep.Config.HoldMs, rep.NumCPU)
}

// series is one recipe's points on a chart.
type series struct {
	recipe Recipe
	pts    plotter.XYs // positive values, by contenders
	zeros  []float64   // contenders at which the value was 0
}

// chartData returns the chart's contender counts, the K-1 reference line
// (when asked for and meaningful) and one series per recipe with a
// measured run.
func (rep *Report) chartData(y func(Result) float64, reference bool) ([]int, plotter.XYs, []series) {
	var ks []int
	for _, r := range rep.Results {
		if !slices.Contains(ks, r.Contenders) {
			ks = append(ks, r.Contenders)
		}
	}
	slices.Sort(ks)
	var ref plotter.XYs
	// K-1 is what a herd costs with a session per contender; contenders
	// sharing sessions are notified once per session, so the line would
	// mislead there.
	if reference && len(ks) > 0 && rep.Config.Mode != Goroutines {
		ref = plotter.XYs{{X: float64(ks[0]), Y: float64(ks[0] - 1)}, {X: float64(ks[len(ks)-1]), Y: float64(ks[len(ks)-1] - 1)}}
	}
	var out []series
	seen := map[Recipe]bool{}
	for _, r := range rep.Results {
		if seen[r.Recipe] {
			continue
		}
		seen[r.Recipe] = true
		sr := series{recipe: r.Recipe}
		for _, x := range rep.Results {
			switch {
			case x.Recipe != r.Recipe || x.Handoffs == 0:
			case y(x) > 0:
				sr.pts = append(sr.pts, plotter.XY{X: float64(x.Contenders), Y: y(x)})
			default: // a log scale has no 0: drawn on the axis instead
				sr.zeros = append(sr.zeros, float64(x.Contenders))
			}
		}
		if len(sr.pts)+len(sr.zeros) == 0 {
			continue
		}
		slices.SortFunc(sr.pts, func(a, b plotter.XY) int { return int(a.X - b.X) })
		out = append(out, sr)
	}
	return ks, ref, out
}

func (rep *Report) chart(title, ylabel string, y func(Result) float64, reference bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "contenders (K, log scale)"
	p.Y.Label.Text = ylabel + " (log scale)"
	// Both axes are logarithmic: K-1 and 1 are then parallel straight
	// lines, and the herd-free recipes do not vanish into the x axis.
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = ticks125{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.ThumbnailWidth = 0.5 * vg.Inch
	p.Add(plotter.NewGrid())

	ks, ref, all := rep.chartData(y, reference)
	var ticks []plot.Tick
	for _, k := range ks {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if len(ks) > 0 {
		p.X.Min, p.X.Max = float64(ks[0])/1.2, float64(ks[len(ks)-1])*1.2
	}

	// A log axis needs a positive range, also when nothing was measured.
	ylo, yhi := math.Inf(1), math.Inf(-1)
	widen := func(v float64) {
		ylo, yhi = min(ylo, v), max(yhi, v)
	}
	if ref != nil {
		l, err := plotter.NewLine(ref)
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 0x99}
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("K-1: every other contender", l)
		widen(math.Max(ref[0].Y, 1))
		widen(ref[1].Y)
	}
	for _, sr := range all {
		for _, pt := range sr.pts {
			widen(pt.Y)
		}
	}
	if math.IsInf(ylo, 0) {
		ylo, yhi = 1, 10
	}
	p.Y.Min, p.Y.Max = ylo/1.25, yhi*1.25
	for _, sr := range all {
		if err := addSeries(p, sr); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// addSeries draws one recipe: a line through its points, and its zeros
// as crosses on the bottom edge.
func addSeries(p *plot.Plot, sr series) error {
	fam := sr.recipe.family()
	c := familyColor[fam]
	if len(sr.pts) > 0 {
		line, points, err := plotter.NewLinePoints(sr.pts)
		if err != nil {
			return err
		}
		line.Color = c
		line.Width = vg.Points(2)
		points.Color = c
		points.Radius = vg.Points(3.5)
		if sr.recipe.HerdProne() {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			points.Shape = familyGlyph[fam][0]
		} else {
			points.Shape = familyGlyph[fam][1]
		}
		p.Add(line, points)
		p.Legend.Add(sr.recipe.Label(), line, points)
	}
	if len(sr.zeros) > 0 {
		var pts plotter.XYs
		for _, k := range sr.zeros {
			pts = append(pts, plotter.XY{X: k, Y: p.Y.Min})
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.Color = c
		sc.Shape = draw.CrossGlyph{}
		sc.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(sr.recipe.Label()+": 0 (on the bottom edge)", sc)
	}
	return nil
}

// ticks125 labels a log axis at 1, 2 and 5 times the powers of ten in
// its range (plot.LogTicks labels only the powers, which may leave a
// short range with a single label).
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	if lo <= 0 || hi <= lo {
		return ts
	}
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * p
			if v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ts
}
