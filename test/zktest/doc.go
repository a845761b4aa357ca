// Package zktest starts a real, in-process Paddock server for Go tests:
// a fake ZooKeeper that needs no JVM, starts in milliseconds, and breaks
// on demand. It is shaped like net/http/httptest:
//
//	srv := zktest.Start(t)                        // stopped by t.Cleanup
//	conn, _, err := zk.Connect(srv.Servers(), time.Second)
//	...
//	srv.ExpireSession(conn.SessionID())           // as a timeout would
//
// Every Server listens on its own free 127.0.0.1 port and keeps its state
// in memory (or in a t.TempDir() when Restart must preserve it), so many
// servers run in parallel in one test binary without interfering. There
// is no global state.
//
// The fault methods document exactly what a client observes. Session ids
// are int64, as go-zookeeper's Conn.SessionID returns them.
package zktest
