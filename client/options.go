package client

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// Defaults and limits.
const (
	// DefaultSessionTimeout is the session timeout requested when
	// WithSessionTimeout is not given. The server clamps it to its
	// [minSessionTimeout, maxSessionTimeout] range.
	DefaultSessionTimeout = 10 * time.Second
	// DefaultBackoffMin and DefaultBackoffMax bound the delay between
	// reconnect rounds once every server has been tried.
	DefaultBackoffMin = 100 * time.Millisecond
	DefaultBackoffMax = 2 * time.Second
	// DefaultMaxReplyFrame bounds the frames the client reads, as the Java
	// client's CLIENT_MAX_PACKET_LENGTH_DEFAULT (4 MiB): a reply may exceed
	// the server's jute.maxbuffer for requests (the getData of a node
	// written at the limit, a long getChildren list), so the limit on
	// requests (WithMaxFrame) cannot also be the limit on replies.
	DefaultMaxReplyFrame = 4 << 20
	// EventBufferSize is the capacity of the Events channel. When it is
	// full the oldest event is dropped.
	EventBufferSize = 64
	// setWatchesMaxBytes bounds a SetWatches frame, as the Java client's
	// SET_WATCHES_MAX_LENGTH (128 KiB) does; a smaller max frame wins.
	setWatchesMaxBytes = 128 * 1024
	// maxCloseWait bounds how long Close waits for the closeSession reply.
	maxCloseWait = 2 * time.Second
	// sendQueueSize is the capacity of the queue of requests waiting for
	// the writer; submitting blocks (bounded by ctx) when it is full.
	sendQueueSize = 1024
	// maxBatchBytes bounds the bytes the writer gathers into one write.
	maxBatchBytes = 256 * 1024
)

// Option configures Connect.
type Option func(*options)

type authInfo struct {
	scheme string
	auth   []byte
}

type options struct {
	sessionTimeout     time.Duration
	dialer             func(ctx context.Context, network, addr string) (net.Conn, error)
	logger             *slog.Logger
	auths              []authInfo
	chroot             string
	maxFrame           int
	maxReplyFrame      int
	backoffMin         time.Duration
	backoffMax         time.Duration
	shuffle            bool
	readOnly           bool
	newSessionOnExpiry bool
	stateCallback      func(State)
}

func defaultOptions() options {
	var d net.Dialer
	return options{
		sessionTimeout: DefaultSessionTimeout,
		dialer:         d.DialContext,
		logger:         slog.New(slog.DiscardHandler),
		maxFrame:       wire.DefaultMaxFrame,
		maxReplyFrame:  DefaultMaxReplyFrame,
		backoffMin:     DefaultBackoffMin,
		backoffMax:     DefaultBackoffMax,
		shuffle:        true,
	}
}

// WithSessionTimeout sets the requested session timeout (default 10s).
// The server negotiates the final value; pings and the read timeout are
// derived from the negotiated one.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.sessionTimeout = d
		}
	}
}

// WithDialer replaces the TCP dialer, for example to use TLS.
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(o *options) {
		if dial != nil {
			o.dialer = dial
		}
	}
}

// WithTLS connects over TLS with cfg (a server's secureClientPort). Set
// cfg.Certificates to authenticate with a client certificate, which the
// server maps to an x509 identity. The server name is taken from each
// address unless cfg.ServerName is set.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) {
		o.dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c := cfg.Clone()
			if c.ServerName == "" {
				if host, _, err := net.SplitHostPort(addr); err == nil {
					c.ServerName = host
				}
			}
			d := tls.Dialer{Config: c}
			return d.DialContext(ctx, network, addr)
		}
	}
}

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithAuth adds a credential sent right after every session handshake
// (also after every reconnect), before any other request. If the server
// rejects it the Conn reports StateAuthFailed and stops: every operation
// then fails with ErrAuthFailed.
func WithAuth(scheme string, auth []byte) Option {
	return func(o *options) {
		o.auths = append(o.auths, authInfo{scheme: scheme, auth: append([]byte(nil), auth...)})
	}
}

// WithChroot makes every path relative to root: root is prefixed to the
// paths sent and stripped from the paths returned and from event paths.
func WithChroot(root string) Option {
	return func(o *options) { o.chroot = root }
}

// WithMaxFrame bounds the requests written (default wire.DefaultMaxFrame,
// ZooKeeper's jute.maxbuffer): a larger request fails with
// ErrBadArguments. Replies are bounded by WithMaxReplyFrame, which it
// raises to n if n is larger.
func WithMaxFrame(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxFrame = n
			o.maxReplyFrame = max(o.maxReplyFrame, n)
		}
	}
}

// WithMaxReplyFrame bounds the frames read (default DefaultMaxReplyFrame):
// a larger reply breaks the connection.
func WithMaxReplyFrame(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxReplyFrame = n
		}
	}
}

// WithReconnectBackoff bounds the delay between reconnect rounds: after
// every server has been tried without success, the client waits min, then
// doubles the delay up to max, with jitter.
func WithReconnectBackoff(min, max time.Duration) Option {
	return func(o *options) {
		if min > 0 {
			o.backoffMin = min
		}
		if max >= o.backoffMin {
			o.backoffMax = max
		}
	}
}

// WithShuffleHosts sets whether the server list is shuffled (default true).
func WithShuffleHosts(shuffle bool) Option {
	return func(o *options) { o.shuffle = shuffle }
}

// WithReadOnly sets the readOnly flag of the handshake, allowing the
// session to be served by a read-only server (StateConnectedReadOnly).
// The flag byte is always sent (false by default), as the Java client does.
func WithReadOnly(readOnly bool) Option {
	return func(o *options) { o.readOnly = readOnly }
}

// WithNewSessionOnExpiry sets what happens when the server expires the
// session. By default (false) the Conn reports StateExpired and stops:
// every operation then fails with ErrSessionExpired. With true it reports
// StateExpired, fails the pending operations and watches, and then
// establishes a new session (a new SessionID).
func WithNewSessionOnExpiry(newSession bool) Option {
	return func(o *options) { o.newSessionOnExpiry = newSession }
}

// WithStateCallback registers f to be called with every state change, in
// order, from a goroutine owned by the Conn (never from the I/O
// goroutines, so f may call the Conn). f must return for later states to
// be delivered.
func WithStateCallback(f func(State)) Option {
	return func(o *options) { o.stateCallback = f }
}
