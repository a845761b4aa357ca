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
	return fmt.Sprintf("\n%s, %s, hold %gms, %d CPUs", rep.Server, mode, rep.Config.HoldMs, rep.NumCPU)
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

	var ks []int
	for _, r := range rep.Results {
		if !slices.Contains(ks, r.Contenders) {
			ks = append(ks, r.Contenders)
		}
	}
	slices.Sort(ks)
	var ticks []plot.Tick
	for _, k := range ks {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if len(ks) > 0 {
		p.X.Min, p.X.Max = float64(ks[0])/1.2, float64(ks[len(ks)-1])*1.2
	}

	if reference && len(ks) > 0 {
		ref := plotter.XYs{{X: float64(ks[0]), Y: float64(ks[0] - 1)}, {X: float64(ks[len(ks)-1]), Y: float64(ks[len(ks)-1] - 1)}}
		l, err := plotter.NewLine(ref)
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 0x99}
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("K-1: every other contender", l)
	}

	// A log axis needs a positive range, also when nothing was measured.
	ylo, yhi := math.Inf(1), math.Inf(-1)
	widen := func(v float64) {
		ylo, yhi = min(ylo, v), max(yhi, v)
	}
	if reference && len(ks) > 0 {
		widen(math.Max(float64(ks[0]-1), 1))
		widen(float64(ks[len(ks)-1] - 1))
	}
	seen := map[Recipe]bool{}
	for _, r := range rep.Results {
		if seen[r.Recipe] {
			continue
		}
		seen[r.Recipe] = true
		var pts plotter.XYs
		for _, x := range rep.Results {
			if x.Recipe == r.Recipe && x.Handoffs > 0 && y(x) > 0 { // a log scale has no 0
				pts = append(pts, plotter.XY{X: float64(x.Contenders), Y: y(x)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		for _, pt := range pts {
			widen(pt.Y)
		}
		slices.SortFunc(pts, func(a, b plotter.XY) int { return int(a.X - b.X) })
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		fam := r.Recipe.family()
		c := familyColor[fam]
		line.Color = c
		line.Width = vg.Points(2)
		points.Color = c
		points.Radius = vg.Points(3.5)
		if r.Recipe.HerdProne() {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			points.Shape = familyGlyph[fam][0]
		} else {
			points.Shape = familyGlyph[fam][1]
		}
		p.Add(line, points)
		p.Legend.Add(r.Recipe.Label(), line, points)
	}
	if math.IsInf(ylo, 0) {
		ylo, yhi = 1, 10
	}
	p.Y.Min, p.Y.Max = ylo/1.25, yhi*1.25
	return p, nil
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
