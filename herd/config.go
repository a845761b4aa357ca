// Package herd runs the herd-effect experiments of `paddock herd`: for
// each recipe of package recipes that has a herd-prone and a herd-free
// variant (mutex, read/write lock, election), K contenders pass the lock
// (or the leadership) around, and every hand-off is measured: watch
// notifications delivered, requests sent, time from a release to the next
// acquisition, and server CPU time.
//
// A herd-prone recipe makes every waiter watch the same node (or the
// same children list), so every release wakes all K-1 waiters, which
// all come back with requests; a herd-free one makes each waiter watch
// its predecessor, so a release wakes only the waiters that can proceed.
//
// The experiments run against an in-process Paddock server by default,
// or against any ZooKeeper-compatible server (Config.Servers).
// Notifications and requests are counted on the server when it can tell
// (in-process: its watch statistics and request counters; remote: mntr's
// zk_notifications_sent and zk_packets_received) and always on the client
// side too, by counting the frames on the contenders' connections.
package herd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Recipe names an experiment's recipe.
type Recipe string

// The six recipes, herd-prone and herd-free in pairs.
const (
	MutexUnfair    Recipe = "mutex-unfair"    // recipes.NewUnfairMutex
	MutexFair      Recipe = "mutex-fair"      // recipes.NewMutex
	RWNaive        Recipe = "rw-naive"        // recipes.NewNaiveRWMutex
	RWHerdFree     Recipe = "rw-herdfree"     // recipes.NewRWMutex
	ElectionUnfair Recipe = "election-unfair" // recipes.NewUnfairElection
	ElectionFair   Recipe = "election-fair"   // recipes.NewElection
)

// AllRecipes lists the recipes in the order they run.
var AllRecipes = []Recipe{MutexUnfair, MutexFair, RWNaive, RWHerdFree, ElectionUnfair, ElectionFair}

// HerdProne reports whether r is a herd-prone variant.
func (r Recipe) HerdProne() bool {
	return r == MutexUnfair || r == RWNaive || r == ElectionUnfair
}

// Label is r's name in charts.
func (r Recipe) Label() string {
	switch r {
	case MutexUnfair:
		return "mutex, unfair (herd-prone)"
	case MutexFair:
		return "mutex, fair (herd-free)"
	case RWNaive:
		return "rw lock, naive (herd-prone)"
	case RWHerdFree:
		return "rw lock (herd-free)"
	case ElectionUnfair:
		return "election, unfair (herd-prone)"
	case ElectionFair:
		return "election, fair (herd-free)"
	}
	return string(r)
}

func (r Recipe) family() string {
	s, _, _ := strings.Cut(string(r), "-")
	return s
}

func (r Recipe) isRW() bool       { return r.family() == "rw" }
func (r Recipe) isElection() bool { return r.family() == "election" }

// Mode says how contenders map to sessions.
type Mode string

const (
	// Sessions gives every contender its own session (TCP connection), as
	// separate processes would have.
	Sessions Mode = "sessions"
	// Goroutines makes the contenders share Config.Connections sessions,
	// as goroutines of a few processes would. ZooKeeper keeps one watch
	// per connection and path, so a shared connection gets one
	// notification for all its contenders watching the same node.
	Goroutines Mode = "goroutines"
)

// Config says which experiments to run and how.
type Config struct {
	// Servers are the client addresses of the server under test; empty
	// means an in-process Paddock server (in memory, 127.0.0.1).
	Servers []string
	// PID is the server process to read CPU time from (/proc/PID/stat),
	// for Servers; the in-process server reports this process's time.
	PID int
	// MetricsAddr serves the in-process server's Prometheus metrics
	// while the experiments run ("" for none).
	MetricsAddr string
	// Recipes to run, each at every Contenders value.
	Recipes    []Recipe
	Contenders []int
	// Handoffs is how many hand-offs each run measures, after Warmup
	// unmeasured ones.
	Handoffs int
	Warmup   int
	// Hold is how long a holder keeps the lock (the leader its
	// leadership). A holder also waits until every other contender is
	// back in line, so that each release finds all of them waiting.
	Hold time.Duration
	// Mode: Sessions (default) or Goroutines with Connections sessions.
	Mode        Mode
	Connections int
	// Readers is the fraction of read/write-lock contenders that are
	// readers (the others are writers; at least one writer).
	Readers float64
	// Kill makes a leaving election leader close its session (the
	// ephemeral node goes with it, as when a process dies) instead of
	// resigning; it then campaigns again with a new session. Only in
	// Sessions mode: a shared session cannot die alone.
	Kill bool
	// SessionTimeout is what contenders ask for.
	SessionTimeout time.Duration
	// Root is the znode under which each run makes its own path; it is
	// deleted afterwards.
	Root string
	// Stall aborts a run when no acquisition happens for that long.
	Stall time.Duration
	// Progress, if set, gets a progress bar (on a terminal) and a line
	// per finished run.
	Progress io.Writer
}

// DefaultConfig is `paddock herd` without flags: all six recipes at 10,
// 50, 100 and 200 contenders, 50 hand-offs each, one session per
// contender.
func DefaultConfig() Config {
	return Config{
		Recipes:        append([]Recipe(nil), AllRecipes...),
		Contenders:     []int{10, 50, 100, 200},
		Handoffs:       50,
		Warmup:         2,
		Hold:           10 * time.Millisecond,
		Mode:           Sessions,
		Connections:    4,
		Readers:        0.5,
		Kill:           true,
		SessionTimeout: 10 * time.Second,
		Root:           "/paddock-herd",
		Stall:          30 * time.Second,
	}
}

// Validate checks c.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Recipes) == 0 {
		errs = append(errs, errors.New("no recipes"))
	}
	if len(c.Contenders) == 0 {
		errs = append(errs, errors.New("no contender counts"))
	}
	for _, k := range c.Contenders {
		if k < 2 {
			errs = append(errs, fmt.Errorf("contenders %d: need at least 2 to hand off", k))
		}
	}
	if c.Handoffs < 1 {
		errs = append(errs, fmt.Errorf("hand-offs must be positive, got %d", c.Handoffs))
	}
	if c.Warmup < 0 || c.Hold < 0 || c.Stall <= 0 {
		errs = append(errs, errors.New("warm-up and hold must not be negative, stall must be positive"))
	}
	switch c.Mode {
	case Sessions:
	case Goroutines:
		if c.Connections < 1 {
			errs = append(errs, fmt.Errorf("goroutines mode needs at least one connection, got %d", c.Connections))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown mode %q (want sessions or goroutines)", c.Mode))
	}
	if c.Readers < 0 || c.Readers >= 1 {
		errs = append(errs, fmt.Errorf("readers fraction %v: want [0, 1) (at least one writer)", c.Readers))
	}
	if c.SessionTimeout <= 0 {
		errs = append(errs, errors.New("session timeout must be positive"))
	}
	if !strings.HasPrefix(c.Root, "/") || len(c.Root) < 2 || strings.HasSuffix(c.Root, "/") {
		errs = append(errs, fmt.Errorf("root %q: want an absolute path other than /", c.Root))
	}
	return errors.Join(errs...)
}

// connections is how many sessions a run with k contenders opens.
func (c *Config) connections(k int) int {
	if c.Mode == Goroutines {
		return min(k, c.Connections)
	}
	return k
}

// kills reports whether election leaders close their session to leave.
func (c *Config) kills() bool { return c.Kill && c.Mode == Sessions }

// writers is how many of k read/write-lock contenders are writers.
func (c *Config) writers(k int) int {
	w := int(float64(k)*(1-c.Readers) + 0.5)
	return min(max(w, 1), k)
}

// ParseRecipes parses a comma-separated list of recipe names (or "all").
// A family name (mutex, rw, election) stands for both its variants.
func ParseRecipes(s string) ([]Recipe, error) {
	var out []Recipe
	seen := map[Recipe]bool{}
	add := func(r Recipe) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		matched := false
		for _, r := range AllRecipes {
			if f == "all" || f == string(r) || f == r.family() {
				add(r)
				matched = true
			}
		}
		if !matched {
			return nil, fmt.Errorf("unknown recipe %q (want %s, a family mutex/rw/election, or all)", f, recipeNames())
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no recipes")
	}
	// Keep the canonical order, so charts and tables pair variants.
	var sorted []Recipe
	for _, r := range AllRecipes {
		if seen[r] {
			sorted = append(sorted, r)
		}
	}
	return sorted, nil
}

func recipeNames() string {
	var s []string
	for _, r := range AllRecipes {
		s = append(s, string(r))
	}
	return strings.Join(s, ", ")
}

// ParseContenders parses a comma-separated list of contender counts.
func ParseContenders(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("bad contender count %q", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no contender counts")
	}
	return out, nil
}

// ParseServers splits a comma-separated host:port list ("" is none).
func ParseServers(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(f); err != nil {
			return nil, fmt.Errorf("bad server %q: want host:port", f)
		}
		out = append(out, f)
	}
	return out, nil
}
