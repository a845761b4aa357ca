// Package bench is a load generator for ZooKeeper-compatible servers. It
// talks to servers only through github.com/go-zookeeper/zk, so Apache
// ZooKeeper and Paddock are measured with the same client, one zk.Conn
// (one session, one TCP connection) per simulated client.
//
// Workloads:
//
//	write      create, then setData, of ValueSize-byte values (per Clients value)
//	read       getData of random keys
//	mixed      90% getData, 10% setData of random keys
//	lock-fair  ZooKeeper's lock recipe: ephemeral-sequential children, each
//	           waiter watching its predecessor (per Contenders value)
//	lock-herd  every contender creates one ephemeral node and watches it
//	fanout     Watchers sessions watch one znode; time from setData to the
//	           last notification
//	expiry     abandoned sessions: delay from their last contact with the
//	           server to the deletion of their ephemeral node
//	scale      create Znodes znodes; create rate and server RSS per znode
package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Workload names.
const (
	Write    = "write"
	Read     = "read"
	Mixed    = "mixed"
	LockFair = "lock-fair"
	LockHerd = "lock-herd"
	Fanout   = "fanout"
	Expiry   = "expiry"
	Scale    = "scale"
)

// AllWorkloads lists every workload in the order "all" runs them.
var AllWorkloads = []string{Write, Read, Mixed, LockFair, LockHerd, Fanout, Expiry, Scale}

// Config says what to run against which servers.
type Config struct {
	// Servers are host:port client addresses. Client i connects to
	// Servers[i%len(Servers)] only, so load spreads evenly over an ensemble.
	Servers   []string
	Workloads []string
	// Clients, Contenders and Watchers are the parameter values to run
	// the throughput, lock and fan-out workloads at.
	Clients    []int
	Contenders []int
	Watchers   []int
	// Duration is the measured time of one run, after Warmup (whose
	// operations are not counted). Ops, when > 0, replaces Duration:
	// operations (hand-offs, fan-out rounds) per run.
	Duration time.Duration
	Warmup   time.Duration
	Ops      int64
	// ValueSize is the size of every value written.
	ValueSize int
	// Keys is how many znodes read, mixed and write/set pick from.
	Keys int
	// Znodes is how many znodes scale creates, with ScaleClients clients
	// (0: the largest Clients value).
	Znodes       int
	ScaleClients int
	// RSSSettle is how long scale samples the server's RSS after its last
	// create before it takes the last sample as the RSS at rest
	// (DefaultRSSSettle).
	RSSSettle time.Duration
	// Sessions is how many sessions expiry abandons; SessionTimeout is the
	// timeout they ask for and Tick the server's tickTime (used only to
	// judge expiry accuracy: [T, T + 2 ticks]).
	Sessions       int
	SessionTimeout time.Duration
	Tick           time.Duration
	// Hold is how long a lock holder keeps the lock.
	Hold time.Duration
	// PID is the server process to sample VmRSS from (0: none).
	PID int
	// CPUPIDs are the server processes (a cluster's every node) whose CPU
	// time (user+system, /proc/PID/stat) write, read, mixed and the lock
	// workloads count over their measured window, reported as the
	// servers' CPU per operation (hand-off for locks). Empty: not counted.
	CPUPIDs []int
	// Root is the znode everything is created under (one child per run,
	// deleted afterwards unless Keep).
	Root string
	Keep bool
	// Label names the servers in reports ("zookeeper", "paddock").
	Label string
	// Progress receives the progress bar and per-run lines (nil: silent).
	Progress io.Writer
}

// DefaultConfig returns the defaults of `paddock bench`.
func DefaultConfig() Config {
	return Config{
		Servers:        []string{"127.0.0.1:2181"},
		Workloads:      []string{Write, Read, Mixed},
		Clients:        []int{1, 16, 64},
		Contenders:     []int{10, 50, 200},
		Watchers:       []int{100, 1000, 10000},
		Duration:       10 * time.Second,
		Warmup:         time.Second,
		ValueSize:      100,
		Keys:           1000,
		Znodes:         1000000,
		RSSSettle:      DefaultRSSSettle,
		Sessions:       20,
		SessionTimeout: 4 * time.Second,
		Tick:           2 * time.Second,
		Root:           "/paddock-bench",
	}
}

// Validate checks c and fills derived defaults.
func (c *Config) Validate() error {
	if len(c.Servers) == 0 {
		return fmt.Errorf("no servers")
	}
	for _, pid := range c.CPUPIDs {
		if pid <= 0 {
			return fmt.Errorf("cpu pid %d: not a process id", pid)
		}
	}
	if len(c.Workloads) == 0 {
		return fmt.Errorf("no workloads")
	}
	need := func(name string, list []int, min int) error {
		if len(list) == 0 {
			return fmt.Errorf("--%s: empty list", name)
		}
		for _, n := range list {
			if n < min {
				return fmt.Errorf("--%s: %d is less than %d", name, n, min)
			}
		}
		return nil
	}
	for _, w := range c.Workloads {
		var err error
		switch w {
		case Write, Read, Mixed:
			err = need("clients", c.Clients, 1)
		case LockFair, LockHerd:
			err = need("contenders", c.Contenders, 2)
		case Fanout:
			err = need("watchers", c.Watchers, 1)
		case Expiry:
			if c.Sessions < 1 {
				err = fmt.Errorf("--sessions must be at least 1")
			}
		case Scale:
			if c.Znodes < 1 {
				err = fmt.Errorf("--znodes must be at least 1")
			}
		}
		if err != nil {
			return err
		}
	}
	if c.Duration <= 0 && c.Ops <= 0 {
		return fmt.Errorf("need a positive --duration or --ops")
	}
	if c.Warmup < 0 {
		return fmt.Errorf("--warmup must not be negative")
	}
	if c.ValueSize < 0 {
		return fmt.Errorf("--value-size must not be negative")
	}
	if c.RSSSettle < 0 {
		return fmt.Errorf("--rss-settle must not be negative")
	}
	if c.Keys < 1 {
		c.Keys = 1
	}
	if c.ScaleClients <= 0 {
		c.ScaleClients = 1
		for _, n := range c.Clients {
			c.ScaleClients = max(c.ScaleClients, n)
		}
	}
	if c.SessionTimeout <= 0 || c.Tick <= 0 {
		return fmt.Errorf("--session-timeout and --tick must be positive")
	}
	if !strings.HasPrefix(c.Root, "/") || c.Root == "/" || strings.HasSuffix(c.Root, "/") {
		return fmt.Errorf("--root must be an absolute znode path other than /, got %q", c.Root)
	}
	return nil
}

// ParseWorkloads parses a comma-separated list of workload names; "all"
// means every workload. Duplicates are dropped; order is kept.
func ParseWorkloads(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, f := range splitList(s) {
		switch f = strings.ToLower(f); f {
		case "all":
			for _, w := range AllWorkloads {
				add(w)
			}
		case Write, Read, Mixed, LockFair, LockHerd, Fanout, Expiry, Scale:
			add(f)
		case "lock":
			add(LockFair)
			add(LockHerd)
		default:
			return nil, fmt.Errorf("unknown workload %q (want %s or all)", f, strings.Join(AllWorkloads, ","))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no workloads in %q", s)
	}
	return out, nil
}

// ParseIntList parses "1,16,64" (also "1k", "10K", "1m" for thousands and
// millions, and "1_000" or "1000000").
func ParseIntList(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := ParseCount(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list %q", s)
	}
	return out, nil
}

// ParseCount parses a non-negative count: "100", "1_000", "10k", "1M".
func ParseCount(s string) (int, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	mult := 1
	switch {
	case strings.HasSuffix(t, "k") || strings.HasSuffix(t, "K"):
		mult, t = 1000, t[:len(t)-1]
	case strings.HasSuffix(t, "m") || strings.HasSuffix(t, "M"):
		mult, t = 1000000, t[:len(t)-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a count: %q", s)
	}
	return n * mult, nil
}

// ParseServers parses "host:port,host:port"; a bare host gets port 2181
// and a bare ":port" host 127.0.0.1.
func ParseServers(s string) ([]string, error) {
	var out []string
	for _, f := range splitList(s) {
		host, port, err := splitHostPort(f)
		if err != nil {
			return nil, err
		}
		out = append(out, host+":"+port)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no servers in %q", s)
	}
	return out, nil
}

func splitHostPort(s string) (host, port string, err error) {
	if strings.HasPrefix(s, "[") { // [v6]:port or [v6]
		end := strings.Index(s, "]")
		if end < 0 {
			return "", "", fmt.Errorf("bad server address %q", s)
		}
		host, rest := s[:end+1], s[end+1:]
		if rest == "" {
			return host, "2181", nil
		}
		if !strings.HasPrefix(rest, ":") {
			return "", "", fmt.Errorf("bad server address %q", s)
		}
		port = rest[1:]
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "", "", fmt.Errorf("bad port in %q", s)
		}
		return host, port, nil
	}
	host, port, found := strings.Cut(s, ":")
	if !found {
		port = "2181"
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || strings.Contains(port, ":") {
		return "", "", fmt.Errorf("bad server address %q", s)
	}
	return host, port, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
