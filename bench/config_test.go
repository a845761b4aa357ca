package bench

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseWorkloads(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "write", want: []string{Write}},
		{in: " write , READ,mixed ", want: []string{Write, Read, Mixed}},
		{in: "all", want: AllWorkloads},
		{in: "scale,all", want: append([]string{Scale}, Write, Read, Mixed, LockFair, LockHerd, Fanout, Expiry)},
		{in: "lock", want: []string{LockFair, LockHerd}},
		{in: "read,read", want: []string{Read}},
		{in: "fanout,expiry,lock-herd", want: []string{Fanout, Expiry, LockHerd}},
		{in: "", err: "no workloads"},
		{in: "write,bogus", err: `unknown workload "bogus"`},
	} {
		got, err := ParseWorkloads(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseWorkloads(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseWorkloads(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseIntList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "1,16,64", want: []int{1, 16, 64}},
		{in: "10k, 1M,1_000", want: []int{10000, 1000000, 1000}},
		{in: "100K", want: []int{100000}},
		{in: "0", want: []int{0}},
		{in: "", bad: true},
		{in: "1,x", bad: true},
		{in: "-5", bad: true},
		{in: "1.5k", bad: true},
	} {
		got, err := ParseIntList(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseIntList(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseIntList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseServers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "127.0.0.1:2181", want: []string{"127.0.0.1:2181"}},
		{in: "a:1,b:2, c:3", want: []string{"a:1", "b:2", "c:3"}},
		{in: "zk1", want: []string{"zk1:2181"}},
		{in: ":2182", want: []string{"127.0.0.1:2182"}},
		{in: "[::1]:2181,[::1]", want: []string{"[::1]:2181", "[::1]:2181"}},
		{in: "", bad: true},
		{in: "host:port", bad: true},
		{in: "host:0", bad: true},
		{in: "host:70000", bad: true},
		{in: "[::1", bad: true},
		{in: "a:1:2", bad: true},
	} {
		got, err := ParseServers(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseServers(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseServers(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	if c.ScaleClients != 64 {
		t.Errorf("ScaleClients defaults to the largest --clients: got %d", c.ScaleClients)
	}
	for name, mutate := range map[string]func(*Config){
		"no servers":        func(c *Config) { c.Servers = nil },
		"no workloads":      func(c *Config) { c.Workloads = nil },
		"zero clients":      func(c *Config) { c.Clients = []int{0} },
		"one contender":     func(c *Config) { c.Workloads = []string{LockFair}; c.Contenders = []int{1} },
		"no watchers":       func(c *Config) { c.Workloads = []string{Fanout}; c.Watchers = nil },
		"no sessions":       func(c *Config) { c.Workloads = []string{Expiry}; c.Sessions = 0 },
		"no znodes":         func(c *Config) { c.Workloads = []string{Scale}; c.Znodes = 0 },
		"no duration/ops":   func(c *Config) { c.Duration, c.Ops = 0, 0 },
		"negative warmup":   func(c *Config) { c.Warmup = -time.Second },
		"negative value":    func(c *Config) { c.ValueSize = -1 },
		"negative settle":   func(c *Config) { c.RSSSettle = -time.Second },
		"relative root":     func(c *Config) { c.Root = "bench" },
		"root is /":         func(c *Config) { c.Root = "/" },
		"zero tick":         func(c *Config) { c.Tick = 0 },
		"trailing slash":    func(c *Config) { c.Root = "/bench/" },
		"zero sess timeout": func(c *Config) { c.SessionTimeout = 0 },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, c)
		}
	}
	// Contenders are not checked when no lock workload runs.
	c = DefaultConfig()
	c.Contenders = nil
	c.Ops, c.Duration = 10, 0
	if err := c.Validate(); err != nil {
		t.Errorf("ops instead of duration: %v", err)
	}
}
