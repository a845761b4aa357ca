package bench

import (
	"fmt"
	"io"
	"time"

	iprogress "github.com/paddockzk/paddock/internal/progress"
)

type (
	progress = iprogress.Progress
	bar      = iprogress.Bar
)

func newProgress(w io.Writer) *progress { return iprogress.New(w, false) }

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
