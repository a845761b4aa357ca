package diff_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/oracle"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// The session handshake and lifecycle at the wire level. These scenarios
// need a Paddock configured as the oracle is (tickTime 2 s, so session
// timeouts between 2 and 20 ticks), not the shared harness's, and speak
// raw frames, including malformed ones.

// sessBoth runs scenario against the oracle and against a fresh Paddock
// with ZooKeeper's default session bounds, and compares the lines each
// run recorded with note.
func sessBoth(t *testing.T, scenario func(t *testing.T, addr string, zk bool, note func(string, ...any))) {
	t.Helper()
	zkAddr := strings.TrimSpace(strings.Split(oracle.Addr(t), ",")[0])
	var got [2][]string
	ok := true
	for i, zk := range []bool{true, false} {
		name := "paddock"
		if zk {
			name = "zookeeper"
		}
		ok = t.Run(name, func(t *testing.T) {
			addr := zkAddr
			if !zk {
				addr = zktest.Start(t, zktest.WithTickTime(2*time.Second), zktest.WithMaxClientCnxns(0)).Addr()
			}
			note := func(format string, args ...any) { got[i] = append(got[i], fmt.Sprintf(format, args...)) }
			scenario(t, addr, zk, note)
			t.Logf("transcript:\n%s", strings.Join(got[i], "\n"))
		}) && ok
	}
	if ok {
		compareTranscripts(t, got[0], got[1])
	}
}

// rawc is a connection on which anything may be written.
type rawc struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawc {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, waitTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return &rawc{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (c *rawc) write(b []byte) {
	_ = c.nc.SetWriteDeadline(time.Now().Add(waitTimeout))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// connect writes a ConnectRequest followed by extra bytes inside its frame.
func (c *rawc) connect(req wire.ConnectRequest, extra ...byte) {
	var e wire.Encoder
	start := e.BeginFrame()
	req.Encode(&e)
	for _, b := range extra {
		e.Bool(b != 0)
	}
	e.EndFrame(start)
	c.write(e.Bytes())
}

// request writes a request frame.
func (c *rawc) request(xid int32, op wire.OpCode, rec wire.Record) {
	c.write(frame(&wire.RequestHeader{Xid: xid, Op: op}, rec))
}

// read returns the next frame, or "closed" or "silent" (nothing within d).
func (c *rawc) read(d time.Duration) ([]byte, string) {
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	b, err := wire.ReadFrame(c.br, nil, 1<<20)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, "silent"
		}
		return nil, "closed"
	}
	return b, ""
}

// handshake reads a ConnectResponse and describes it; it returns the
// response too.
func (c *rawc) handshake() (wire.ConnectResponse, string) {
	var resp wire.ConnectResponse
	b, what := c.read(waitTimeout)
	if b == nil {
		return resp, what
	}
	err := resp.Decode(wire.NewDecoder(b))
	s := "expired"
	if resp.SessionID != 0 {
		s = "granted"
	}
	return resp, fmt.Sprintf("%d bytes: protocolVersion %d, timeout %d, session %s, %d-byte password, readOnly byte %v=%v, err %v",
		len(b), resp.ProtocolVersion, resp.TimeOut, s, len(resp.Passwd), resp.HasReadOnly, resp.ReadOnly, err)
}

// reply reads a reply and describes its header; zxid is given relative
// to base.
func (c *rawc) reply(d time.Duration) (wire.ReplyHeader, string) {
	b, what := c.read(d)
	if b == nil {
		return wire.ReplyHeader{}, what
	}
	var h wire.ReplyHeader
	dec := wire.NewDecoder(b)
	if err := h.Decode(dec); err != nil {
		c.t.Fatalf("reply header: %v", err)
	}
	return h, fmt.Sprintf("xid %d err %s, %d body bytes", h.Xid, codeName(h.Err), dec.Remaining())
}

// newSession opens a session with timeout ms and returns the connection
// and the ConnectResponse.
func newSession(t *testing.T, addr string, ms int32) (*rawc, wire.ConnectResponse) {
	t.Helper()
	c := dialRaw(t, addr)
	c.connect(wire.ConnectRequest{TimeOut: ms, Passwd: make([]byte, wire.PasswordSize)})
	resp, what := c.handshake()
	if resp.SessionID == 0 {
		t.Fatalf("new session refused: %s", what)
	}
	return c, resp
}

// TestHandshakeVariants: ConnectRequests with and without the readOnly
// byte, any protocolVersion, any requested timeout (clamped to [2, 20]
// ticks), any password for a new session, and a lastZxidSeen ahead of
// the server (closed without a reply).
func TestHandshakeVariants(t *testing.T) {
	t.Parallel()
	sessBoth(t, func(t *testing.T, addr string, _ bool, note func(string, ...any)) {
		try := func(what string, req wire.ConnectRequest) {
			c := dialRaw(t, addr)
			c.connect(req)
			_, got := c.handshake()
			note("%s: %s", what, got)
		}
		pw := make([]byte, wire.PasswordSize)
		try("no readOnly byte", wire.ConnectRequest{TimeOut: 10000, Passwd: pw})
		try("readOnly false", wire.ConnectRequest{TimeOut: 10000, Passwd: pw, HasReadOnly: true})
		try("readOnly true", wire.ConnectRequest{TimeOut: 10000, Passwd: pw, HasReadOnly: true, ReadOnly: true})
		for _, v := range []int32{1, -1, 99} {
			try(fmt.Sprintf("protocolVersion %d", v), wire.ConnectRequest{ProtocolVersion: v, TimeOut: 10000, Passwd: pw})
		}
		for _, ms := range []int32{0, -1, -100000, 1, 3999, 4000, 4001, 39999, 40000, 40001, 1 << 30} {
			try(fmt.Sprintf("timeout %d", ms), wire.ConnectRequest{TimeOut: ms, Passwd: pw})
		}
		for _, n := range []int{-1, 0, 8, 20} {
			p := make([]byte, max(n, 0))
			if n < 0 {
				p = nil
			}
			try(fmt.Sprintf("new session with a %d-byte password", n), wire.ConnectRequest{TimeOut: 10000, Passwd: p})
		}
		for _, ro := range []bool{false, true} {
			try(fmt.Sprintf("lastZxidSeen ahead, readOnly %v", ro),
				wire.ConnectRequest{LastZxidSeen: 1 << 50, TimeOut: 10000, Passwd: pw, HasReadOnly: true, ReadOnly: ro})
		}
		old, resp := newSession(t, addr, 10000)
		try("re-attach with lastZxidSeen ahead", wire.ConnectRequest{LastZxidSeen: 1 << 50, TimeOut: 10000,
			SessionID: resp.SessionID, Passwd: resp.Passwd})
		_, got := old.read(closeWait)
		note("the session's connection then: %s", got)
		old.request(1, wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		h, got := old.reply(waitTimeout)
		old.request(wire.XidPing, wire.OpPing, nil)
		hp, gotp := old.reply(waitTimeout)
		// At least the exists reply's: the shared oracle's other clients
		// (and the sessions tried above, expiring) may write in between.
		note("exists: %s; ping: %s, zxid at least the exists reply's %v", got, gotp, h.Zxid > 0 && hp.Zxid >= h.Zxid)
	})
}

// TestSessionIDLayout: a standalone server's session ids have the
// server id 1 in the top byte (ZooKeeperServer's
// createSessionTrackerServerId, SessionTrackerImpl.initializeNextSessionId)
// and follow each other. The oracle is shared with other test packages
// whose sessions may take ids in between, so three sessions are opened
// back to back until a round sees no other session created; a server
// whose ids do not follow each other never gets such a round.
func TestSessionIDLayout(t *testing.T) {
	t.Parallel()
	const rounds = 20
	sessBoth(t, func(t *testing.T, addr string, _ bool, note func(string, ...any)) {
		var ids [3]int64
		follow := false
		for r := 0; r < rounds && !follow; r++ {
			for i := range ids {
				c, resp := newSession(t, addr, 10000)
				ids[i] = resp.SessionID
				c.request(1, wire.OpCloseSession, nil)
				c.reply(waitTimeout)
			}
			follow = ids[1] == ids[0]+1 && ids[2] == ids[1]+1
		}
		for i, id := range ids {
			note("session %d: top byte %#x", i, uint64(id)>>56)
		}
		note("three sessions with ids that follow each other within %d rounds: %v", rounds, follow)
	})
}

// TestReattach: a session presented with a wrong password, an unknown or
// closed id is answered expired (timeout 0, session 0) and closed; a
// session re-attached while attached elsewhere moves, the old connection
// being closed; closeSession is answered, then the connection closes.
func TestReattach(t *testing.T) {
	t.Parallel()
	sessBoth(t, func(t *testing.T, addr string, zk bool, note func(string, ...any)) {
		owner, resp := newSession(t, addr, 10000)
		bad := append([]byte(nil), resp.Passwd...)
		bad[0] ^= 1
		c := dialRaw(t, addr)
		c.connect(wire.ConnectRequest{TimeOut: 10000, SessionID: resp.SessionID, Passwd: bad})
		_, got := c.handshake()
		_, then := c.read(closeWait)
		note("wrong password: %s; then %s", got, then)
		_, oldSees := owner.read(closeWait)
		if want := map[bool]string{true: "closed", false: "silent"}[zk]; oldSees != want {
			t.Errorf("known difference (README): the session's connection after a wrong password: %s, want %s", oldSees, want)
		}
		for _, ro := range []bool{false, true} {
			c := dialRaw(t, addr)
			c.connect(wire.ConnectRequest{TimeOut: 10000, SessionID: resp.SessionID + 12345, Passwd: resp.Passwd, HasReadOnly: ro})
			_, got := c.handshake()
			_, then := c.read(closeWait)
			note("unknown session, readOnly byte %v: %s; then %s", ro, got, then)
		}

		a, ra := newSession(t, addr, 10000)
		eph := fmt.Sprintf("/diff-sess-%016x", ra.SessionID)
		a.request(1, wire.OpCreate, &wire.CreateRequest{Path: eph, ACL: wire.OpenACLUnsafe, Flags: wire.ModeEphemeral})
		_, got = a.reply(waitTimeout)
		note("create ephemeral: %s", got)
		b := dialRaw(t, addr)
		b.connect(wire.ConnectRequest{TimeOut: 6000, SessionID: ra.SessionID, Passwd: ra.Passwd, HasReadOnly: true})
		rb, got := b.handshake()
		_, oldGot := a.read(closeWait)
		note("re-attach while attached: %s, same id %v; the old connection: %s", got, rb.SessionID == ra.SessionID, oldGot)
		b.request(1, wire.OpExists, &wire.PathWatchRequest{Path: eph})
		_, got = b.reply(waitTimeout)
		note("exists(ephemeral) on the new connection: %s", got)
		b.request(2, wire.OpCloseSession, nil)
		b.request(3, wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		_, got = b.reply(waitTimeout)
		_, then = b.reply(waitTimeout)
		if then == "closed" || then == "xid 3 err SessionExpired, 0 body bytes" {
			// ZooKeeper answers SESSIONEXPIRED when it handles the exists
			// after the close and before the connection is closed; the
			// order varies from run to run.
			then = "closed, or SessionExpired then closed"
		}
		note("closeSession then a pipelined exists: %s; then %s", got, then)
		c = dialRaw(t, addr)
		c.connect(wire.ConnectRequest{TimeOut: 6000, SessionID: ra.SessionID, Passwd: ra.Passwd})
		_, got = c.handshake()
		note("re-attach a closed session: %s", got)
		c, _ = newSession(t, addr, 10000)
		c.request(7, wire.OpCloseSession, nil)
		_, got = c.reply(waitTimeout)
		c.request(8, wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		_, then = c.reply(waitTimeout)
		note("closeSession: %s; an exists after its reply: %s", got, then)
	})
}

// TestHandshakeFrames: requests pipelined behind the ConnectRequest, a
// first frame that is not a ConnectRequest, bad lengths and any xid
// order.
func TestHandshakeFrames(t *testing.T) {
	t.Parallel()
	sessBoth(t, func(t *testing.T, addr string, _ bool, note func(string, ...any)) {
		connect := frame(nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, wire.PasswordSize)})
		try := func(what string, b []byte) {
			c := dialRaw(t, addr)
			c.write(b)
			_, got := c.handshake()
			_, then := c.reply(closeWait)
			note("%s: %s; then %s", what, got, then)
		}
		exists := frame(&wire.RequestHeader{Xid: 1, Op: wire.OpExists}, &wire.PathWatchRequest{Path: "/"})
		try("exists pipelined behind the ConnectRequest", append(append([]byte(nil), connect...), exists...))
		try("exists as the first frame", exists)
		try("getData of a long path as the first frame", frame(&wire.RequestHeader{Xid: 1, Op: wire.OpGetData},
			&wire.PathWatchRequest{Path: "/zookeeper/quota/abcdefghijklmnopqrstuvwxyz"}))
		for _, n := range []int32{-1, 0, 4, 1 << 30} {
			b := binary.BigEndian.AppendUint32(nil, uint32(n))
			try(fmt.Sprintf("length %d", n), append(b, make([]byte, 64)...))
		}
		short := append([]byte(nil), connect...)
		binary.BigEndian.PutUint32(short, uint32(len(short)-5))
		try("ConnectRequest one byte short", short[:len(short)-1])
		var e wire.Encoder
		start := e.BeginFrame()
		e.Int(0)
		e.Long(0)
		e.Int(10000)
		e.Long(0)
		e.Int(1000) // password length beyond the frame
		e.EndFrame(start)
		try("password length beyond the frame", e.Bytes())
		// Not compared: a ConnectRequest followed at once by an empty frame.
		// ZooKeeper reads the empty frame while it creates the session and
		// closes the connection, with or without the ConnectResponse
		// first, depending on which finishes first.

		c, _ := newSession(t, addr, 10000)
		xids := []int32{10, 5, 5, 0, -5, wire.XidPing}
		for _, x := range xids {
			c.request(x, wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		}
		var got []string
		for range xids {
			h, what := c.reply(waitTimeout)
			got = append(got, fmt.Sprintf("%d %s", h.Xid, what))
		}
		note("exists with xids %v: %s", xids, strings.Join(got, "; "))
	})
}

// TestExpiryClosesConnection: a session whose client stays connected but
// silent expires between T and T + 2 ticks after its last request; the
// server closes its connection without a word, and the session cannot be
// re-attached.
func TestExpiryClosesConnection(t *testing.T) {
	t.Parallel()
	sessBoth(t, func(t *testing.T, addr string, _ bool, note func(string, ...any)) {
		const timeout = 4 * time.Second
		c, resp := newSession(t, addr, int32(timeout/time.Millisecond))
		eph := fmt.Sprintf("/diff-sess-expire-%016x", resp.SessionID)
		c.request(1, wire.OpCreate, &wire.CreateRequest{Path: eph, ACL: wire.OpenACLUnsafe, Flags: wire.ModeEphemeral})
		_, got := c.reply(waitTimeout)
		last := time.Now()
		note("create ephemeral: %s", got)
		b, what := c.read(timeout + 3*2*time.Second)
		gone := time.Since(last)
		note("then: %d bytes, %s", len(b), what)
		if gone < timeout || gone > timeout+2*2*time.Second {
			t.Errorf("connection closed %v after the last request; want within [T, T+2 ticks] of T = %v", gone, timeout)
		}
		o, _ := newSession(t, addr, 10000)
		o.request(1, wire.OpExists, &wire.PathWatchRequest{Path: eph})
		_, got = o.reply(waitTimeout)
		note("exists(ephemeral): %s", got)
		r := dialRaw(t, addr)
		r.connect(wire.ConnectRequest{TimeOut: 4000, SessionID: resp.SessionID, Passwd: resp.Passwd})
		_, got = r.handshake()
		note("re-attach: %s", got)
	})
}

// fourLetter sends word on a new connection and returns the answer.
func fourLetter(t *testing.T, addr, word string) string {
	t.Helper()
	c := dialRaw(t, addr)
	c.write([]byte(word))
	_ = c.nc.SetReadDeadline(time.Now().Add(waitTimeout))
	var b strings.Builder
	_, _ = c.br.WriteTo(&b)
	return b.String()
}

// TestConsSessionCounters: cons counts the ConnectRequest and its
// response among a connection's packets received and sent.
func TestConsSessionCounters(t *testing.T) {
	t.Parallel()
	sessBoth(t, func(t *testing.T, addr string, _ bool, note func(string, ...any)) {
		c, resp := newSession(t, addr, 10000)
		c.request(1, wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		c.reply(waitTimeout)
		c.request(wire.XidPing, wire.OpPing, nil)
		c.reply(waitTimeout)
		kv := consFields(t, addr, resp.SessionID, 3)
		note("connect, exists, ping: queued=%s,recved=%s,sent=%s", kv["queued"], kv["recved"], kv["sent"])
	})
}

// consFields returns the fields of session id's cons line, once it counts
// at least sent packets sent. ZooKeeper counts a packet sent after its
// write returns, so a client that has the reply may ask cons before it is
// counted; Paddock counts it before the write. At waitTimeout it returns
// what cons says then.
func consFields(t *testing.T, addr string, id int64, sent int) map[string]string {
	t.Helper()
	sid := fmt.Sprintf("sid=0x%x,", id)
	deadline := time.Now().Add(waitTimeout)
	for {
		var kv map[string]string
		for _, line := range strings.Split(fourLetter(t, addr, "cons"), "\n") {
			if i := strings.Index(line, "(queued="); i >= 0 && strings.Contains(line, sid) {
				kv = map[string]string{}
				for _, f := range strings.Split(strings.TrimSuffix(line[i+1:], ")"), ",") {
					k, v, _ := strings.Cut(f, "=")
					kv[k] = v
				}
			}
		}
		if kv == nil {
			t.Fatalf("no cons line for the session %#x", id)
		}
		if n, err := strconv.Atoi(kv["sent"]); (err == nil && n >= sent) || time.Now().After(deadline) {
			return kv
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConsFieldsAfterConnectAndCrst: a new session's cons line says
// lop=SESS with the handshake counted in its latencies, and crst resets
// the last operation, zxid, response time and latencies as well as the
// counts (Paddock printed lop=NA, the server's zxid, the time of the
// cons command and zero latencies, and crst reset only the counts). Not
// parallel: crst resets every connection of the shared oracle.
func TestConsFieldsAfterConnectAndCrst(t *testing.T) {
	sessBoth(t, func(t *testing.T, addr string, _ bool, note func(string, ...any)) {
		c, resp := newSession(t, addr, 10000)
		latencies := func(kv map[string]string) string {
			n := func(k string) int64 {
				v, err := strconv.ParseInt(kv[k], 10, 64)
				require.NoError(t, err, k)
				return v
			}
			if n("minlat") <= n("avglat") && n("avglat") <= n("maxlat") && n("llat") <= n("maxlat") {
				return "min <= avg <= max, last <= max"
			}
			return fmt.Sprintf("inconsistent llat=%s minlat=%s avglat=%s maxlat=%s", kv["llat"], kv["minlat"], kv["avglat"], kv["maxlat"])
		}
		kv := consFields(t, addr, resp.SessionID, 1)
		note("after connect: lop=%s lcxid=%s lresp set=%v latencies %s", kv["lop"], kv["lcxid"], kv["lresp"] != "0", latencies(kv))
		c.request(1, wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		c.reply(waitTimeout)
		kv = consFields(t, addr, resp.SessionID, 2)
		note("after exists: lop=%s lcxid=%s latencies %s", kv["lop"], kv["lcxid"], latencies(kv))
		require.Equal(t, "Connection stats reset.\n", fourLetter(t, addr, "crst"))
		kv = consFields(t, addr, resp.SessionID, 0)
		note("after crst: recved=%s sent=%s lop=%s lzxid=%s lresp=%s llat=%s minlat=%s avglat=%s maxlat=%s",
			kv["recved"], kv["sent"], kv["lop"], kv["lzxid"], kv["lresp"], kv["llat"], kv["minlat"], kv["avglat"], kv["maxlat"])
		c.request(2, wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		c.reply(waitTimeout)
		kv = consFields(t, addr, resp.SessionID, 1)
		note("after crst and exists: recved=%s sent=%s lop=%s lcxid=%s lzxid set=%v lresp set=%v latencies %s",
			kv["recved"], kv["sent"], kv["lop"], kv["lcxid"], kv["lzxid"] != "0xffffffffffffffff", kv["lresp"] != "0", latencies(kv))
	})
}
