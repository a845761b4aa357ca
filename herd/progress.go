package herd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line progress bar (redrawn with \r) when writing
// to a terminal, and prints one line per finished run in any case. A nil
// *progress prints nothing. (Modelled on package bench's.)
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	began time.Time
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		return nil
	}
	p := &progress{w: w, began: time.Now()}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// logf prints a line, clearing the bar first.
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
	stop   chan struct{}
	done   chan struct{}
}

// start shows a bar for one run: frac is the overall completion in
// [0, 1], status a short text.
func (p *progress) start(label string, frac func() float64, status func() string) *bar {
	if p == nil {
		return nil
	}
	b := &bar{p: p, label: label, frac: frac, status: status, stop: make(chan struct{}), done: make(chan struct{})}
	if !p.tty {
		close(b.done)
		return b
	}
	go func() {
		defer close(b.done)
		t := time.NewTicker(150 * time.Millisecond)
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
	f := min(max(b.frac(), 0), 1)
	const width = 30
	filled := int(f * width)
	line := fmt.Sprintf("%-34s [%s%s] %3.0f%% %5.1fs  %s", b.label,
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), f*100,
		time.Since(b.p.began).Seconds(), b.status())
	b.p.mu.Lock()
	fmt.Fprint(b.p.w, "\r\033[K"+line)
	b.p.mu.Unlock()
}

// finish removes the bar and prints line (if any) in its place.
func (b *bar) finish(line string) {
	if b == nil {
		return
	}
	if b.p.tty {
		close(b.stop)
	}
	<-b.done
	if line != "" {
		b.p.logf("%s", line)
	} else if b.p.tty {
		b.p.mu.Lock()
		fmt.Fprint(b.p.w, "\r\033[K")
		b.p.mu.Unlock()
	}
}
