package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line progress bar (\r updates) on a terminal, and
// prints one line per finished run whether or not it is a terminal. A nil
// *progress prints nothing.
type progress struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		return nil
	}
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// logf prints a line (clearing the bar first).
func (p *progress) logf(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

type bar struct {
	p      *progress
	label  string
	frac   func() float64
	status func() string
	start  time.Time
	stop   chan struct{}
	done   chan struct{}
}

// start begins a bar: frac reports completion in [0, 1], status a short
// text (ops, rate, errors).
func (p *progress) start(label string, frac func() float64, status func() string) *bar {
	if p == nil {
		return nil
	}
	b := &bar{p: p, label: label, frac: frac, status: status, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	if !p.tty {
		close(b.done)
		return b
	}
	go func() {
		defer close(b.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			b.draw()
			select {
			case <-b.stop:
				return
			case <-t.C:
			}
		}
	}()
	return b
}

func (b *bar) draw() {
	f := b.frac()
	f = min(max(f, 0), 1)
	const width = 24
	filled := int(f * width)
	line := fmt.Sprintf("%-34s [%s%s] %3.0f%% %5.1fs  %s", b.label,
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), f*100,
		time.Since(b.start).Seconds(), b.status())
	b.p.mu.Lock()
	fmt.Fprint(b.p.w, "\r\033[K"+line)
	b.p.mu.Unlock()
}

// finish removes the bar and prints line in its place.
func (b *bar) finish(line string) {
	if b == nil {
		return
	}
	if b.p.tty {
		close(b.stop)
	}
	<-b.done
	b.p.logf("%s", line)
}

// rateStatus is the usual status text: ops, ops/s, errors.
func rateStatus(ops, errs *counter, since func() time.Time) func() string {
	return func() string {
		n := ops.load()
		el := time.Since(since()).Seconds()
		rate := 0.0
		if el > 0 {
			rate = float64(n) / el
		}
		return fmt.Sprintf("%s ops  %s/s  %d err", humanCount(float64(n)), humanCount(rate), errs.load())
	}
}

// humanCount prints 1234 as "1234", 12345 as "12.3k", 1234567 as "1.23M".
func humanCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}
