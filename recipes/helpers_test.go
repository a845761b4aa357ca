package recipes_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
	"github.com/paddockzk/paddock/test/oracle"
	"github.com/paddockzk/paddock/test/zktest"
)

// waitTimeout bounds every wait in the tests.
const waitTimeout = 20 * time.Second

// env is the server a test runs against: an in-process Paddock server,
// or Apache ZooKeeper when ZK_ORACLE is set (each test then works under
// its own root).
type env struct {
	t       *testing.T
	servers []string
	root    string
	srv     *zktest.Server // nil against the oracle
	admin   *client.Conn
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, root: "/recipes"}
	if oracleAddr() != "" {
		e.servers = oracle.Servers(t)
		e.root = "/recipes-test/" + sanitize(t.Name()) + "-" + randHex(4)
	} else {
		e.srv = zktest.Start(t, zktest.WithReapInterval(20*time.Millisecond))
		e.servers = e.srv.Servers()
	}
	e.admin = e.connect()
	if e.srv == nil {
		t.Cleanup(func() { deleteTree(e.admin, e.root) })
	}
	return e
}

// deleteTree deletes p and everything under it, best effort.
func deleteTree(c *client.Conn, p string) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	kids, _, _ := c.Children(ctx, p)
	for _, k := range kids {
		deleteTree(c, p+"/"+k)
	}
	_ = c.Delete(ctx, p, -1)
}

func oracleAddr() string { return strings.TrimSpace(os.Getenv(oracle.Env)) }

var nonPath = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func sanitize(s string) string { return nonPath.ReplaceAllString(s, "_") }

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// path returns a path under the test's root.
func (e *env) path(name string) string { return e.root + "/" + name }

// onPaddock skips the test against the oracle.
func (e *env) onPaddock(why string) {
	if e.srv == nil {
		e.t.Skipf("needs the in-process server: %s", why)
	}
}

func (e *env) connect(opts ...client.Option) *client.Conn {
	e.t.Helper()
	return connectTo(e.t, e.servers, opts...)
}

func connectTo(t testing.TB, servers []string, opts ...client.Option) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	opts = append([]client.Option{client.WithSessionTimeout(4 * time.Second)}, opts...)
	c, err := client.Connect(ctx, servers, opts...)
	if err != nil {
		t.Fatalf("connect %v: %v", servers, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// expirable connects a client whose session the test can expire with
// expire(node): the session ends on the server (its ephemeral node, e.g.
// a lock node, is deleted) while the client does not know it yet. On
// Paddock the server expires it; against ZooKeeper a proxy cuts the
// client off until the server has expired it.
func (e *env) expirable(opts ...client.Option) (*client.Conn, func(node string)) {
	e.t.Helper()
	if e.srv != nil {
		c := e.connect(opts...)
		return c, func(node string) {
			czxid := e.czxid(node)
			if err := e.srv.ExpireSession(c.SessionID()); err != nil {
				e.t.Fatalf("expire: %v", err)
			}
			e.waitGone(node, czxid)
		}
	}
	p := startProxy(e.t, e.servers[0])
	opts = append([]client.Option{client.WithSessionTimeout(time.Second), client.WithReconnectBackoff(20*time.Millisecond, 100*time.Millisecond)}, opts...)
	c := connectTo(e.t, []string{p.addr()}, opts...)
	return c, func(node string) {
		czxid := e.czxid(node)
		p.cut()
		e.waitGone(node, czxid)
		p.heal()
	}
}

func (e *env) czxid(node string) int64 {
	e.t.Helper()
	st, ok, err := e.admin.Exists(context.Background(), node)
	if err != nil || !ok {
		e.t.Fatalf("exists %s: %v %v", node, ok, err)
	}
	return st.Czxid
}

// waitGone waits until node (as created at czxid) no longer exists.
func (e *env) waitGone(node string, czxid int64) {
	e.t.Helper()
	waitFor(e.t, "deletion of "+node, func() error {
		st, ok, err := e.admin.Exists(context.Background(), node)
		if err == nil && ok && st.Czxid == czxid {
			return errors.New("still there")
		}
		return err
	})
}

// children returns the children of p (none if p does not exist).
func (e *env) children(p string) []string {
	e.t.Helper()
	var kids []string
	waitFor(e.t, "children of "+p, func() (err error) {
		kids, err = e.tryChildren(p)
		return err
	})
	return kids
}

// tryChildren returns the children of p (none if p does not exist).
func (e *env) tryChildren(p string) ([]string, error) {
	kids, _, err := e.admin.Children(context.Background(), p)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// waitChildren waits until p has n children and returns them.
func (e *env) waitChildren(p string, n int) []string {
	e.t.Helper()
	var kids []string
	waitFor(e.t, "children of "+p, func() error {
		if kids = e.children(p); len(kids) != n {
			return errors.New(strings.Join(kids, ","))
		}
		return nil
	})
	return kids
}

// notifications returns the server's notification count (Paddock only).
func (e *env) notifications() uint64 {
	if e.srv == nil {
		return 0
	}
	return e.srv.Notifications()
}

// waitFor polls cond until it returns nil or waitTimeout passes.
func waitFor(t testing.TB, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not a wait for a condition
	}
}

// recv returns the next value of ch, failing after waitTimeout.
func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting on a channel")
	}
	var zero T
	return zero
}

// closed waits until ch is closed.
func closed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// hooks counts a waiter's waits on a watch and its wake-ups.
type hooks struct {
	waiting atomic.Int64
	woken   atomic.Int64
}

func (h *hooks) option() recipes.Option {
	return recipes.WithTestHooks(
		func() { h.waiting.Add(1) },
		func(client.Event) { h.woken.Add(1) },
	)
}

// proxy forwards TCP connections to a server until cut, which closes them
// and refuses new ones until heal.
type proxy struct {
	t      testing.TB
	ln     net.Listener
	target string
	mu     sync.Mutex
	isCut  bool
	conns  map[net.Conn]struct{}
}

func startProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil || !p.track(s) {
			c.Close()
			continue
		}
		go pipe(c, s)
		go pipe(s, c)
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isCut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) cut() {
	p.mu.Lock()
	p.isCut = true
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

func (p *proxy) heal() {
	p.mu.Lock()
	p.isCut = false
	p.mu.Unlock()
}
