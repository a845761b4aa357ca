package server

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

var (
	fuzzOnce sync.Once
	fuzzSrv  *Server
)

// fuzzServer is one in-memory server shared by every fuzz input.
func fuzzServer(t testing.TB) *Server {
	fuzzOnce.Do(func() {
		cfg := DefaultConfig()
		cfg.Port = 0
		cfg.MaxClientCnxns = 0
		cfg.HandshakeTimeout = 200 * time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		srv, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fuzzSrv = srv
	})
	return fuzzSrv
}

func frame(parts ...wire.Record) []byte {
	var e wire.Encoder
	start := e.BeginFrame()
	for _, p := range parts {
		p.Encode(&e)
	}
	e.EndFrame(start)
	return e.Bytes()
}

// FuzzConnection feeds arbitrary bytes to a live connection handler: after
// any input the server must still answer a well-formed client.
func FuzzConnection(f *testing.F) {
	connect := frame(&wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
	f.Add(connect)
	f.Add([]byte("ruok"))
	f.Add(append(append([]byte{}, connect...), frame(&wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
		&wire.CreateRequest{Path: "/f", Data: []byte("x"), ACL: wire.OpenACLUnsafe})...))
	f.Add(append(append([]byte{}, connect...), frame(&wire.RequestHeader{Xid: 1, Op: wire.OpMulti},
		&wire.MultiRequest{Ops: []wire.MultiOp{{Op: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: "/", Version: -1}}}})...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, input []byte) {
		srv := fuzzServer(t)
		addr := srv.Addr().String()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(200 * time.Millisecond))
		_, _ = nc.Write(input)
		_ = nc.(*net.TCPConn).CloseWrite()                    // EOF after the input: the server answers and closes
		_, _ = io.Copy(io.Discard, io.LimitReader(nc, 1<<20)) // until the server answers and closes, or the deadline
		nc.Close()
		// The server still serves others.
		probe, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatalf("server stopped accepting: %v", err)
		}
		defer probe.Close()
		_ = probe.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := probe.Write([]byte("ruok")); err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(probe)
		if !bytes.Equal(got, []byte("imok")) {
			t.Fatalf("server no longer answers ruok: %q", got)
		}
	})
}
