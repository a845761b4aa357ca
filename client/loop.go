package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// errHandshakeExpired reports a ConnectResponse with timeOut <= 0.
var errHandshakeExpired = errors.New("zk: session expired during handshake")

// run is the connection loop: it connects, serves the connection until it
// breaks, and reconnects, until Close, expiry (without
// WithNewSessionOnExpiry) or a rejected credential.
func (c *Conn) run() {
	defer c.shutdown()
	failures := 0
	next := 0
	var lostAt time.Time // when the last connection broke
	for {
		if c.isClosing() {
			return
		}
		if failures >= len(c.hosts) && !c.sleepBackoff(failures-len(c.hosts)) {
			return
		}
		addr := c.takePreferred() // a read-write server a probe found
		if addr == "" {
			addr = c.hosts[next]
			next = (next + 1) % len(c.hosts)
		}
		nc, timeout, readOnly, err := c.connect(addr)
		switch {
		case errors.Is(err, errHandshakeExpired):
			if !c.onExpired(addr) {
				return
			}
			failures = 0
			continue
		case errors.Is(err, ErrAuthFailed):
			c.setTerminal(ErrAuthFailed)
			c.emit(StateAuthFailed, addr, ErrAuthFailed)
			return
		case err != nil:
			failures++
			if !c.isClosing() {
				c.log.Info("zk: connect failed", "server", addr, "err", err)
			}
			if c.expiredLocally() {
				c.log.Warn("zk: no server heard from for 4/3 of the session timeout: session expired",
					"session", fmt.Sprintf("0x%x", c.SessionID()))
				if !c.onExpired(addr) {
					return
				}
				failures = 0
				continue
			}
			if !lostAt.IsZero() && time.Since(lostAt) >= c.sessionTimeout() {
				// Requests queued while no server can be reached for a
				// session timeout fail.
				c.failQueued(ErrConnectionLoss)
			}
			continue
		}
		failures = 0
		st := StateConnected
		if readOnly {
			st = StateConnectedReadOnly
		}
		c.emit(st, addr, nil)
		c.watches.stateChanged(st, nil)
		c.establishedOnce.Do(func() { close(c.established) })
		err = c.serve(nc, addr, timeout, readOnly)
		lostAt = time.Now()
		if c.closeRequested.Load() {
			<-c.closing
			return
		}
		if c.isClosing() {
			return
		}
		c.log.Info("zk: connection lost", "server", addr, "err", err)
		c.emit(StateDisconnected, addr, err)
		c.watches.stateChanged(StateDisconnected, nil)
	}
}

// sessionTimeout is the negotiated session timeout, or the requested one
// before the first session.
func (c *Conn) sessionTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timeout > 0 {
		return c.timeout
	}
	return c.opts.sessionTimeout
}

// expiredLocally reports whether no server has been heard from for
// localExpiry of the negotiated timeout: the servers have expired the
// session by then (ZooKeeper expires a session between T and T + one tick
// after it last heard from the client), so the Conn reports the expiry
// itself instead of staying Disconnected for as long as the partition
// lasts, as the Java client does since 3.9.3 (ZOOKEEPER-4508) and as
// Curator reports LOST. Only a session a read-write server has served
// expires this way.
func (c *Conn) expiredLocally() bool {
	c.mu.Lock()
	live := c.sessionID != 0 && c.seenRW && c.timeout > 0
	timeout := c.timeout
	c.mu.Unlock()
	last := c.lastHeard.Load()
	return live && last != 0 && time.Duration(monoNow()-last) >= localExpiry(timeout)
}

// localExpiry is how long a session may go without hearing from any
// server before the client declares it expired: 4/3 of the negotiated
// timeout, the Java client's expirationTimeout.
func localExpiry(timeout time.Duration) time.Duration { return timeout * 4 / 3 }

func (c *Conn) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

// sleepBackoff waits before the next reconnect round; it returns false if
// the Conn is closing.
func (c *Conn) sleepBackoff(round int) bool {
	d := c.opts.backoffMin
	for i := 0; i < round && d < c.opts.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.opts.backoffMax)
	d = d/2 + rand.N(d/2+1) // jitter in [d/2, d]
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.closing:
		return false
	}
}

func (c *Conn) setTerminal(err error) {
	c.mu.Lock()
	c.termErr = err
	c.mu.Unlock()
}

// connect dials addr and performs the handshake: ConnectRequest, then the
// credentials (xid -4), each answered before the connection is served.
func (c *Conn) connect(addr string) (net.Conn, time.Duration, bool, error) {
	limit := c.opts.sessionTimeout / time.Duration(len(c.hosts))
	limit = max(limit, time.Second)
	ctx, cancel := context.WithTimeout(c.ctx, limit)
	defer cancel()
	nc, err := c.opts.dialer(ctx, "tcp", addr)
	if err != nil {
		return nil, 0, false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	timeout, readOnly, err := c.handshake(nc, addr)
	if !stop() || err != nil {
		_ = nc.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, 0, false, err
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		_ = nc.Close()
		return nil, 0, false, err
	}
	return nc, timeout, readOnly, nil
}

func (c *Conn) handshake(nc net.Conn, addr string) (time.Duration, bool, error) {
	c.mu.Lock()
	req := wire.ConnectRequest{
		LastZxidSeen: c.lastZxid.Load(),
		TimeOut:      int32(c.opts.sessionTimeout / time.Millisecond),
		Passwd:       make([]byte, wire.PasswordSize),
		ReadOnly:     c.opts.readOnly,
		HasReadOnly:  true,
	}
	if c.seenRW {
		req.SessionID, req.Passwd = c.sessionID, append([]byte(nil), c.passwd...)
	}
	auths := append([]authInfo(nil), c.auths...)
	c.mu.Unlock()

	e := wire.NewEncoder(nil)
	start := e.BeginFrame()
	req.Encode(e)
	e.EndFrame(start)
	if _, err := nc.Write(e.Bytes()); err != nil {
		return 0, false, err
	}
	frame, err := wire.ReadFrame(nc, nil, c.opts.maxReplyFrame)
	if err != nil {
		return 0, false, fmt.Errorf("reading connect response: %w", err)
	}
	var resp wire.ConnectResponse
	if err := wire.NewDecoder(frame).Record(&resp); err != nil {
		return 0, false, err
	}
	if resp.TimeOut <= 0 {
		return 0, false, errHandshakeExpired
	}
	if err := c.sendAuths(nc, auths); err != nil {
		return 0, false, err
	}
	timeout := time.Duration(resp.TimeOut) * time.Millisecond
	c.mu.Lock()
	c.sessionID = resp.SessionID
	c.passwd = resp.Passwd
	c.timeout = timeout
	c.server = addr
	c.seenRW = c.seenRW || !resp.ReadOnly
	c.mu.Unlock()
	return timeout, resp.ReadOnly, nil
}

// sendAuths writes every credential and reads their replies. A rejected
// credential returns ErrAuthFailed.
func (c *Conn) sendAuths(nc net.Conn, auths []authInfo) error {
	if len(auths) == 0 {
		return nil
	}
	e := wire.NewEncoder(nil)
	for _, a := range auths {
		start := e.BeginFrame()
		hdr := wire.RequestHeader{Xid: wire.XidAuth, Op: wire.OpAuth}
		hdr.Encode(e)
		pkt := wire.AuthPacket{Scheme: a.scheme, Auth: a.auth}
		pkt.Encode(e)
		e.EndFrame(start)
	}
	if _, err := nc.Write(e.Bytes()); err != nil {
		return err
	}
	for n := 0; n < len(auths); {
		frame, err := wire.ReadFrame(nc, nil, c.opts.maxReplyFrame)
		if err != nil {
			return fmt.Errorf("reading auth reply: %w", err)
		}
		var h wire.ReplyHeader
		if err := wire.NewDecoder(frame).Record(&h); err != nil {
			return err
		}
		switch {
		case h.Xid != wire.XidAuth:
			continue // nothing else can be pending yet
		case h.Err == wire.ErrAuthFailed:
			return ErrAuthFailed
		case h.Err != wire.OK:
			return fmt.Errorf("auth: %w", h.Err)
		}
		n++
	}
	return nil
}

// onExpired handles an expired session. It returns true when a new session
// should be established.
func (c *Conn) onExpired(addr string) bool {
	c.emit(StateExpired, addr, ErrSessionExpired)
	c.mu.Lock()
	c.sessionID = 0
	c.passwd = make([]byte, wire.PasswordSize)
	c.timeout = 0
	c.mu.Unlock()
	c.failQueued(ErrSessionExpired)
	c.watches.terminate(StateExpired, ErrSessionExpired)
	if !c.opts.newSessionOnExpiry {
		c.setTerminal(ErrSessionExpired)
		return false
	}
	return true
}

// failQueued fails every request still waiting for the writer.
func (c *Conn) failQueued(err error) {
	for {
		select {
		case r := <-c.sendq:
			r.complete(0, err)
		default:
			return
		}
	}
}

// shutdown runs when the loop exits.
func (c *Conn) shutdown() {
	err := c.terminalErr()
	st := StateClosed
	if errors.Is(err, ErrSessionExpired) {
		st = StateExpired
	} else if errors.Is(err, ErrAuthFailed) {
		st = StateAuthFailed
	}
	c.watches.terminate(st, err)
	c.failQueued(err)
	close(c.loopDone)
}
