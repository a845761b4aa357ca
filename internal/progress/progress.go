// Package progress draws a one-line progress bar (redrawn with \r) when
// writing to a terminal, and prints one line per finished task in any case.
// paddock bench and paddock herd use it. A nil *Progress prints nothing.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress writes bars and lines to one writer.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	began   time.Time
	overall bool
}

// New returns a Progress on w (nil for a nil w). With overall, bars show the
// time since New; otherwise since the bar started.
func New(w io.Writer, overall bool) *Progress {
	if w == nil {
		return nil
	}
	p := &Progress{w: w, began: time.Now(), overall: overall}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// Logf prints a line, clearing the bar first.
func (p *Progress) Logf(format string, args ...any) {
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

// Bar is one task's bar.
type Bar struct {
	p      *Progress
	label  string
	frac   func() float64
	status func() string
	start  time.Time
	stop   chan struct{}
	done   chan struct{}
}

// Start shows a bar: frac reports completion in [0, 1], status a short
// text (ops, rate, errors). On a terminal it is redrawn every 200 ms.
func (p *Progress) Start(label string, frac func() float64, status func() string) *Bar {
	if p == nil {
		return nil
	}
	b := &Bar{p: p, label: label, frac: frac, status: status, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	if p.overall {
		b.start = p.began
	}
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

func (b *Bar) draw() {
	f := min(max(b.frac(), 0), 1)
	const width = 24
	filled := int(f * width)
	line := fmt.Sprintf("%-34s [%s%s] %3.0f%% %5.1fs  %s", b.label,
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), f*100,
		time.Since(b.start).Seconds(), b.status())
	b.p.mu.Lock()
	fmt.Fprint(b.p.w, "\r\033[K"+line)
	b.p.mu.Unlock()
}

// Finish removes the bar and prints line, if not empty, in its place.
func (b *Bar) Finish(line string) {
	if b == nil {
		return
	}
	if b.p.tty {
		close(b.stop)
	}
	<-b.done
	if line != "" {
		b.p.Logf("%s", line)
	} else if b.p.tty {
		b.p.mu.Lock()
		fmt.Fprint(b.p.w, "\r\033[K")
		b.p.mu.Unlock()
	}
}
