package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// CreateOption configures Create and CreateOp.
type CreateOption func(*createOptions)

type createOptions struct {
	ttl time.Duration
}

// WithTTL sets the TTL of a ModePersistentWithTTL or
// ModePersistentSequentialWithTTL node (millisecond resolution; the server
// must run with extendedTypesEnabled, or it answers ErrUnimplemented).
func WithTTL(d time.Duration) CreateOption {
	return func(o *createOptions) { o.ttl = d }
}

// serverPath validates a client path and prefixes the chroot.
func (c *Conn) serverPath(p string) (string, error) {
	if err := wire.ValidatePath(p); err != nil {
		return "", err
	}
	return c.prefix(p), nil
}

func (c *Conn) prefix(p string) string {
	if c.opts.chroot == "" {
		return p
	}
	if p == "/" {
		return c.opts.chroot
	}
	return c.opts.chroot + p
}

// strip removes the chroot from a server path; paths outside the chroot
// are returned unchanged.
func (c *Conn) strip(p string) string {
	root := c.opts.chroot
	switch {
	case root == "":
		return p
	case p == root:
		return "/"
	case strings.HasPrefix(p, root) && len(p) > len(root) && p[len(root)] == '/':
		return p[len(root):]
	}
	return p
}

// createRequest builds the request of a create: create2 (15) for the
// normal modes, createContainer (19) and createTTL (21).
func (c *Conn) createRequest(path string, data []byte, mode CreateMode, acl []ACL, opts []CreateOption) (wire.OpCode, wire.Record, error) {
	var o createOptions
	for _, opt := range opts {
		opt(&o)
	}
	if !mode.Valid() {
		return 0, nil, fmt.Errorf("%w: invalid create mode %v", ErrBadArguments, mode)
	}
	sp := ""
	if mode.IsSequential() {
		if err := wire.ValidateSequentialPrefix(path); err != nil {
			return 0, nil, err
		}
		sp = c.opts.chroot + path
	} else {
		var err error
		if sp, err = c.serverPath(path); err != nil {
			return 0, nil, err
		}
	}
	acl = openACL(acl)
	switch {
	case mode.IsTTL():
		ms := o.ttl.Milliseconds()
		if ms <= 0 || ms > wire.MaxTTL {
			return 0, nil, fmt.Errorf("%w: TTL %v out of range", ErrBadArguments, o.ttl)
		}
		return wire.OpCreateTTL, &wire.CreateTTLRequest{Path: sp, Data: data, ACL: acl, Flags: mode, TTL: ms}, nil
	case o.ttl != 0:
		return 0, nil, fmt.Errorf("%w: TTL given for mode %v", ErrBadArguments, mode)
	case mode.IsContainer():
		return wire.OpCreateContainer, &wire.CreateRequest{Path: sp, Data: data, ACL: acl, Flags: mode}, nil
	}
	return wire.OpCreate2, &wire.CreateRequest{Path: sp, Data: data, ACL: acl, Flags: mode}, nil
}

// Create creates a znode and returns its path (with the sequence suffix
// for sequential modes) and its Stat. A nil acl means OPEN_ACL_UNSAFE
// (world:anyone, all permissions). TTL modes need WithTTL.
//
// If ctx ends before the reply, the node may still have been created.
func (c *Conn) Create(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL, opts ...CreateOption) (string, *Stat, error) {
	op, body, err := c.createRequest(path, data, mode, acl, opts)
	if err != nil {
		return "", nil, err
	}
	var resp wire.Create2Response
	if err := c.call(ctx, op, body, &resp, nil); err != nil {
		return "", nil, err
	}
	return c.strip(resp.Path), &resp.Stat, nil
}

// Delete deletes a znode; version -1 matches any version.
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	return c.call(ctx, wire.OpDelete, &wire.DeleteRequest{Path: sp, Version: version}, nil, nil)
}

// Exists reports whether a znode exists, with its Stat when it does.
func (c *Conn) Exists(ctx context.Context, path string) (*Stat, bool, error) {
	stat, ok, _, err := c.exists(ctx, path, false)
	return stat, ok, err
}

// ExistsW is Exists plus a one-shot watch: NodeCreated if the node was
// missing; NodeDataChanged or NodeDeleted if it existed. The watch is set
// in both cases. The channel receives exactly one event and is closed.
func (c *Conn) ExistsW(ctx context.Context, path string) (*Stat, bool, <-chan Event, error) {
	return c.exists(ctx, path, true)
}

func (c *Conn) exists(ctx context.Context, path string, watch bool) (*Stat, bool, <-chan Event, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, false, nil, err
	}
	var resp wire.StatResponse
	req := &wire.PathWatchRequest{Path: sp, Watch: watch}
	var ch <-chan Event
	if watch {
		ch, err = c.watchCall(ctx, wire.OpExists, req, &resp, sp, func(code wire.Code) (watchKind, bool) {
			switch code {
			case wire.OK:
				return watchData, true
			case wire.ErrNoNode:
				return watchExist, true
			}
			return 0, false
		})
	} else {
		err = c.call(ctx, wire.OpExists, req, &resp, nil)
	}
	switch {
	case errors.Is(err, ErrNoNode):
		return nil, false, ch, nil
	case err != nil:
		return nil, false, nil, err
	}
	return &resp.Stat, true, ch, nil
}

// watchCall sends a read that sets a watch; pick chooses, from the reply
// code, the table the watch goes into (or none). The watch is registered
// in the reader goroutine before any later notification is processed.
func (c *Conn) watchCall(ctx context.Context, op wire.OpCode, body, resp wire.Record, sp string, pick func(wire.Code) (watchKind, bool)) (<-chan Event, error) {
	return c.watchCallAs(ctx, op, body, resp, sp, "", pick)
}

// watchCallAs is watchCall for a watch whose event reports clientPath
// (if not "") instead of sp without the chroot.
func (c *Conn) watchCallAs(ctx context.Context, op wire.OpCode, body, resp wire.Record, sp, clientPath string, pick func(wire.Code) (watchKind, bool)) (<-chan Event, error) {
	ch := make(chan Event, 1)
	r := newRequest(op, body, resp)
	r.onReply = func(code wire.Code) {
		if kind, ok := pick(code); ok {
			c.watches.addOneShot(kind, sp, clientPath, ch, r)
		}
	}
	return ch, c.roundTrip(ctx, r)
}

func okOnly(kind watchKind) func(wire.Code) (watchKind, bool) {
	return func(code wire.Code) (watchKind, bool) { return kind, code == wire.OK }
}

// Get returns a znode's data and Stat.
func (c *Conn) Get(ctx context.Context, path string) ([]byte, *Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, nil, err
	}
	var resp wire.GetDataResponse
	if err := c.call(ctx, wire.OpGetData, &wire.PathWatchRequest{Path: sp}, &resp, nil); err != nil {
		return nil, nil, err
	}
	return resp.Data, &resp.Stat, nil
}

// GetW is Get plus a one-shot data watch (NodeDataChanged or
// NodeDeleted). No watch is set when the node does not exist.
func (c *Conn) GetW(ctx context.Context, path string) ([]byte, *Stat, <-chan Event, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, nil, nil, err
	}
	var resp wire.GetDataResponse
	req := &wire.PathWatchRequest{Path: sp, Watch: true}
	ch, err := c.watchCall(ctx, wire.OpGetData, req, &resp, sp, okOnly(watchData))
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Data, &resp.Stat, ch, nil
}

// Children returns the names of a znode's children (unordered) and its
// Stat (getChildren2).
func (c *Conn) Children(ctx context.Context, path string) ([]string, *Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, nil, err
	}
	var resp wire.GetChildren2Response
	if err := c.call(ctx, wire.OpGetChildren2, &wire.PathWatchRequest{Path: sp}, &resp, nil); err != nil {
		return nil, nil, err
	}
	return resp.Children, &resp.Stat, nil
}

// ChildrenW is Children plus a one-shot child watch
// (NodeChildrenChanged or NodeDeleted). No watch is set when the node
// does not exist.
func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, *Stat, <-chan Event, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, nil, nil, err
	}
	var resp wire.GetChildren2Response
	req := &wire.PathWatchRequest{Path: sp, Watch: true}
	ch, err := c.watchCall(ctx, wire.OpGetChildren2, req, &resp, sp, okOnly(watchChild))
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Children, &resp.Stat, ch, nil
}

// Set sets a znode's data; version -1 matches any version.
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (*Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	var resp wire.StatResponse
	req := &wire.SetDataRequest{Path: sp, Data: data, Version: version}
	if err := c.call(ctx, wire.OpSetData, req, &resp, nil); err != nil {
		return nil, err
	}
	return &resp.Stat, nil
}

// GetACL returns a znode's ACL and Stat.
func (c *Conn) GetACL(ctx context.Context, path string) ([]ACL, *Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, nil, err
	}
	var resp wire.GetACLResponse
	if err := c.call(ctx, wire.OpGetACL, &wire.PathRequest{Path: sp}, &resp, nil); err != nil {
		return nil, nil, err
	}
	return resp.ACL, &resp.Stat, nil
}

// SetACL sets a znode's ACL; version is compared with the node's aversion
// (-1 matches any).
func (c *Conn) SetACL(ctx context.Context, path string, acl []ACL, version int32) (*Stat, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	var resp wire.StatResponse
	req := &wire.SetACLRequest{Path: sp, ACL: acl, Version: version}
	if err := c.call(ctx, wire.OpSetACL, req, &resp, nil); err != nil {
		return nil, err
	}
	return &resp.Stat, nil
}

// Sync waits until the server this Conn is connected to has applied every
// update committed before the call.
func (c *Conn) Sync(ctx context.Context, path string) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	return c.call(ctx, wire.OpSync, &wire.PathRequest{Path: sp}, &wire.PathRequest{}, nil)
}

// GetEphemerals returns the paths of this session's ephemeral nodes whose
// path starts with prefix ("" or "/" for all). The match is on the string,
// as ZooKeeper does it: "/a" also matches "/ab/x".
func (c *Conn) GetEphemerals(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		prefix = "/"
	}
	sp, err := c.serverPath(prefix)
	if err != nil {
		return nil, err
	}
	var resp wire.GetEphemeralsResponse
	if err := c.call(ctx, wire.OpGetEphemerals, &wire.PathRequest{Path: sp}, &resp, nil); err != nil {
		return nil, err
	}
	// The server matches a string prefix: under a chroot "/app", drop
	// "/apple/..." and strip the rest.
	out := resp.Ephemerals[:0]
	for _, p := range resp.Ephemerals {
		if cp := c.strip(p); c.opts.chroot == "" || cp != p {
			out = append(out, cp)
		}
	}
	return out, nil
}

// GetAllChildrenNumber returns the number of descendants of a znode.
func (c *Conn) GetAllChildrenNumber(ctx context.Context, path string) (int32, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return 0, err
	}
	var resp wire.GetAllChildrenNumberResponse
	if err := c.call(ctx, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: sp}, &resp, nil); err != nil {
		return 0, err
	}
	return resp.TotalNumber, nil
}

// WhoAmI returns the identities the server associates with this session.
func (c *Conn) WhoAmI(ctx context.Context) ([]ClientInfo, error) {
	var resp wire.WhoAmIResponse
	if err := c.call(ctx, wire.OpWhoAmI, nil, &resp, nil); err != nil {
		return nil, err
	}
	return resp.ClientInfo, nil
}

// AddAuth adds a credential to the session (auth packet, xid -4). As the
// Java client's addAuthInfo, the client remembers it from the call on and
// sends it again, with every credential before it, first on each new
// connection: also when the connection is lost before the server's
// answer (AddAuth then returns ErrConnectionLoss, and the credential
// still comes into effect on the next connection; calling AddAuth again
// with it is harmless, and keeps one copy). A rejected credential returns
// ErrAuthFailed, is reported as StateAuthFailed and forgotten; the server
// then closes the connection (requests in flight fail with
// ErrConnectionLoss) and the client reconnects to the same session
// without it. A credential the server rejects during a reconnect ends
// the Conn with ErrAuthFailed, as one given with WithAuth.
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a := &authInfo{scheme: scheme, auth: append([]byte(nil), auth...)}
	r := newRequest(wire.OpAuth, &wire.AuthPacket{Scheme: scheme, Auth: a.auth}, nil)
	r.auth = a
	r.authAdded = c.rememberAuth(*a)
	if len(r.frame)-4 > c.opts.maxFrame {
		c.forgetAuth(r)
		return errOversized(len(r.frame)-4, c.opts.maxFrame)
	}
	if err := c.submit(ctx, r); err != nil {
		c.forgetAuth(r) // never sent as a request
		return err
	}
	return c.wait(ctx, r)
}

// rememberAuth adds a to the credentials sent on each new connection. It
// reports false when the list already holds it.
func (c *Conn) rememberAuth(a authInfo) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.auths {
		if x.scheme == a.scheme && bytes.Equal(x.auth, a.auth) {
			return false
		}
	}
	c.auths = append(c.auths, a)
	return true
}

// forgetAuth removes the credential r's AddAuth added (if it added it).
func (c *Conn) forgetAuth(r *request) {
	if !r.authAdded {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.auths {
		if x.scheme == r.auth.scheme && bytes.Equal(x.auth, r.auth.auth) {
			c.auths = slices.Delete(c.auths, i, i+1)
			return
		}
	}
}

// RemoveWatches removes this session's watches of typ on path, on the
// server and locally. Removed one-shot watches receive
// EventDataWatchRemoved or EventChildWatchRemoved, removed persistent
// watches EventPersistentWatchRemoved (WatcherAny, WatcherPersistent,
// WatcherPersistentRecursive). It returns ErrNoWatcher when the server
// has no such watch.
//
// ZooKeeper keeps at most one watch per connection, path and table (data
// or child), whatever its mode: removing WatcherData or WatcherChildren
// also removes that part of a persistent watch on the same path on the
// server. Servers before 3.9 answer WatcherPersistent and
// WatcherPersistentRecursive with ErrMarshallingError.
func (c *Conn) RemoveWatches(ctx context.Context, path string, typ WatcherType) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	err = c.removeWatchesServer(ctx, sp, typ)
	if err == nil || errors.Is(err, ErrNoWatcher) {
		c.watches.removeLocal(sp, typ)
	}
	return err
}

func (c *Conn) removeWatchesServer(ctx context.Context, sp string, typ WatcherType) error {
	return c.call(ctx, wire.OpRemoveWatches, &wire.WatchesRequest{Path: sp, Type: typ}, nil, nil)
}

// CheckWatches reports whether the server holds a watch of typ on path for
// this session: nil if it does, ErrNoWatcher if not.
func (c *Conn) CheckWatches(ctx context.Context, path string, typ WatcherType) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	return c.call(ctx, wire.OpCheckWatches, &wire.WatchesRequest{Path: sp, Type: typ}, nil, nil)
}

// AddWatch sets a persistent watch on path (recursive: on its whole
// subtree). See PersistentWatch for the events delivered. Several
// PersistentWatch values may watch the same path; each gets every event.
//
// ZooKeeper keeps one watch mode per connection and path: a persistent
// and a recursive watch on the same path, or a one-shot child watch and a
// recursive watch on the same path, do not mix on one Conn (the server
// keeps the last mode, and a recursive watch gets no
// NodeChildrenChanged). Use separate paths or separate Conns.
func (c *Conn) AddWatch(ctx context.Context, path string, recursive bool) (*PersistentWatch, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	mode := wire.AddWatchPersistent
	if recursive {
		mode = wire.AddWatchPersistentRecursive
	}
	w := newPersistentWatch(c, sp, path, recursive)
	r := newRequest(wire.OpAddWatch, &wire.AddWatchRequest{Path: sp, Mode: mode}, &wire.ErrorResponse{})
	r.onReply = func(code wire.Code) {
		if code == wire.OK {
			c.watches.addPersistent(w, r)
		}
	}
	if err := c.roundTrip(ctx, r); err != nil {
		// The reply may have registered w before the caller gave up.
		c.watches.removePersistent(w)
		w.push(Event{Type: EventNone, State: c.State(), Path: path, Err: err}, true)
		return nil, err
	}
	return w, nil
}
