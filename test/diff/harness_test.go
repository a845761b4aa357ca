// Package diff_test is Paddock's differential suite: every scenario is one
// Go function run twice, with the same raw-frame client code, against a
// real Apache ZooKeeper (the oracle, $ZK_ORACLE, started by
// test/oracle/zk.sh) and against an in-process Paddock (test/zktest).
// Each run writes a transcript — one line per request with its error
// code and reply, one line per batch of watch events — and the two
// transcripts must be equal line for line.
//
// Transcripts are normalised where the servers may legitimately differ:
// a zxid is written as its rank among the distinct zxids the scenario
// saw (z1 < z2 < ...), a ctime or mtime as "t(zxid)" after checking that
// each zxid maps to one time and times never decrease with zxids, an
// ephemeralOwner as the name of the scenario's connection owning it,
// children sorted, and paths relative to the scenario's own base node
// ("~"), so that scenarios can share one oracle and run in parallel.
//
// Where the two servers are known and meant to differ, the scenario says
// so with run.differ/doDiffer: each server must then give exactly its
// own expected answer, and the transcripts only record that a known
// difference was checked (see README "Where Paddock deliberately differs
// from ZooKeeper").
package diff_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/test/oracle"
	"github.com/paddockzk/paddock/test/zktest"
)

// superAuth is the super user both servers know: the oracle's zoo.cfg
// (test/oracle/zk.sh) and zktest.WithSuperDigest below.
const superAuth = "super:test"

// run is one execution of a scenario against one server.
type run struct {
	t        *testing.T
	zk       bool // the server is Apache ZooKeeper
	addr     string
	base     string
	start    time.Time
	conns    []*conn
	lines    []func(*norm) string
	zxids    map[int64]bool
	times    map[int64]int64 // zxid -> ctime/mtime seen with it
	sessions map[int64]string
	problems []string
	dials    int // connections opened, for nextAddr
}

// both runs scenario against ZooKeeper, then against a fresh Paddock,
// and compares the transcripts. It skips the test when ZK_ORACLE is not
// set.
func both(t *testing.T, scenario func(r *run)) {
	t.Helper()
	bothWith(t, func(t *testing.T) string { return zktest.Start(t, paddockOptions()...).Addr() }, scenario)
}

// paddockOptions are the settings of the Paddock side of every scenario.
func paddockOptions() []zktest.Option {
	return []zktest.Option{zktest.WithSessionTimeouts(200*time.Millisecond, 30*time.Second),
		zktest.WithReapInterval(time.Hour), // the oracle checks every 60 s; no reaping mid-scenario
		zktest.WithSuperDigest("super:" + server.DigestOf(superAuth))}
}

// bothWith is both with the Paddock side's address from paddock (or
// several, comma-separated: connections then go to each in turn).
func bothWith(t *testing.T, paddock func(t *testing.T) string, scenario func(r *run)) {
	t.Helper()
	zkAddr := strings.TrimSpace(strings.Split(oracle.Addr(t), ",")[0])
	base := fmt.Sprintf("/diff-%s-%08x", strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()), rand.Uint32())
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
				addr = paddock(t)
			}
			r := &run{t: t, zk: zk, addr: addr, base: base, start: time.Now(),
				zxids: map[int64]bool{}, times: map[int64]int64{}, sessions: map[int64]string{}}
			t.Cleanup(r.cleanup)
			done := false
			defer func() {
				if !done { // a Fatal: show how far the scenario got
					t.Logf("transcript up to the failure:\n%s", strings.Join(r.render(), "\n"))
				}
			}()
			r.setup()
			scenario(r)
			done = true
			got[i] = r.render()
			for _, p := range r.problems {
				t.Error(p)
			}
			t.Logf("transcript:\n%s", strings.Join(got[i], "\n"))
		}) && ok
	}
	if ok {
		compareTranscripts(t, got[0], got[1])
	}
}

// compareTranscripts fails t with the lines that differ.
func compareTranscripts(t *testing.T, zk, pd []string) {
	t.Helper()
	if slices.Equal(zk, pd) {
		return
	}
	var b strings.Builder
	for i := 0; i < max(len(zk), len(pd)); i++ {
		var a, p string
		if i < len(zk) {
			a = zk[i]
		}
		if i < len(pd) {
			p = pd[i]
		}
		if a != p {
			fmt.Fprintf(&b, "line %d:\n  zookeeper: %s\n  paddock:   %s\n", i+1, a, p)
		}
	}
	t.Errorf("transcripts differ (both are logged by the subtests):\n%s", b.String())
}

// setup creates the scenario's base node, unrecorded.
func (r *run) setup() {
	c := r.dialNamed("setup")
	res := c.call(wire.OpCreate, &wire.CreateRequest{Path: r.base, ACL: wire.OpenACLUnsafe})
	if res.code != wire.OK {
		r.t.Fatalf("creating the base node %s: %v", r.base, res.code)
	}
	c.close()
}

// cleanup closes every connection and, on the shared oracle, deletes the
// scenario's tree (as the super user, whatever its ACLs).
func (r *run) cleanup() {
	for _, c := range r.conns {
		c.close()
	}
	if !r.zk {
		return
	}
	c, err := dial(r, "cleanup", r.nextAddr())
	if err != nil {
		return
	}
	defer c.close()
	if c.callXid(wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte(superAuth)}).code != wire.OK {
		return
	}
	var rm func(p string)
	rm = func(p string) {
		if res := c.call(wire.OpGetChildren, &wire.PathWatchRequest{Path: p}); res.code == wire.OK {
			for _, k := range res.resp.(*wire.GetChildrenResponse).Children {
				rm(wire.JoinPath(p, k))
			}
		}
		c.call(wire.OpDelete, &wire.DeleteRequest{Path: p, Version: -1})
	}
	rm(r.base)
}

func (r *run) dialNamed(name string) *conn {
	r.t.Helper()
	addr := r.nextAddr()
	c, err := dial(r, name, addr)
	if err != nil {
		r.t.Fatalf("connecting %s to %s: %v", name, addr, err)
	}
	return c
}

// nextAddr is the server a new connection goes to: r.addr, or where
// bothWith's paddock gave several, comma-separated, each in turn.
func (r *run) nextAddr() string {
	addrs := strings.Split(r.addr, ",")
	a := addrs[r.dials%len(addrs)]
	r.dials++
	return a
}

// conn opens a new session named name (the name stands for its session
// id in ephemeralOwner fields).
func (r *run) conn(name string) *conn {
	r.t.Helper()
	c := r.dialNamed(name)
	r.conns = append(r.conns, c)
	r.sessions[c.sid] = name
	return c
}

// p returns the absolute path of rel ("/a/b") under the scenario's base.
func (r *run) p(rel string) string { return r.base + rel }

// rel renders an absolute path relative to the base ("~/a/b"), quoted
// when it holds anything but printable characters.
func (r *run) rel(p string) string {
	switch {
	case p == r.base:
		p = "~"
	case strings.HasPrefix(p, r.base+"/"):
		p = "~" + p[len(r.base):]
	}
	if q := strconv.Quote(p); q[1:len(q)-1] != p || p == "" || strings.Contains(p, " ") {
		return q
	}
	return p
}

// line records a transcript line rendered at the end of the run.
func (r *run) line(f func(n *norm) string) { r.lines = append(r.lines, f) }

// note records a fixed line.
func (r *run) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.line(func(*norm) string { return s })
}

// differ checks a value on which the two servers are known to differ: got
// must be zk on ZooKeeper and pd on Paddock. The transcript records only
// that the difference was checked.
func (r *run) differ(what, got, zk, pd string) {
	r.t.Helper()
	want := pd
	if r.zk {
		want = zk
	}
	if got != want {
		r.t.Errorf("known difference %q: got %s, want %s (ZooKeeper: %s, Paddock: %s)", what, got, want, zk, pd)
	}
	r.note("known difference checked: %s (ZooKeeper %s, Paddock %s)", what, zk, pd)
}

// do sends a request on c, records it with its outcome and returns it.
func (r *run) do(c *conn, op wire.OpCode, req wire.Record) result {
	r.t.Helper()
	return r.doXid(c, 0, op, req)
}

func (r *run) doXid(c *conn, xid int32, op wire.OpCode, req wire.Record) result {
	r.t.Helper()
	res := c.callXid(xid, op, req)
	r.register(res.resp)
	d := r.desc(op, req)
	name := c.name
	r.line(func(n *norm) string { return fmt.Sprintf("%s: %s -> %s", name, d, n.result(r, res)) })
	return res
}

// request is one request of a pipeline.
type request struct {
	op  wire.OpCode
	req wire.Record
}

// doPipelined sends every request on c before reading any reply, then
// records each with its outcome, in order, and returns the outcomes.
func (r *run) doPipelined(c *conn, reqs []request) []result {
	r.t.Helper()
	xids := make([]int32, len(reqs))
	for i, q := range reqs {
		xid, err := c.send(0, q.op, q.req)
		if err != nil {
			c.closed = true
		}
		xids[i] = xid
	}
	out := make([]result, len(reqs))
	for i, q := range reqs {
		res := c.answer(xids[i], q.op)
		r.register(res.resp)
		d := r.desc(q.op, q.req)
		name := c.name
		r.line(func(n *norm) string { return fmt.Sprintf("%s: (pipelined) %s -> %s", name, d, n.result(r, res)) })
		out[i] = res
	}
	return out
}

// doDiffer sends a request on whose answer the servers are known to
// differ: its code must be zk on ZooKeeper and pd on Paddock. The reply's
// zxids are not ranked with the scenario's.
func (r *run) doDiffer(c *conn, why string, zk, pd wire.Code, op wire.OpCode, req wire.Record) result {
	r.t.Helper()
	res := c.call(op, req)
	r.differ(fmt.Sprintf("%s: %s [%s]", c.name, r.desc(op, req), why), codeName(res.code), codeName(zk), codeName(pd))
	return res
}

// doShapeDiffer sends a request whose reply is known to differ in shape
// (its code and, for multi, the type of each result): shape must be zk on
// ZooKeeper and pd on Paddock.
func (r *run) doShapeDiffer(c *conn, why, zk, pd string, op wire.OpCode, req wire.Record) result {
	r.t.Helper()
	res := c.call(op, req)
	r.differ(fmt.Sprintf("%s: %s [%s]", c.name, r.desc(op, req), why), shape(res), zk, pd)
	return res
}

// shape renders a reply's code and, for multi, each result's type and
// code: "OK [create create2 error:NoNode]".
func shape(res result) string {
	s := codeName(res.code)
	if m, ok := res.resp.(*wire.MultiResponse); ok {
		parts := make([]string, len(m.Results))
		for i, mr := range m.Results {
			parts[i] = mr.Op.String()
			if mr.Op == wire.OpError {
				parts[i] += ":" + codeName(mr.Err)
			}
		}
		s += " [" + strings.Join(parts, " ") + "]"
	}
	return s
}

// events records the watch notifications c received up to a barrier.
func (r *run) events(c *conn) []notification {
	r.t.Helper()
	evs := c.barrier()
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = fmt.Sprintf("%v %s", e.ev.Type, r.rel(e.ev.Path))
		if e.ev.State != wire.StateSyncConnected {
			s[i] += " state=" + e.ev.State.String()
		}
	}
	line := fmt.Sprintf("%s: events [%s]", c.name, strings.Join(s, ", "))
	r.line(func(*norm) string { return line })
	return evs
}

// eventsUnordered is events for a batch whose order ZooKeeper leaves
// unspecified (closeSession deletes a session's ephemerals in hash
// order): the events are recorded sorted.
func (r *run) eventsUnordered(c *conn) {
	r.t.Helper()
	evs := c.barrier()
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = fmt.Sprintf("%v %s", e.ev.Type, r.rel(e.ev.Path))
	}
	slices.Sort(s)
	line := fmt.Sprintf("%s: events in any order [%s]", c.name, strings.Join(s, ", "))
	r.line(func(*norm) string { return line })
}

// eventsDiffer records c's notifications up to a barrier when the servers
// are known to deliver different ones: zk on ZooKeeper, pd on Paddock
// (each "Type ~/path", comma-separated).
func (r *run) eventsDiffer(c *conn, why string, zk, pd string) {
	r.t.Helper()
	evs := c.barrier()
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = fmt.Sprintf("%v %s", e.ev.Type, r.rel(e.ev.Path))
	}
	r.differ(c.name+" events: "+why, "["+strings.Join(s, ", ")+"]", "["+zk+"]", "["+pd+"]")
}

// register notes the zxids and times of every Stat in a reply.
func (r *run) register(resp wire.Record) {
	for _, st := range statsOf(resp) {
		for _, z := range []int64{st.Czxid, st.Mzxid, st.Pzxid} {
			if z != 0 {
				r.zxids[z] = true
			}
		}
		r.registerTime(st.Czxid, st.Ctime)
		r.registerTime(st.Mzxid, st.Mtime)
	}
}

func (r *run) registerTime(zxid, ms int64) {
	if zxid == 0 {
		return
	}
	if t, ok := r.times[zxid]; ok && t != ms {
		r.problems = append(r.problems, fmt.Sprintf("zxid %d seen with times %d and %d", zxid, t, ms))
		return
	}
	at := time.UnixMilli(ms)
	if at.Before(r.start.Add(-time.Minute)) || at.After(time.Now().Add(time.Minute)) {
		r.problems = append(r.problems, fmt.Sprintf("zxid %d has time %v, not around now", zxid, at))
	}
	r.times[zxid] = ms
}

func statsOf(resp wire.Record) []wire.Stat {
	switch x := resp.(type) {
	case *wire.Create2Response:
		return []wire.Stat{x.Stat}
	case *wire.StatResponse:
		return []wire.Stat{x.Stat}
	case *wire.GetDataResponse:
		return []wire.Stat{x.Stat}
	case *wire.GetChildren2Response:
		return []wire.Stat{x.Stat}
	case *wire.GetACLResponse:
		return []wire.Stat{x.Stat}
	case *wire.MultiResponse:
		var out []wire.Stat
		for _, res := range x.Results {
			out = append(out, statsOf(res.Resp)...)
		}
		return out
	}
	return nil
}

// render turns the recorded lines into the transcript.
func (r *run) render() []string {
	zs := make([]int64, 0, len(r.zxids))
	for z := range r.zxids {
		zs = append(zs, z)
	}
	slices.Sort(zs)
	n := &norm{rank: map[int64]int{}, sessions: r.sessions}
	last := int64(0)
	for i, z := range zs {
		n.rank[z] = i + 1
		if t, ok := r.times[z]; ok {
			if t < last {
				r.problems = append(r.problems, fmt.Sprintf("time goes backwards at zxid %d: %d < %d", z, t, last))
			}
			last = t
		}
	}
	out := make([]string, len(r.lines))
	for i, f := range r.lines {
		out[i] = f(n)
	}
	return out
}

// norm renders values with zxids and session ids normalised.
type norm struct {
	rank     map[int64]int
	sessions map[int64]string
}

func (n *norm) zxid(z int64) string {
	if z == 0 {
		return "0"
	}
	if k, ok := n.rank[z]; ok {
		return "z" + strconv.Itoa(k)
	}
	return fmt.Sprintf("zxid(%d)", z)
}

func (n *norm) stat(st wire.Stat) string {
	owner := "0"
	if st.EphemeralOwner != 0 {
		var ok bool
		if owner, ok = n.sessions[st.EphemeralOwner]; ok {
			owner = "session(" + owner + ")"
		} else {
			owner = fmt.Sprintf("%#x", uint64(st.EphemeralOwner))
		}
	}
	return fmt.Sprintf("{czxid=%s mzxid=%s pzxid=%s ctime=t(%s) mtime=t(%s) version=%d cversion=%d aversion=%d owner=%s dataLength=%d numChildren=%d}",
		n.zxid(st.Czxid), n.zxid(st.Mzxid), n.zxid(st.Pzxid), n.zxid(st.Czxid), n.zxid(st.Mzxid),
		st.Version, st.Cversion, st.Aversion, owner, st.DataLength, st.NumChildren)
}

func (n *norm) result(r *run, res result) string {
	s := codeName(res.code)
	if res.resp != nil {
		s += " " + n.body(r, res.resp)
	}
	if res.trailing > 0 {
		s += fmt.Sprintf(" (+%d unread bytes)", res.trailing)
	}
	return s
}

func (n *norm) body(r *run, resp wire.Record) string {
	switch x := resp.(type) {
	case *wire.CreateResponse:
		return r.rel(x.Path)
	case *wire.Create2Response:
		return r.rel(x.Path) + " " + n.stat(x.Stat)
	case *wire.StatResponse:
		return n.stat(x.Stat)
	case *wire.GetDataResponse:
		return "data=" + dataString(x.Data) + " " + n.stat(x.Stat)
	case *wire.GetChildrenResponse:
		return "children=" + sortedList(x.Children)
	case *wire.GetChildren2Response:
		return "children=" + sortedList(x.Children) + " " + n.stat(x.Stat)
	case *wire.GetACLResponse:
		return "acl=" + aclString(x.ACL) + " " + n.stat(x.Stat)
	case *wire.GetEphemeralsResponse:
		ps := make([]string, len(x.Ephemerals))
		for i, p := range x.Ephemerals {
			ps[i] = r.rel(p)
		}
		return "ephemerals=" + sortedList(ps)
	case *wire.GetAllChildrenNumberResponse:
		return fmt.Sprintf("total=%d", x.TotalNumber)
	case *wire.WhoAmIResponse:
		ids := make([]string, len(x.ClientInfo))
		for i, ci := range x.ClientInfo {
			ids[i] = ci.AuthScheme + ":" + ci.User
		}
		return "clientInfo=" + sortedList(ids)
	case *wire.ErrorResponse:
		return "err=" + codeName(x.Err)
	case *wire.PathRequest:
		return "path=" + r.rel(x.Path)
	case *wire.SASLRequest:
		return "token=" + dataString(x.Token)
	case *wire.MultiResponse:
		parts := make([]string, len(x.Results))
		for i, mr := range x.Results {
			parts[i] = mr.Op.String()
			if mr.Op == wire.OpError {
				parts[i] += " " + codeName(mr.Err)
			} else if mr.Resp != nil {
				if b := n.body(r, mr.Resp); b != "" {
					parts[i] += " " + b
				}
			}
		}
		return "[" + strings.Join(parts, "; ") + "]"
	case nil:
		return ""
	}
	return fmt.Sprintf("%+v", resp)
}

// desc renders a request.
func (r *run) desc(op wire.OpCode, req wire.Record) string {
	s := op.String()
	switch q := req.(type) {
	case *wire.CreateRequest:
		s += fmt.Sprintf(" %s data=%s acl=%s mode=%v", r.rel(q.Path), dataString(q.Data), aclString(q.ACL), q.Flags)
	case *wire.CreateTTLRequest:
		s += fmt.Sprintf(" %s data=%s acl=%s mode=%v ttl=%d", r.rel(q.Path), dataString(q.Data), aclString(q.ACL), q.Flags, q.TTL)
	case *wire.DeleteRequest:
		s += fmt.Sprintf(" %s version=%d", r.rel(q.Path), q.Version)
	case *wire.PathWatchRequest:
		s += " " + r.rel(q.Path)
		if q.Watch {
			s += " watch"
		}
	case *wire.PathRequest:
		s += " " + r.rel(q.Path)
	case *wire.SetDataRequest:
		s += fmt.Sprintf(" %s data=%s version=%d", r.rel(q.Path), dataString(q.Data), q.Version)
	case *wire.SetACLRequest:
		s += fmt.Sprintf(" %s acl=%s version=%d", r.rel(q.Path), aclString(q.ACL), q.Version)
	case *wire.CheckVersionRequest:
		s += fmt.Sprintf(" %s version=%d", r.rel(q.Path), q.Version)
	case *wire.MultiRequest:
		parts := make([]string, len(q.Ops))
		for i, o := range q.Ops {
			parts[i] = r.desc(o.Op, o.Req)
		}
		s += " [" + strings.Join(parts, "; ") + "]"
	case *wire.WatchesRequest:
		s += fmt.Sprintf(" %s type=%v", r.rel(q.Path), q.Type)
	case *wire.AddWatchRequest:
		s += fmt.Sprintf(" %s mode=%v", r.rel(q.Path), q.Mode)
	case *wire.SetWatches:
		s += fmt.Sprintf(" data=%s exist=%s child=%s", r.rels(q.DataWatches), r.rels(q.ExistWatches), r.rels(q.ChildWatches))
	case *wire.SetWatches2:
		s += fmt.Sprintf(" data=%s exist=%s child=%s persistent=%s recursive=%s", r.rels(q.DataWatches),
			r.rels(q.ExistWatches), r.rels(q.ChildWatches), r.rels(q.PersistentWatches), r.rels(q.PersistentRecursiveWatches))
	case *wire.ReconfigRequest:
		s += fmt.Sprintf(" joining=%q leaving=%q members=%q config=%d", q.JoiningServers, q.LeavingServers, q.NewMembers, q.CurConfigID)
	case *wire.AuthPacket:
		s += fmt.Sprintf(" %s %q", q.Scheme, q.Auth)
	case *wire.SASLRequest:
		s += " token=" + dataString(q.Token)
	}
	return s
}

func (r *run) rels(ps []string) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = r.rel(p)
	}
	return "[" + strings.Join(out, " ") + "]"
}

func dataString(b []byte) string {
	if b == nil {
		return "null"
	}
	return strconv.Quote(string(b))
}

func sortedList(v []string) string {
	if v == nil {
		return "null"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return "[" + strings.Join(s, " ") + "]"
}

func aclString(acl []wire.ACL) string {
	if acl == nil {
		return "null"
	}
	parts := make([]string, len(acl))
	for i, a := range acl {
		perms := a.Perms.String()
		if perms == "" || a.Perms&^wire.PermAll != 0 {
			perms = fmt.Sprintf("perms(%d)", a.Perms)
		}
		id := a.ID.ID
		if q := strconv.Quote(id); q[1:len(q)-1] != id {
			id = q // a line terminator would split the transcript line
		}
		parts[i] = fmt.Sprintf("%s:%s:%s", a.ID.Scheme, id, perms)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

var codeNames = map[wire.Code]string{
	wire.OK: "OK", errClosed: "closed", wire.ErrSystemError: "SystemError",
	wire.ErrRuntimeInconsistency: "RuntimeInconsistency", wire.ErrDataInconsistency: "DataInconsistency",
	wire.ErrConnectionLoss: "ConnectionLoss", wire.ErrMarshallingError: "MarshallingError",
	wire.ErrUnimplemented: "Unimplemented", wire.ErrOperationTimeout: "OperationTimeout",
	wire.ErrBadArguments: "BadArguments", wire.ErrUnknownSession: "UnknownSession",
	wire.ErrNewConfigNoQuorum: "NewConfigNoQuorum", wire.ErrReconfigInProgress: "ReconfigInProgress",
	wire.ErrAPIError: "APIError", wire.ErrNoNode: "NoNode", wire.ErrNoAuth: "NoAuth",
	wire.ErrBadVersion: "BadVersion", wire.ErrNoChildrenForEphemerals: "NoChildrenForEphemerals",
	wire.ErrNodeExists: "NodeExists", wire.ErrNotEmpty: "NotEmpty", wire.ErrSessionExpired: "SessionExpired",
	wire.ErrInvalidCallback: "InvalidCallback", wire.ErrInvalidACL: "InvalidACL",
	wire.ErrAuthFailed: "AuthFailed", wire.ErrSessionMoved: "SessionMoved", wire.ErrNotReadOnly: "NotReadOnly",
	wire.ErrEphemeralOnLocalSession: "EphemeralOnLocalSession", wire.ErrNoWatcher: "NoWatcher",
	wire.ErrRequestTimeout: "RequestTimeout", wire.ErrReconfigDisabled: "ReconfigDisabled",
	wire.ErrSessionClosedRequireSASL: "SessionClosedRequireSASL", wire.ErrQuotaExceeded: "QuotaExceeded",
	wire.ErrThrottledOp: "ThrottledOp",
}

func codeName(c wire.Code) string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("code(%d)", int32(c))
}
