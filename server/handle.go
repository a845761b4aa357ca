package server

import (
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
)

// handle decodes one request frame and returns its pending reply. stop
// means the connection must not read further: with a reply, it closes once
// the reply is flushed; without one, at once.
func (c *conn) handle(frame []byte) (p *pendingReply, stop bool) {
	d := wire.NewDecoder(frame)
	var h wire.RequestHeader
	if err := h.Decode(d); err != nil {
		c.logDrop("request header", err)
		return nil, true
	}
	if sid := c.SessionID(); sid != 0 {
		c.s.touch(sid)
	}
	c.s.metrics.request(h.Op)
	c.stats.lastOp.Store(int32(h.Op))
	if h.Xid >= 0 {
		// As ZooKeeper, cons shows the last real xid, never ping's or auth's.
		c.stats.lastXid.Store(h.Xid)
	}
	p = &pendingReply{xid: h.Xid, op: h.Op, start: time.Now()}
	switch h.Op {
	case wire.OpPing:
		p.xid = wire.XidPing // whatever xid it came with, as ZooKeeper answers
		c.ordered(p, func() (wire.Code, wire.Record, int64) { return wire.OK, nil, 0 })
		return p, false
	case wire.OpAuth:
		return p, c.authenticate(d, p)
	case wire.OpSync:
		if c.readOnly.Load() {
			p.code = wire.ErrNotReadOnly
			return p, false
		}
		var r wire.PathRequest
		if err := r.Decode(d); err != nil {
			c.logDrop("sync", err)
			return nil, true
		}
		c.deferred.Add(1)
		p.future = c.s.syncFuture()
		p.finish = func(*fsm.Result) (wire.Code, wire.Record) { return wire.OK, &wire.PathRequest{Path: r.Path} }
		return p, false
	case wire.OpCloseSession:
		if c.readOnly.Load() { // a read-only session is local to this node
			p.closeAfter = true
			return p, true
		}
		if !c.awaitDeferredReads() {
			return nil, true
		}
		c.closingSession.Store(true)
		p.future = c.s.proposeOn(&fsm.Command{Type: fsm.CmdCloseSession, Session: c.SessionID()}, &c.lane)
		p.finish = func(*fsm.Result) (wire.Code, wire.Record) { return wire.OK, nil }
		c.deferred.Add(1)
		p.closeAfter = true
		return p, true
	}
	req, err := wire.DecodeRequest(h.Op, d)
	switch {
	case h.Op == wire.OpSASL && err == nil:
		// As ZooKeeper without SASL configured (no SASL server for the
		// connection): OK with a null token, and the connection stays.
		c.ordered(p, func() (wire.Code, wire.Record, int64) { return wire.OK, &wire.SASLRequest{}, 0 })
		return p, false
	case errors.Is(err, wire.ErrUnimplemented):
		// As ZooKeeper's UnimplementedRequestProcessor: answer, then close.
		p.code, p.closeAfter = wire.ErrUnimplemented, true
		return p, true
	case errors.Is(err, wire.ErrInvalidMultiOp):
		// A multi or multiRead holding an op it does not allow: as
		// ZooKeeper, MARSHALLINGERROR, and the connection stays (the
		// frame's length delimits the request).
		c.s.log.Info("refusing a request", "op", h.Op.String(), "remote", c.ip, "err", err)
		p.code = wire.ErrMarshallingError
		return p, false
	case err != nil:
		c.logDrop("request "+h.Op.String(), err)
		return nil, true
	}
	if c.readOnly.Load() && writesState(h.Op) {
		p.code = wire.ErrNotReadOnly
		return p, false
	}
	if r, ok := req.(*wire.ReconfigRequest); ok {
		c.reconfig(p, r)
		return p, false
	}
	if cmd, code := c.writeCommand(h.Op, req); cmd != nil || code != wire.OK {
		if cmd != nil && !c.awaitDeferredReads() {
			return nil, true
		}
		return p, c.submitWrite(p, h.Op, cmd, code)
	}
	if view := c.watchingRead(h.Op, req); view != nil {
		c.deferRead()
		p.viewFn = view
		return p, false
	}
	c.ordered(p, c.readHandler(h.Op, req))
	return p, false
}

// ordered runs a read now if nothing earlier on this connection is still
// unresolved, or defers it to the writer, which resolves replies in order.
// Either way the read observes every earlier request's effects and no
// later read observes an older state.
func (c *conn) ordered(p *pendingReply, fn reply) {
	if c.deferred.Load() == 0 {
		p.code, p.resp, p.at = fn()
		return
	}
	c.deferRead()
	p.deferFn = fn
}

// deferRead counts a read that the writer will answer in order.
func (c *conn) deferRead() {
	c.deferred.Add(1)
	c.deferredReads.Add(1)
}

// awaitDeferredReads blocks until every read deferred behind earlier
// writes has been answered, so that the write about to be proposed cannot
// be applied before them: a read must reflect the writes sent before it on
// its connection and none sent after (ZooKeeper's CommitProcessor holds
// commits while reads are in progress). A reconfig sent before it is
// waited for too (it runs apart from the connection's writes; see
// reconfig.go). It reports false if the connection closed meanwhile.
func (c *conn) awaitDeferredReads() bool {
	if f := c.reconfiguring; f != nil {
		select {
		case <-f.done:
			c.reconfiguring = nil
		case <-c.done:
			return false
		}
	}
	for c.deferredReads.Load() > 0 {
		select {
		case <-c.readsDone:
		case <-c.done:
			return false
		}
	}
	return true
}

// submitWrite proposes a write, or answers it at once with code. It
// reports whether the connection must read no more: the write was refused
// before it reached Raft's log (the writer closes the connection after
// answering it), so no later request of the client may be proposed.
func (c *conn) submitWrite(p *pendingReply, op wire.OpCode, cmd *fsm.Command, code wire.Code) (stop bool) {
	if code != wire.OK {
		p.code = code
		return false
	}
	if cmd.Multi && len(cmd.Ops) == 0 {
		p.resp = &wire.MultiResponse{}
		return false
	}
	cmd.Session = c.SessionID()
	cmd.Auth = c.commandAuth()
	cmd.EnforceQuota = c.s.cfg.EnforceQuota
	cmd.NoTTL = !c.s.cfg.TTLEnabled
	c.deferred.Add(1)
	p.future = c.s.proposeOn(cmd, &c.lane)
	c.lastWrite = p.future
	p.finish = func(r *fsm.Result) (wire.Code, wire.Record) { return writeReply(op, r) }
	return refusedAtOnce(p.future)
}

// authenticate handles an AuthPacket (xid -4). It reports whether the
// connection must close (authentication failed, as ZooKeeper does).
func (c *conn) authenticate(d *wire.Decoder, p *pendingReply) bool {
	var a wire.AuthPacket
	if err := a.Decode(d); err != nil {
		c.logDrop("auth", err)
		p.code, p.closeAfter = wire.ErrAuthFailed, true
		return true
	}
	var id wire.Id
	super := false
	switch a.Scheme {
	case "digest":
		id = wire.Id{Scheme: "digest", ID: digestID(a.Auth)}
		super = c.s.cfg.SuperDigest != "" && id.ID == c.s.cfg.SuperDigest
	case "ip":
		id = wire.Id{Scheme: "ip", ID: c.ip}
	case "x509":
		// As ZooKeeper's X509AuthenticationProvider: the identity of the
		// connection's verified client certificate (which the TLS
		// handshake already gave it), whatever the packet carries;
		// without one, AUTHFAILED.
		if xid, ok := x509Identity(c.nc); ok {
			id = xid
		}
	}
	if id.Scheme == "" {
		c.s.log.Info("authentication failed", "scheme", a.Scheme, "remote", c.ip)
		p.closeAfter = true
		c.ordered(p, func() (wire.Code, wire.Record, int64) { return wire.ErrAuthFailed, nil, 0 })
		return true
	}
	// Reads sent before the auth and still waiting behind a write are
	// checked with the identities they arrived with, as ZooKeeper's
	// requests carry a copy of the connection's auth info.
	if !c.awaitDeferredReads() {
		return true
	}
	if super {
		c.addIdentity(fsm.SuperID)
	}
	c.addIdentity(id)
	c.ordered(p, func() (wire.Code, wire.Record, int64) { return wire.OK, nil, 0 })
	return false
}

// digestID is the digest identity credentials auth give, as ZooKeeper's
// DigestAuthenticationProvider forms it: it makes a Java String of the
// bytes first (new String(authData): UTF-8, malformed input replaced as
// OpenJDK does), then generateDigest, which never fails: the user is the
// text before the first ':' (all of it if there is none).
func digestID(auth []byte) string {
	cred := string(javaUTF8(auth))
	user, _, _ := strings.Cut(cred, ":")
	return user + ":" + DigestOf(cred)
}

// DigestOf returns ZooKeeper's digest of "user:password":
// base64(sha1("user:password")).
func DigestOf(userPassword string) string {
	sum := sha1.Sum([]byte(userPassword))
	return base64.StdEncoding.EncodeToString(sum[:])
}

func appendUnique(ids []wire.Id, id wire.Id) []wire.Id {
	for _, x := range ids {
		if x == id {
			return ids
		}
	}
	return append(ids, id)
}

// identities returns the connection's authenticated ids. The slice is
// shared and never modified: addIdentity replaces it.
func (c *conn) identities() []wire.Id {
	if ids := c.auth.Load(); ids != nil {
		return *ids
	}
	return nil
}

func (c *conn) addIdentity(id wire.Id) {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	ids := appendUnique(append([]wire.Id(nil), c.identities()...), id)
	c.auth.Store(&ids)
}

// commandAuth is the identity list a write carries into Raft, where Apply
// checks it against the ACLs of the nodes it changes.
func (c *conn) commandAuth() []wire.Id {
	if c.s.cfg.SkipACL {
		return []wire.Id{fsm.SuperID}
	}
	return c.identities()
}

// canRead reports whether this connection holds perm on a node with acl.
func (c *conn) allowed(acl []wire.ACL, perm wire.Perm) bool {
	return c.s.cfg.SkipACL || fsm.CheckACL(acl, perm, c.identities())
}

// expandACL removes duplicate entries, then replaces "auth" entries by the
// caller's authenticated identities (digest, x509), as ZooKeeper's
// fixupACL. With none, the entry stays and Apply rejects it with
// InvalidACL.
func (c *conn) expandACL(acl []wire.ACL) []wire.ACL {
	acl = uniqueACL(acl)
	hasAuth := false
	for _, a := range acl {
		hasAuth = hasAuth || a.ID.Scheme == "auth"
	}
	if !hasAuth {
		return acl
	}
	var out []wire.ACL
	for _, a := range acl {
		if a.ID.Scheme != "auth" {
			out = append(out, a)
			continue
		}
		expanded := false
		for _, id := range c.identities() {
			if id.Scheme == "digest" || id.Scheme == "x509" {
				out = append(out, wire.ACL{Perms: a.Perms, ID: id})
				expanded = true
			}
		}
		if !expanded {
			out = append(out, a)
		}
	}
	return out
}

// writesState reports whether op changes the tree (refused with
// NotReadOnly on a read-only connection).
func writesState(op wire.OpCode) bool {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL, wire.OpDelete,
		wire.OpSetData, wire.OpSetACL, wire.OpCheck, wire.OpMulti, wire.OpReconfig:
		return true
	}
	return false
}

// uniqueACL returns acl without repeated entries, keeping the first of
// each (ZooKeeper's fixupACL removeDuplicates, before "auth" expansion).
func uniqueACL(acl []wire.ACL) []wire.ACL {
	for i := 1; i < len(acl); i++ {
		if slices.Contains(acl[:i], acl[i]) {
			out := slices.Clone(acl[:i])
			for _, a := range acl[i+1:] {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
			return out
		}
	}
	return acl
}
