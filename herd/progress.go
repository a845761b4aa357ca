package herd

import (
	"io"

	iprogress "github.com/paddockzk/paddock/internal/progress"
)

type progress = iprogress.Progress

// newProgress shows, on each bar, the time since the experiment began.
func newProgress(w io.Writer) *progress { return iprogress.New(w, true) }
