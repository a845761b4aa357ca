package herd

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockzk/paddock/client"
)

// sample is the counters at one moment.
type sample struct {
	at   time.Time
	srv  serverCount
	wire wireCount
}

// Run runs every configured experiment against the configured server
// (in-process when cfg.Servers is empty) and returns the report. After an
// error or a cancellation it returns what it measured so far with the
// error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var tgt target
	if len(cfg.Servers) == 0 {
		p, err := startInProcess(cfg.MetricsAddr, nil)
		if err != nil {
			return nil, fmt.Errorf("start in-process server: %w", err)
		}
		tgt = p
	} else {
		tgt = &remote{servers: cfg.Servers, pid: cfg.PID}
	}
	defer tgt.close()
	return runOn(ctx, cfg, tgt)
}

// runner holds what the runs of one Run share.
type runner struct {
	cfg   Config
	tgt   target
	wire  wireCounters
	admin *client.Conn // uncounted: setup and cleanup
	base  string       // the znode under which runs make their paths
	prog  *progress
}

func runOn(ctx context.Context, cfg Config, tgt target) (*Report, error) {
	started := time.Now()
	r := &runner{cfg: cfg, tgt: tgt, prog: newProgress(cfg.Progress)}
	cctx, cancel := context.WithTimeout(ctx, cfg.SessionTimeout)
	// The admin session's frames are counted too: its pings are then
	// subtracted from a server's packet count with the contenders'.
	admin, err := client.Connect(cctx, tgt.addrs(), client.WithSessionTimeout(cfg.SessionTimeout),
		client.WithDialer(r.wire.dialer(new(session))))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", strings.Join(tgt.addrs(), ","), err)
	}
	r.admin = admin
	defer admin.Close()
	r.base = fmt.Sprintf("%s/%d", cfg.Root, started.UnixNano())
	created, err := ensure(ctx, admin, r.base)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = deleteTree(cctx, admin, r.base)
		// The ancestors this run created, deepest first, if nothing else
		// is there.
		for i := len(created) - 1; i >= 0; i-- {
			_ = admin.Delete(cctx, created[i], -1)
		}
	}()
	if err != nil {
		return nil, err
	}

	rep := &Report{
		Date:          started.UTC().Format(time.RFC3339),
		Server:        tgt.describe(),
		ServerVersion: tgt.version(ctx),
		CPUSource:     tgt.cpuSource(),
		GoVersion:     runtime.Version(),
		OS:            runtime.GOOS + "/" + runtime.GOARCH,
		NumCPU:        runtime.NumCPU(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		Config:        reportConfig(&cfg),
	}
	total := len(cfg.Recipes) * len(cfg.Contenders)
	var errs []error
outer:
	for _, rc := range cfg.Recipes {
		for _, k := range cfg.Contenders {
			if ctx.Err() != nil {
				break
			}
			res := r.run(ctx, rc, k, len(rep.Results), total)
			rep.Results = append(rep.Results, res)
			if res.Handoffs == 0 && res.Errors > 0 {
				errs = append(errs, fmt.Errorf("%s K=%d: %s", rc, k, strings.Join(res.ErrorSamples, "; ")))
			}
			if res.lostServer {
				errs = append(errs, fmt.Errorf("%w: %d runs not started", errServerLost, total-len(rep.Results)))
				break outer
			}
		}
	}
	rep.Seconds = time.Since(started).Seconds()
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return rep, errors.Join(errs...)
}

// run measures one recipe at k contenders.
func (r *runner) run(ctx context.Context, rc Recipe, k, index, total int) Result {
	cfg := &r.cfg
	res := Result{Recipe: rc, Label: rc.Label(), HerdProne: rc.HerdProne(), Mode: cfg.Mode,
		Contenders: k, Connections: cfg.connections(k), HoldMs: ms(cfg.Hold)}
	if rc.isRW() {
		res.Writers = cfg.writers(k)
		res.Readers = k - res.Writers
	}
	if rc.isElection() {
		res.LeadersKilled = cfg.kills()
	}
	label := fmt.Sprintf("[%d/%d] %s K=%d", index+1, total, rc, k)
	fail := func(err error) Result {
		res.Errors++
		res.ErrorSamples = append(res.ErrorSamples, err.Error())
		r.prog.Logf("%-34s failed: %v", label, err)
		return res
	}
	path := fmt.Sprintf("%s/%s-%d", r.base, rc, k)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = deleteTree(cctx, r.admin, path)
	}()

	dial := func(ctx context.Context, sess *session) (*client.Conn, error) {
		cctx, cancel := context.WithTimeout(ctx, cfg.SessionTimeout)
		defer cancel()
		return client.Connect(cctx, r.tgt.addrs(), client.WithSessionTimeout(cfg.SessionTimeout),
			client.WithDialer(r.wire.dialer(sess)))
	}
	var cur atomic.Pointer[runState] // for the progress bar, once the run starts
	b := r.prog.Start(label, func() float64 {
		st := cur.Load()
		if st == nil {
			return float64(index) / float64(total)
		}
		return (float64(index) + min(float64(st.progress())/float64(cfg.Handoffs), 1)) / float64(total)
	}, func() string {
		st := cur.Load()
		if st == nil {
			return fmt.Sprintf("opening %d sessions", res.Connections)
		}
		return fmt.Sprintf("%d/%d hand-offs", st.progress(), cfg.Handoffs)
	})
	conns, sessions, err := dialAll(ctx, res.Connections, dial)
	if err != nil {
		b.Finish("")
		fail(err)
		if lerr := r.serverLost(ctx); lerr != nil {
			// The sessions could not open because the server is gone:
			// end the runs after this one too, as a loss during a run does.
			res.lostServer = true
			return fail(lerr)
		}
		return res
	}
	cs := make([]*contender, k)
	nw := res.Writers
	for i := range cs {
		c := &contender{id: i, recipe: rc, path: path, role: exclusive, dial: dial,
			kill: rc.isElection() && cfg.kills()}
		if rc.isRW() && (i*nw)/k == ((i+1)*nw)/k {
			c.role = reader // nw writers spread evenly among the k
		}
		c.sess = sessions[i%len(conns)]
		c.bind(conns[i%len(conns)])
		cs[i] = c
	}
	defer func() {
		closeAll(cs, conns)
	}()

	sampleNow := func() sample {
		return sample{at: time.Now(), srv: r.tgt.count(ctx), wire: r.wire.snapshot()}
	}
	st := newRunState(k, cfg, sampleNow, r.wire.snapshot)
	cur.Store(st)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	go func() { // stop the contenders' waits with the run
		select {
		case <-st.stop:
		case <-runCtx.Done():
			st.halt()
		}
		stopRun()
	}()
	watchdog := make(chan struct{})
	go func() {
		defer close(watchdog)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var lostAt time.Time
		for {
			select {
			case <-st.stop:
				return
			case now := <-tick.C:
				if d := st.sinceAcquire(); d > cfg.Stall {
					st.fail(fmt.Errorf("no acquisition for %v: stalled", d.Round(time.Second)))
					st.halt()
					return
				}
				if err := r.lost(now, &lostAt); err != nil {
					st.loseServer(err)
					st.halt()
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.contend(runCtx, c)
		}()
	}
	wg.Wait()
	st.halt()
	<-watchdog

	_, shared := r.tgt.(*remote) // a --server may have other clients
	res.fill(st, r.tgt.cpuSource() != "", shared)
	line := fmt.Sprintf("%-34s %4d hand-offs  %6.1f notif/hand-off  %6.1f req/hand-off  p50 %s  p99 %s",
		label, res.Handoffs, res.NotificationsPerHandoff, res.RequestsPerHandoff,
		fmtMs(res.LatencyP50Ms), fmtMs(res.LatencyP99Ms))
	if res.Errors > 0 {
		line += fmt.Sprintf("  %d errors (%s)", res.Errors, res.ErrorSamples[0])
	}
	b.Finish(line)
	return res
}

// lost says the server is gone when the uncounted admin session has been
// without a connection for a session timeout (a dead server would
// otherwise cost every remaining run the stall timeout). lostAt keeps
// when the connection was first seen missing.
func (r *runner) lost(now time.Time, lostAt *time.Time) error {
	switch st := r.admin.State(); st {
	case client.StateConnected, client.StateConnectedReadOnly:
		*lostAt = time.Time{}
		return nil
	case client.StateExpired, client.StateClosed, client.StateAuthFailed:
		return fmt.Errorf("%w: the admin session is %v", errServerLost, st)
	}
	if lostAt.IsZero() {
		*lostAt = now
	}
	if d := now.Sub(*lostAt); d >= r.cfg.SessionTimeout {
		return fmt.Errorf("%w: no connection for %v", errServerLost, d.Round(100*time.Millisecond))
	}
	return nil
}

// serverLost reports errServerLost if the admin session is without a
// connection and stays so for a session timeout; nil at once if it is
// connected (a run's sessions failed to open for another reason, such
// as a per-IP connection limit).
func (r *runner) serverLost(ctx context.Context) error {
	var lostAt time.Time
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := r.lost(time.Now(), &lostAt); err != nil || lostAt.IsZero() {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// errServerLost ends a run, and the runs after it, when the server is gone.
var errServerLost = errors.New("lost the server")

// fill computes the result's figures from the run's state.
func (res *Result) fill(st *runState, wantCPU, shared bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	res.Errors = st.nerrs
	res.lostServer = st.lost
	for _, e := range st.errs {
		res.ErrorSamples = append(res.ErrorSamples, e.Error())
	}
	if !st.done {
		if res.Errors == 0 {
			res.Errors++
			res.ErrorSamples = append(res.ErrorSamples, "interrupted before the window closed")
		}
		return
	}
	n := len(st.latencies)
	res.Handoffs = n
	res.Acquisitions = st.acquisitions
	s, e := st.start, st.end
	res.Seconds = e.at.Sub(s.at).Seconds()
	w := e.wire.sub(s.wire)
	res.ClientNotifications, res.ClientRequests, res.Reconnects = w.Notifications, w.Requests, w.Connects
	res.NotificationsToDeparting = w.Departing
	res.Notifications, res.NotificationsSource = w.Notifications, "client"+unreadable(s.srv, e.srv)
	if s.srv.HasNotifications && e.srv.HasNotifications {
		// The server's count, less what leaving sessions received.
		res.Notifications, res.NotificationsSource = e.srv.Notifications-s.srv.Notifications-w.Departing, "server"
		if n, c := res.Notifications, res.ClientNotifications; shared && n-c > max(2, c/5)+rwSkew(res) {
			// More than the contenders received: the server's other
			// clients were counted too (--server must be otherwise idle).
			res.NotificationsSource = fmt.Sprintf("server (the contenders received %d: other clients of the server counted too?)", c)
		}
	}
	res.Requests, res.RequestsSource = w.Requests, "client"+unreadable(s.srv, e.srv)
	if s.srv.HasRequests && e.srv.HasRequests {
		res.Requests, res.RequestsSource = e.srv.Requests-s.srv.Requests, "server"
		switch {
		case e.srv.RequestsPings && e.srv.RequestsConnects:
			res.Requests -= w.Pings + w.Connects + e.srv.SelfPackets
			res.RequestsSource = "server (packets received minus pings and handshakes)"
		case e.srv.RequestsPings:
			res.Requests -= w.Pings
			res.RequestsSource = "server (packets received minus pings)"
		}
	}
	if wantCPU && s.srv.HasCPU && e.srv.HasCPU {
		res.CPUSeconds = (e.srv.CPU - s.srv.CPU).Seconds()
		res.CPUResolutionMs = ms(e.srv.CPUTick)
		res.HasCPU = true
	}
	if n == 0 {
		return
	}
	res.Measured = true
	fn := float64(n)
	res.NotificationsPerHandoff = float64(res.Notifications) / fn
	res.ClientNotificationsPerHandoff = float64(res.ClientNotifications) / fn
	res.RequestsPerHandoff = float64(res.Requests) / fn
	if res.Seconds > 0 {
		res.HandoffsPerSec = fn / res.Seconds
	}
	if res.HasCPU {
		res.CPUPerHandoffMs = res.CPUSeconds * 1000 / fn
	}
	lat := slices.Clone(st.latencies)
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	res.LatencyP50Ms = ms(quantile(lat, 0.50))
	res.LatencyP99Ms = ms(quantile(lat, 0.99))
	res.LatencyMeanMs = ms(sum / time.Duration(n))
	res.LatencyMaxMs = ms(lat[n-1])
	for _, d := range st.latencies {
		res.HandoffLatenciesMs = append(res.HandoffLatenciesMs, round3(ms(d)))
	}
	for i := 1; i < len(st.perRelease); i++ {
		d := st.perRelease[i].sub(st.perRelease[i-1])
		res.Releases = append(res.Releases, ReleaseCounts{Notifications: d.Notifications, Requests: d.Requests})
	}
}

// quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// dialAll opens n sessions, 32 handshakes at a time.
func dialAll(ctx context.Context, n int, dial func(context.Context, *session) (*client.Conn, error)) ([]*client.Conn, []*session, error) {
	conns := make([]*client.Conn, n)
	sessions := make([]*session, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sessions[i] = new(session)
			conns[i], errs[i] = dial(ctx, sessions[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range conns {
			if c != nil {
				_ = c.Close()
			}
		}
		return nil, nil, fmt.Errorf("open %d sessions: %w (does the server limit connections per IP? "+
			"paddock server --max-client-cnxns 0, ZooKeeper maxClientCnxns=0)", n, firstErr(errs))
	}
	return conns, sessions, nil
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// closeAll closes the contenders' sessions (each closes its own; shared
// ones are closed once), 64 at a time.
func closeAll(cs []*contender, shared []*client.Conn) {
	var all []*client.Conn
	seen := map[*client.Conn]bool{}
	for _, c := range cs {
		if c.conn != nil && !seen[c.conn] {
			seen[c.conn] = true
			all = append(all, c.conn)
		}
	}
	for _, c := range shared {
		if c != nil && !seen[c] {
			seen[c] = true
			all = append(all, c)
		}
	}
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_ = c.Close()
		}()
	}
	wg.Wait()
}

// ensure creates p and its missing ancestors (persistent, empty), and
// returns the paths it created, p's ancestors first.
func ensure(ctx context.Context, c *client.Conn, p string) ([]string, error) {
	cur := ""
	var created []string
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		cur += "/" + part
		_, _, err := c.Create(ctx, cur, nil, client.ModePersistent, nil)
		switch {
		case err == nil:
			created = append(created, cur)
		case !errors.Is(err, client.ErrNodeExists):
			return created, fmt.Errorf("create %s: %w", cur, err)
		}
	}
	return created, nil
}

// deleteTree deletes p and everything under it.
func deleteTree(ctx context.Context, c *client.Conn, p string) error {
	kids, _, err := c.Children(ctx, p)
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := deleteTree(ctx, c, p+"/"+k); err != nil {
			return err
		}
	}
	err = c.Delete(ctx, p, -1)
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	return err
}

// unreadable says why the server's counters were not used, if a sample
// could not read them.
func unreadable(s, e serverCount) string {
	for _, c := range []serverCount{s, e} {
		if c.Err != "" {
			return " (server counters unreadable: " + c.Err + ")"
		}
	}
	return ""
}

// rwSkew is how far apart a read/write lock's two counts may be without
// other clients: its readers go on while the counters are read, so each
// edge of the window may cut through a herd (the naive lock wakes up to
// 2K waiters) that the server counts on one side and the clients on the
// other.
func rwSkew(res *Result) int64 {
	if !res.Recipe.isRW() {
		return 0
	}
	return 2 * 2 * int64(res.Contenders)
}
