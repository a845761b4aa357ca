// Package client is a Go client for ZooKeeper's wire protocol. It works
// against Paddock and against Apache ZooKeeper (3.6 and later for
// persistent watches, multiRead and getEphemerals; 3.7 for WhoAmI).
//
// # Sessions and connections
//
// Connect returns a *Conn once a session is established. A Conn holds one
// session, served over one TCP connection at a time. When the connection
// breaks, the Conn reconnects to the next server of its (shuffled) list,
// with backoff, presenting the same session id, password and the largest
// zxid it has seen (a server that is behind closes the connection and the
// next one is tried). After every handshake it first re-sends the
// credentials (WithAuth, and AddAuth calls not rejected: as the Java
// client, one is remembered from the call on, so one whose reply was lost
// with the connection counts), then restores the
// watches (SetWatches / SetWatches2 with the last zxid seen, so the server
// reports what changed meanwhile), and only then sends new requests.
//
// State changes are reported by State, on the Events channel (buffered,
// drop-oldest, closed by Close) and to WithStateCallback. The states are
// StateConnecting (first session), StateConnected (or
// StateConnectedReadOnly), StateDisconnected (reconnecting; the session
// may be alive), StateExpired, StateAuthFailed and StateClosed. An expired
// session is reported once: the Conn then stops and every operation fails
// with ErrSessionExpired, unless WithNewSessionOnExpiry(true) makes it
// start a new session. A session is reported expired when a server says
// so, or by the client itself once no server has been heard from for 4/3
// of the negotiated timeout (the servers have expired it by then), as the
// Java client does since 3.9.3; so a partition ends a session's watches
// and a recipe's Lease instead of leaving the Conn Disconnected for as
// long as it lasts.
//
// With WithReadOnly(true) a read-only server may serve the Conn. A session
// that only read-only servers have served is local to one of them: the
// Conn does not present it again, but asks the next server for a new
// session (as the Java client does until it has seen a read-write
// server). A session a read-write server has served is kept everywhere. A credential rejected during a handshake stops the
// Conn the same way, with ErrAuthFailed. Close ends the session
// (closeSession) and fails everything else with ErrClosed.
//
// # Operations
//
// Every operation takes a context first and is safe for concurrent use.
// Requests are pipelined: many can be in flight, and the server answers
// them in order. Errors from the server are protocol codes (type Code),
// so errors.Is(err, ErrNoNode) works; a failed Multi returns a
// *MultiError that unwraps to the failing op's code. Invalid paths fail
// with an error wrapping ErrBadArguments before anything is sent.
//
// If the connection breaks, requests in flight fail with
// ErrConnectionLoss: they may or may not have been applied. Requests made
// while disconnected wait (bounded by their context) and are sent after
// reconnecting; they fail with ErrConnectionLoss when no server could be
// reached for a whole session timeout. Cancelling a context returns
// ctx.Err() at once; a request already sent stays in the connection's
// queue and its reply is discarded, so the order of replies is never
// disturbed (a create may still have happened).
//
// # Watches
//
// ExistsW, GetW, ChildrenW and GetConfigW return a one-shot watch as a channel that
// receives exactly one Event and is then closed. A watch survives
// reconnects. When the session expires or the Conn closes, pending watches
// receive an EventNone event with Err set to ErrSessionExpired or
// ErrClosed. AddWatch sets a persistent (optionally recursive) watch,
// whose events arrive on PersistentWatch.Events until Remove.
//
// # Chroot
//
// WithChroot makes every path relative to a root: the root is prefixed to
// the paths sent and stripped from the paths returned (Create, Multi,
// GetEphemerals) and from event paths. GetConfig and GetConfigW read
// /zookeeper/config whatever the root, and the watch's event names it so.
//
// # Goroutines
//
// A Conn runs a connection-loop goroutine (which is also the writer: it
// gathers everything queued into one write and pings after a third of
// the session timeout of idleness), a reader goroutine per connection (it
// matches replies to the FIFO of pending requests, dispatches
// notifications and declares the connection dead after two thirds of the
// session timeout of silence), one goroutine per PersistentWatch and one
// for the state callback, if any. None of them ever blocks on a slow
// consumer, except a PersistentWatch's goroutine on its own channel.
package client
