package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/zktest"
)

// testServers returns the servers the integration tests run against, by
// name: "zookeeper" from $ZK_ORACLE (a real Apache ZooKeeper, e.g. from
// `eval "$(test/oracle/zk.sh start /tmp/zk)"`) and "paddock" from
// $PADDOCK_ADDR. The same test body runs against each. With none set the
// test is skipped.
func testServers(t testing.TB) map[string]string {
	t.Helper()
	m := map[string]string{}
	if a := os.Getenv("ZK_ORACLE"); a != "" {
		m["zookeeper"] = a
	}
	if a := os.Getenv("PADDOCK_ADDR"); a != "" {
		m["paddock"] = a
	} else {
		// An in-process Paddock server: the client's tests always run
		// against Paddock, and against Apache ZooKeeper when ZK_ORACLE is set.
		m["paddock"] = zktest.Start(t, zktest.WithTickTime(2*time.Second)).Addr()
	}
	return m
}

// forEachServer runs f as a subtest per server in testServers.
func forEachServer(t *testing.T, f func(t *testing.T, addrs []string)) {
	servers := testServers(t)
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { f(t, strings.Split(servers[name], ",")) })
	}
}

// testRoot creates a fresh persistent node for the test under c and
// deletes its subtree at the end.
func testRoot(t *testing.T, c *Conn) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	root := "/client-test-" + name + "-" + hex.EncodeToString(b[:])
	if _, _, err := c.Create(testCtx(t), root, nil, ModePersistent, nil); err != nil {
		t.Fatalf("create test root: %v", err)
	}
	addrs := c.hosts
	chroot := c.opts.chroot
	t.Cleanup(func() {
		cc, err := Connect(context.Background(), addrs, WithLogger(testLogger(t)))
		if err != nil {
			t.Logf("cleanup connect: %v", err)
			return
		}
		defer cc.Close()
		if err := deleteAll(context.Background(), cc, chroot+root); err != nil {
			t.Logf("cleanup %s: %v", root, err)
		}
	})
	return root
}

// deleteAll deletes a subtree.
func deleteAll(ctx context.Context, c *Conn, path string) error {
	children, _, err := c.Children(ctx, path)
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	if err != nil && !errors.Is(err, ErrNoAuth) {
		return err
	}
	for _, ch := range children {
		if err := deleteAll(ctx, c, wire.JoinPath(path, ch)); err != nil {
			return err
		}
	}
	if err := c.Delete(ctx, path, -1); err != nil && !errors.Is(err, ErrNoNode) {
		return err
	}
	return nil
}

// tcpProxy forwards connections to a target so tests can cut them.
type tcpProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	blocked bool
	conns   []net.Conn
	wg      sync.WaitGroup
}

func newProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		blocked := p.blocked
		p.mu.Unlock()
		if blocked {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *tcpProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// cut closes every proxied connection.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// setBlocked makes the proxy refuse (accept and close) new connections.
func (p *tcpProxy) setBlocked(b bool) {
	p.mu.Lock()
	p.blocked = b
	p.mu.Unlock()
}

// closeSessionRaw attaches to c's session on addr with a raw connection and
// closes it, so that c learns of the expiry when it reconnects.
func closeSessionRaw(t testing.TB, addr string, c *Conn) {
	t.Helper()
	c.mu.Lock()
	req := wire.ConnectRequest{TimeOut: 10000, SessionID: c.sessionID, Passwd: c.passwd, HasReadOnly: true}
	c.mu.Unlock()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	e := wire.NewEncoder(nil)
	start := e.BeginFrame()
	req.Encode(e)
	e.EndFrame(start)
	start = e.BeginFrame()
	hdr := wire.RequestHeader{Xid: 1, Op: wire.OpCloseSession}
	hdr.Encode(e)
	e.EndFrame(start)
	if _, err := nc.Write(e.Bytes()); err != nil {
		t.Fatal(err)
	}
	frame, err := wire.ReadFrame(nc, nil, 0)
	if err != nil {
		t.Fatalf("raw connect: %v", err)
	}
	var resp wire.ConnectResponse
	if err := wire.NewDecoder(frame).Record(&resp); err != nil || resp.TimeOut <= 0 {
		t.Fatalf("raw connect: %+v %v", resp, err)
	}
	frame, err = wire.ReadFrame(nc, nil, 0)
	if err != nil {
		t.Fatalf("raw closeSession: %v", err)
	}
	var h wire.ReplyHeader
	if err := wire.NewDecoder(frame).Record(&h); err != nil || h.Err != wire.OK {
		t.Fatalf("raw closeSession reply: %+v %v", h, err)
	}
}
