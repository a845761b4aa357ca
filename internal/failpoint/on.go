//go:build failpoints

package failpoint

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Enabled reports whether this build has failpoints (-tags failpoints).
const Enabled = true

// point is one armed failpoint: the process exits on hit number at.
type point struct {
	at   int64
	hits atomic.Int64
}

var (
	parseOnce sync.Once
	armed     map[string]*point
	parseErr  error
)

// arm reads the environment.
func arm() {
	var at map[string]int64
	at, parseErr = parse(os.Getenv(Env))
	armed = map[string]*point{}
	for name, n := range at {
		armed[name] = &point{at: n}
	}
}

// Hit counts a pass through failpoint name and exits the process if that
// pass is the one the environment armed.
func Hit(name string) {
	parseOnce.Do(arm)
	if parseErr != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", Env, parseErr)
		os.Exit(2)
	}
	p := armed[name]
	if p == nil {
		return
	}
	if p.hits.Add(1) == p.at {
		fmt.Fprintf(os.Stderr, "failpoint %s: exiting at hit %d\n", name, p.at)
		os.Exit(ExitCode)
	}
}
