package herd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/paddockzk/paddock/internal/procstat"
	"github.com/paddockzk/paddock/server"
)

// serverCount is what the server under test says about itself at one
// moment. Fields without a source are left unset (Has* false).
type serverCount struct {
	Notifications    int64
	HasNotifications bool
	// Requests received: without pings for an in-process server
	// (paddock_requests_total minus op="ping"), with them from mntr
	// (zk_packets_received), which the caller corrects with the pings
	// the contenders sent.
	Requests      int64
	HasRequests   bool
	RequestsPings bool // Requests includes pings
	// RequestsConnects: Requests includes handshakes (ConnectRequest):
	// ZooKeeper and Paddock count them (and four-letter words) in
	// zk_packets_received.
	RequestsConnects bool
	// SelfPackets is how many packets reading the counters adds to
	// Requests (the mntr words themselves).
	SelfPackets int64
	CPU         time.Duration
	HasCPU      bool
	// CPUTick is the unit CPU is counted in (0: finer than a
	// microsecond).
	CPUTick time.Duration
	// Err says why the server's counters could not be read (mntr refused
	// or not whitelisted): the run then counts on the client side, and
	// says why.
	Err string
}

// target is the server the experiments run against.
type target interface {
	// addrs are the client addresses.
	addrs() []string
	// count reads the server's counters.
	count(ctx context.Context) serverCount
	// describe says what the server is, for the report.
	describe() string
	// cpuSource says what CPU time count reports ("" if none).
	cpuSource() string
	// version is what the server says it is ("" if it does not say).
	version(ctx context.Context) string
	close() error
}

// inProcess is a Paddock server in this process, in memory, on a free
// loopback port.
type inProcess struct {
	srv *server.Server
}

// startInProcess starts an in-process server. metricsAddr, if set, also
// serves its Prometheus metrics there, so the herd can be watched live.
func startInProcess(metricsAddr string, logger *slog.Logger) (*inProcess, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cfg := server.DefaultConfig()
	cfg.Listener = ln
	cfg.Stores = server.NewMemoryStores()
	cfg.MaxClientCnxns = 0
	cfg.FourLetterWords = []string{"*"}
	cfg.ReapInterval = time.Second
	cfg.MetricsAddr = metricsAddr
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = logger
	srv, err := server.New(cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &inProcess{srv: srv}, nil
}

func (p *inProcess) addrs() []string { return []string{p.srv.Addr().String()} }

func (p *inProcess) describe() string {
	return "in-process Paddock " + server.Version + " (in memory, 127.0.0.1)"
}

func (p *inProcess) cpuSource() string { return processCPUSource }

func (p *inProcess) version(context.Context) string { return server.Version }

func (p *inProcess) count(context.Context) serverCount {
	c := serverCount{
		Notifications:    int64(p.srv.Watches().Stats().Notifications),
		HasNotifications: true,
	}
	if n, err := requestsWithoutPings(p.srv); err == nil {
		c.Requests, c.HasRequests = n, true
	}
	if cpu, err := processCPU(); err == nil {
		c.CPU, c.HasCPU = cpu, true
	}
	return c
}

// requestsWithoutPings sums paddock_requests_total over every opcode but
// ping.
func requestsWithoutPings(srv *server.Server) (int64, error) {
	fams, err := srv.Registry().Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range fams {
		if f.GetName() != "paddock_requests_total" {
			continue
		}
		var n float64
		for _, m := range f.GetMetric() {
			ping := false
			for _, l := range m.GetLabel() {
				if l.GetName() == "op" && l.GetValue() == "ping" {
					ping = true
				}
			}
			if !ping {
				n += m.GetCounter().GetValue()
			}
		}
		return int64(n), nil
	}
	return 0, errors.New("no paddock_requests_total")
}

func (p *inProcess) close() error { return p.srv.Close() }

// remote is a server (or ensemble) reached over the network: Paddock or
// Apache ZooKeeper. Its counters come from mntr (when the four-letter
// word is allowed), summed over the servers, and its CPU time from
// /proc/PID/stat when it runs on this machine.
type remote struct {
	servers []string
	pid     int
}

func (r *remote) addrs() []string { return r.servers }

func (r *remote) describe() string { return "server " + strings.Join(r.servers, ",") }

func (r *remote) cpuSource() string {
	if r.pid > 0 {
		return fmt.Sprintf("/proc/%d/stat (server process, in 10 ms ticks)", r.pid)
	}
	return ""
}

// version is the first server's zk_version from mntr: a report against
// Apache ZooKeeper says which release it measured.
func (r *remote) version(ctx context.Context) string {
	kv, err := mntr(ctx, r.servers[0])
	if err != nil {
		return ""
	}
	return kv["zk_version"]
}

func (r *remote) count(ctx context.Context) serverCount {
	var c serverCount
	notif, packets := true, true
	for _, s := range r.servers {
		kv, err := mntr(ctx, s)
		if err != nil {
			notif, packets = false, false
			c.Err = err.Error()
			break
		}
		if v, err := strconv.ParseInt(kv["zk_notifications_sent"], 10, 64); err == nil {
			c.Notifications += v
		} else {
			notif = false
		}
		if v, err := strconv.ParseInt(kv["zk_packets_received"], 10, 64); err == nil {
			c.Requests += v
		} else {
			packets = false
		}
	}
	// Each server counts the mntr command itself: one packet per server
	// in every difference of two counts.
	c.SelfPackets = int64(len(r.servers))
	c.HasNotifications, c.HasRequests, c.RequestsPings, c.RequestsConnects = notif, packets, true, true
	if r.pid > 0 {
		if cpu, err := procstat.CPU(r.pid); err == nil {
			c.CPU, c.HasCPU, c.CPUTick = cpu, true, time.Second/procstat.ClockTicks
		}
	}
	return c
}

func (r *remote) close() error { return nil }

// mntr asks addr for the mntr four-letter word and parses its key/value
// lines.
func mntr(ctx context.Context, addr string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	if _, err := io.WriteString(nc, "mntr"); err != nil {
		return nil, err
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(nc)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if ok {
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(kv) == 0 {
		return nil, fmt.Errorf("mntr on %s: empty answer (not in 4lw.commands.whitelist?)", addr)
	}
	return kv, nil
}
