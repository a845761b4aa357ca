package client

import (
	"context"
	"errors"
	"io"
	"time"
)

// While connected to a read-only server, the Conn looks for a read-write
// one, as the Java client's pingRwServer does: rwProbeMin after connecting,
// then at doubling intervals up to rwProbeMax, it asks every other server
// "isro". The first that answers "rw" is the next server the Conn
// connects to, and the read-only connection is closed for it (a
// disconnection, then StateConnected there, as with the Java client).

const (
	// rwProbeMin and rwProbeMax bound the interval between two rounds of
	// probes (the Java client's minPingRwTimeout and maxPingRwTimeout).
	rwProbeMin = 100 * time.Millisecond
	rwProbeMax = 60 * time.Second
	// rwProbeTimeout bounds one probe: dial, "isro", answer.
	rwProbeTimeout = 2 * time.Second
)

// errFoundReadWrite ends a read-only connection once a read-write server
// answered.
var errFoundReadWrite = errors.New("zk: leaving a read-only server for a read-write one")

// seekReadWrite probes the other servers while cs, a read-only
// connection, lives.
func (c *Conn) seekReadWrite(cs *connState) {
	wait := rwProbeMin
	for {
		t := time.NewTimer(wait)
		select {
		case <-cs.dead:
			t.Stop()
			return
		case <-t.C:
		}
		for _, addr := range c.hosts {
			if addr == cs.addr {
				continue
			}
			if c.isReadWrite(addr) {
				c.preferHost(addr)
				cs.fail(errFoundReadWrite)
				return
			}
			select {
			case <-cs.dead:
				return
			default:
			}
		}
		wait = min(2*wait, rwProbeMax)
	}
}

// isReadWrite asks the server at addr "isro" and reports whether it
// answered "rw".
func (c *Conn) isReadWrite(addr string) bool {
	ctx, cancel := context.WithTimeout(c.ctx, rwProbeTimeout)
	defer cancel()
	nc, err := c.opts.dialer(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := nc.Write([]byte("isro")); err != nil {
		return false
	}
	var answer [2]byte
	_, err = io.ReadFull(nc, answer[:])
	return err == nil && string(answer[:]) == "rw"
}

// preferHost makes addr the next server connected to.
func (c *Conn) preferHost(addr string) {
	c.mu.Lock()
	c.preferred = addr
	c.mu.Unlock()
}

// takePreferred returns and forgets the server preferHost named, if any.
func (c *Conn) takePreferred() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.preferred
	c.preferred = ""
	return p
}
