package client

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// fakeServer is a minimal ZooKeeper server over a loopback listener, for
// tests that need to control the connection: it keeps a flat znode map,
// answers the common ops in order, and lets a test intercept any request
// with a hook.
type fakeServer struct {
	t  *testing.T
	ln net.Listener
	wg sync.WaitGroup

	mu sync.Mutex
	// timeout is the negotiated session timeout (ms).
	timeout  int32
	nextSID  int64
	sessions map[int64]bool
	// dropConnect closes connections without answering the handshake;
	// silent answers nothing at all.
	dropConnect bool
	silent      bool
	// swallowPings leaves pings unanswered.
	swallowPings bool
	// readOnly answers as a read-only server: a new session is local to
	// it (not in sessions), so a read-write server later expires it.
	readOnly bool
	// isroAsked counts the "isro" four-letter words received.
	isroAsked  int
	nodes      map[string][]byte
	seq        int
	zxid       int64
	conns      []*fakeConn
	connects   []wire.ConnectRequest
	setWatches []recordedSetWatches
	ops        []recordedOp
	// hook, when set, sees every request first; it returns true if it
	// handled the request (replied or chose not to).
	hook func(fc *fakeConn, h wire.RequestHeader, req wire.Record) bool
}

type recordedSetWatches struct {
	op        wire.OpCode
	frameSize int
	rel       int64
	lists     watchLists
}

type recordedOp struct {
	conn int
	op   wire.OpCode
	path string
}

type fakeConn struct {
	s   *fakeServer
	id  int
	nc  net.Conn
	wmu sync.Mutex
	sid int64
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{
		t: t, ln: ln, timeout: 6000, nextSID: 0x1000,
		sessions: make(map[int64]bool),
		nodes:    map[string][]byte{"/": nil},
	}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) close() {
	_ = s.ln.Close()
	s.dropAll()
	s.wg.Wait()
}

func (s *fakeServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		fc := &fakeConn{s: s, id: len(s.conns), nc: nc}
		s.conns = append(s.conns, fc)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer nc.Close()
			s.serve(fc)
		}()
	}
}

// dropAll closes every open connection.
func (s *fakeServer) dropAll() {
	s.mu.Lock()
	conns := append([]*fakeConn(nil), s.conns...)
	s.mu.Unlock()
	for _, fc := range conns {
		_ = fc.nc.Close()
	}
}

// expireSessions forgets every session: reconnects get timeOut 0.
func (s *fakeServer) expireSessions() {
	s.mu.Lock()
	clear(s.sessions)
	s.mu.Unlock()
}

func (s *fakeServer) with(f func(s *fakeServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *fakeServer) numConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *fakeServer) serve(fc *fakeConn) {
	var first [4]byte
	if _, err := io.ReadFull(fc.nc, first[:]); err != nil {
		return
	}
	if string(first[:]) == "isro" {
		s.mu.Lock()
		drop, ro := s.dropConnect, s.readOnly
		s.isroAsked++
		s.mu.Unlock()
		switch {
		case drop:
		case ro:
			_, _ = fc.nc.Write([]byte("ro"))
		default:
			_, _ = fc.nc.Write([]byte("rw"))
		}
		return
	}
	frame, err := wire.ReadFrame(io.MultiReader(bytes.NewReader(first[:]), fc.nc), nil, 0)
	if err != nil {
		return
	}
	var req wire.ConnectRequest
	if wire.NewDecoder(frame).Record(&req) != nil {
		return
	}
	s.mu.Lock()
	s.connects = append(s.connects, req)
	drop, silent := s.dropConnect, s.silent
	resp := wire.ConnectResponse{Passwd: make([]byte, 16), HasReadOnly: req.HasReadOnly}
	switch {
	case s.readOnly:
		resp.ReadOnly, resp.TimeOut, resp.SessionID = true, s.timeout, req.SessionID
		if req.SessionID == 0 {
			s.nextSID++
			resp.SessionID = int64(0x7F)<<56 | s.nextSID
		}
	case req.SessionID == 0:
		s.nextSID++
		resp.SessionID, resp.TimeOut = s.nextSID, s.timeout
		s.sessions[resp.SessionID] = true
	case s.sessions[req.SessionID]:
		resp.SessionID, resp.TimeOut = req.SessionID, s.timeout
	}
	fc.sid = resp.SessionID
	s.mu.Unlock()
	if drop {
		return
	}
	if silent {
		_, _ = wire.ReadFrame(fc.nc, nil, 0) // until the client gives up
		return
	}
	fc.write(&resp)
	if resp.TimeOut == 0 {
		return
	}
	for {
		frame, err := wire.ReadFrame(fc.nc, nil, 0)
		if err != nil {
			return
		}
		d := wire.NewDecoder(frame)
		var h wire.RequestHeader
		if d.Record(&h) != nil {
			return
		}
		body, err := wire.DecodeRequest(h.Op, d)
		if err != nil {
			fc.reply(h.Xid, wire.ErrUnimplemented, nil)
			return
		}
		s.record(fc, h, body, len(frame)+4)
		s.mu.Lock()
		hook := s.hook
		s.mu.Unlock()
		if hook != nil && hook(fc, h, body) {
			continue
		}
		if !s.handle(fc, h, body) {
			return
		}
	}
}

func (s *fakeServer) record(fc *fakeConn, h wire.RequestHeader, body wire.Record, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := ""
	switch b := body.(type) {
	case *wire.CreateRequest:
		path = b.Path
	case *wire.PathWatchRequest:
		path = b.Path
	case *wire.PathRequest:
		path = b.Path
	case *wire.SetDataRequest:
		path = b.Path
	case *wire.DeleteRequest:
		path = b.Path
	case *wire.AddWatchRequest:
		path = b.Path
	case *wire.AuthPacket:
		path = b.Scheme
	case *wire.SetWatches:
		s.setWatches = append(s.setWatches, recordedSetWatches{op: h.Op, frameSize: size, rel: b.RelativeZxid,
			lists: watchLists{b.DataWatches, b.ExistWatches, b.ChildWatches}})
	case *wire.SetWatches2:
		s.setWatches = append(s.setWatches, recordedSetWatches{op: h.Op, frameSize: size, rel: b.RelativeZxid,
			lists: watchLists{b.DataWatches, b.ExistWatches, b.ChildWatches, b.PersistentWatches, b.PersistentRecursiveWatches}})
	}
	s.ops = append(s.ops, recordedOp{conn: fc.id, op: h.Op, path: path})
}

// opsOf returns the recorded ops of kind op.
func (s *fakeServer) opsOf(op wire.OpCode) []recordedOp {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recordedOp
	for _, o := range s.ops {
		if o.op == op {
			out = append(out, o)
		}
	}
	return out
}

// handle answers a request from the node map. It returns false to close
// the connection.
func (s *fakeServer) handle(fc *fakeConn, h wire.RequestHeader, body wire.Record) bool {
	switch h.Op {
	case wire.OpPing:
		s.mu.Lock()
		swallow := s.swallowPings
		s.mu.Unlock()
		if !swallow {
			fc.reply(h.Xid, wire.OK, nil)
		}
	case wire.OpCloseSession:
		s.mu.Lock()
		delete(s.sessions, fc.sid)
		s.mu.Unlock()
		fc.reply(h.Xid, wire.OK, nil)
		return false
	case wire.OpAuth:
		if body.(*wire.AuthPacket).Scheme == "bad" {
			fc.reply(h.Xid, wire.ErrAuthFailed, nil)
			return false
		}
		fc.reply(h.Xid, wire.OK, nil)
	case wire.OpSetWatches, wire.OpSetWatches2:
		fc.reply(h.Xid, wire.OK, nil)
	case wire.OpAddWatch:
		fc.reply(h.Xid, wire.OK, &wire.ErrorResponse{})
	case wire.OpSync:
		fc.reply(h.Xid, wire.OK, &wire.PathRequest{Path: body.(*wire.PathRequest).Path})
	default:
		code, resp := s.apply(h.Op, body)
		fc.reply(h.Xid, code, resp)
	}
	return true
}

func (s *fakeServer) apply(op wire.OpCode, body wire.Record) (wire.Code, wire.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op {
	case wire.OpCreate2:
		r := body.(*wire.CreateRequest)
		path, code := s.createLocked(r.Path, r.Data, r.Flags)
		if code != wire.OK {
			return code, nil
		}
		return wire.OK, &wire.Create2Response{Path: path, Stat: s.statLocked(path)}
	case wire.OpGetData:
		r := body.(*wire.PathWatchRequest)
		data, ok := s.nodes[r.Path]
		if !ok {
			return wire.ErrNoNode, nil
		}
		return wire.OK, &wire.GetDataResponse{Data: data, Stat: s.statLocked(r.Path)}
	case wire.OpExists:
		r := body.(*wire.PathWatchRequest)
		if _, ok := s.nodes[r.Path]; !ok {
			return wire.ErrNoNode, nil
		}
		return wire.OK, &wire.StatResponse{Stat: s.statLocked(r.Path)}
	case wire.OpGetChildren2:
		r := body.(*wire.PathWatchRequest)
		if _, ok := s.nodes[r.Path]; !ok {
			return wire.ErrNoNode, nil
		}
		return wire.OK, &wire.GetChildren2Response{Children: s.childrenLocked(r.Path), Stat: s.statLocked(r.Path)}
	case wire.OpSetData:
		r := body.(*wire.SetDataRequest)
		if _, ok := s.nodes[r.Path]; !ok {
			return wire.ErrNoNode, nil
		}
		s.zxid++
		s.nodes[r.Path] = r.Data
		return wire.OK, &wire.StatResponse{Stat: s.statLocked(r.Path)}
	case wire.OpDelete:
		r := body.(*wire.DeleteRequest)
		if _, ok := s.nodes[r.Path]; !ok {
			return wire.ErrNoNode, nil
		}
		s.zxid++
		delete(s.nodes, r.Path)
		return wire.OK, nil
	}
	return wire.ErrUnimplemented, nil
}

// create adds a node (for tests and hooks).
func (s *fakeServer) create(path string, data []byte, mode wire.CreateMode) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, code := s.createLocked(path, data, mode)
	if code != wire.OK {
		s.t.Errorf("fake create %s: %v", path, code)
	}
	return p
}

func (s *fakeServer) createLocked(path string, data []byte, mode wire.CreateMode) (string, wire.Code) {
	if mode.IsSequential() {
		s.seq++
		path = fmt.Sprintf("%s%010d", path, s.seq)
	}
	if _, ok := s.nodes[wire.ParentPath(path)]; !ok {
		return "", wire.ErrNoNode
	}
	if _, ok := s.nodes[path]; ok {
		return "", wire.ErrNodeExists
	}
	s.zxid++
	s.nodes[path] = data
	return path, wire.OK
}

func (s *fakeServer) childrenLocked(path string) []string {
	children := []string{}
	for p := range s.nodes {
		if p != "/" && wire.ParentPath(p) == path {
			children = append(children, wire.BaseName(p))
		}
	}
	sort.Strings(children)
	return children
}

func (s *fakeServer) children(path string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.childrenLocked(path)
}

func (s *fakeServer) statLocked(path string) wire.Stat {
	return wire.Stat{Mzxid: s.zxid, DataLength: int32(len(s.nodes[path])),
		NumChildren: int32(len(s.childrenLocked(path)))}
}

func (fc *fakeConn) write(r wire.Record) {
	e := wire.NewEncoder(nil)
	start := e.BeginFrame()
	r.Encode(e)
	e.EndFrame(start)
	fc.wmu.Lock()
	defer fc.wmu.Unlock()
	_, _ = fc.nc.Write(e.Bytes())
}

// reply sends a reply; body is sent only when code is OK.
func (fc *fakeConn) reply(xid int32, code wire.Code, body wire.Record) {
	fc.s.mu.Lock()
	zxid := fc.s.zxid
	fc.s.mu.Unlock()
	fc.write(replyRecord{h: wire.ReplyHeader{Xid: xid, Zxid: zxid, Err: code}, body: body})
}

// notify sends a watch notification.
func (fc *fakeConn) notify(typ wire.EventType, path string) {
	fc.write(replyRecord{
		h:    wire.ReplyHeader{Xid: wire.XidNotification, Zxid: -1},
		body: &wire.WatcherEvent{Type: typ, State: wire.StateSyncConnected, Path: path},
	})
}

type replyRecord struct {
	h    wire.ReplyHeader
	body wire.Record
}

func (r replyRecord) Encode(e *wire.Encoder) {
	r.h.Encode(e)
	if r.h.Err == wire.OK && r.body != nil {
		r.body.Encode(e)
	}
}

func (r replyRecord) Decode(*wire.Decoder) error { return nil }

// latestConn returns the most recent connection.
func (s *fakeServer) latestConn() *fakeConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[len(s.conns)-1]
}

// pathOf returns the path of a request body, for hooks.
func pathOf(body wire.Record) string {
	switch b := body.(type) {
	case *wire.PathWatchRequest:
		return b.Path
	case *wire.CreateRequest:
		return b.Path
	case *wire.PathRequest:
		return b.Path
	}
	return ""
}
