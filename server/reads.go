package server

import (
	"strings"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/watch"
)

// reply answers a read-side request. at is the zxid of the state the
// answer reflects (0 when it shows none): the events of changes up to it
// go out before it (eventorder.go).
type reply = func() (code wire.Code, resp wire.Record, at int64)

// readHandler returns the function that answers a read-side request.
// Reads and watch registrations run inside one fsm.View, so no write can
// slip between reading a node and arming its watch.
func (c *conn) readHandler(op wire.OpCode, req wire.Record) reply {
	switch r := req.(type) {
	case *wire.PathWatchRequest:
		return c.pathWatchRead(op, r)
	case *wire.PathRequest:
		return c.pathRead(op, r)
	case *wire.MultiRequest:
		return func() (wire.Code, wire.Record, int64) {
			resp, at := c.multiRead(r)
			return wire.OK, resp, at
		}
	case *wire.WatchesRequest:
		// Inside a View: watches fire under the state's write lock, so the
		// answer (e.g. NoWatcher: it fired) reflects the view's state, and
		// the event of a watch that fired goes out before it.
		return func() (code wire.Code, resp wire.Record, at int64) {
			c.s.fsm.View(func(v fsm.Reader) {
				at = v.LastZxid()
				if op == wire.OpRemoveWatches {
					code = wire.CodeOf(c.s.watches.Remove(r.Path, r.Type, c))
				} else {
					code = wire.CodeOf(c.s.watches.Check(r.Path, r.Type, c))
				}
			})
			return code, nil, at
		}
	case *wire.SetWatches:
		return c.restoreWatches(r.RelativeZxid, watch.WatchLists{Data: r.DataWatches, Exist: r.ExistWatches, Child: r.ChildWatches})
	case *wire.SetWatches2:
		return c.restoreWatches(r.RelativeZxid, watch.WatchLists{Data: r.DataWatches, Exist: r.ExistWatches,
			Child: r.ChildWatches, Persistent: r.PersistentWatches, Recursive: r.PersistentRecursiveWatches})
	}
	if op == wire.OpWhoAmI {
		return c.whoAmI
	}
	return func() (wire.Code, wire.Record, int64) { return wire.ErrUnimplemented, nil, 0 }
}

// viewReply answers a request from one consistent view of the state.
type viewReply = func(v fsm.Reader) (wire.Code, wire.Record)

// watchingRead returns, for a request that arms a watch (getData, exists,
// getChildren with the watch flag, addWatch), the function that answers it
// inside an fsm.View; nil for any other request. The writer runs it and
// queues its reply within that same View, so that the notification of a
// change applied after the watch was armed can never reach the client
// before the reply that armed it: clients register a watcher only when
// that reply arrives, and would miss the event (ZooKeeper's
// CommitProcessor holds commits while a read is being answered).
func (c *conn) watchingRead(op wire.OpCode, req wire.Record) viewReply {
	switch r := req.(type) {
	case *wire.PathWatchRequest:
		if r.Watch {
			return c.pathWatchView(op, r)
		}
	case *wire.AddWatchRequest:
		return func(fsm.Reader) (wire.Code, wire.Record) {
			if r.Mode != wire.AddWatchPersistent && r.Mode != wire.AddWatchPersistentRecursive {
				// ZooKeeper's WatcherMode.fromZooDef throws, which the
				// server answers as MarshallingError.
				return wire.ErrMarshallingError, nil
			}
			if err := c.s.watches.AddPersistent(r.Path, c, r.Mode == wire.AddWatchPersistentRecursive); err != nil {
				return wire.ErrThrottledOp, nil
			}
			return wire.OK, &wire.ErrorResponse{Err: wire.OK}
		}
	}
	return nil
}

func (c *conn) pathWatchRead(op wire.OpCode, r *wire.PathWatchRequest) reply {
	view := c.pathWatchView(op, r)
	return func() (code wire.Code, resp wire.Record, at int64) {
		c.s.fsm.View(func(v fsm.Reader) { code, resp = view(v); at = v.LastZxid() })
		return code, resp, at
	}
}

func (c *conn) pathWatchView(op wire.OpCode, r *wire.PathWatchRequest) viewReply {
	return func(v fsm.Reader) (code wire.Code, resp wire.Record) {
		path := lookupPath(r.Path)
		var err error
		switch op {
		case wire.OpExists:
			if strings.IndexByte(r.Path, 0) >= 0 {
				// Only exists refuses a NUL (ZooKeeper's
				// FinalRequestProcessor); the other reads find no node.
				return wire.ErrBadArguments, nil
			}
			st, ok := v.Exists(path)
			if acl, _ := v.ACL(path); ok && !c.allowed(acl, wire.PermRead) {
				return wire.ErrNoAuth, nil
			}
			err = c.arm(r.Watch, c.s.watches.AddData, r.Path)
			if !ok {
				code = wire.ErrNoNode
			} else {
				resp = &wire.StatResponse{Stat: st}
			}
		case wire.OpGetData:
			data, st, e := v.Get(path)
			if code = c.readable(v, path, e); code == wire.OK {
				err = c.arm(r.Watch, c.s.watches.AddData, r.Path)
				resp = &wire.GetDataResponse{Data: data, Stat: st}
			}
		case wire.OpGetChildren, wire.OpGetChildren2:
			kids, st, e := v.Children(path)
			if code = c.readable(v, path, e); code == wire.OK {
				err = c.arm(r.Watch, c.s.watches.AddChild, r.Path)
				if op == wire.OpGetChildren {
					resp = &wire.GetChildrenResponse{Children: kids}
				} else {
					resp = &wire.GetChildren2Response{Children: kids, Stat: st}
				}
			}
		default:
			code = wire.ErrUnimplemented
		}
		if err != nil {
			code, resp = wire.ErrThrottledOp, nil
		}
		return code, resp
	}
}

func (c *conn) arm(want bool, add func(string, watch.Watcher) error, path string) error {
	if !want {
		return nil
	}
	return add(path, c)
}

func (c *conn) pathRead(op wire.OpCode, r *wire.PathRequest) reply {
	return func() (code wire.Code, resp wire.Record, at int64) {
		c.s.fsm.View(func(v fsm.Reader) {
			at = v.LastZxid()
			code, resp = c.pathReadIn(v, op, r)
		})
		return code, resp, at
	}
}

func (c *conn) pathReadIn(v fsm.Reader, op wire.OpCode, r *wire.PathRequest) (wire.Code, wire.Record) {
	switch op {
	case wire.OpGetACL:
		acl, st, err := v.GetACL(lookupPath(r.Path))
		switch {
		case err != nil:
			return wire.CodeOf(err), nil
		case c.allowed(acl, wire.PermAdmin):
			return wire.OK, &wire.GetACLResponse{ACL: acl, Stat: st}
		case c.allowed(acl, wire.PermRead):
			return wire.OK, &wire.GetACLResponse{ACL: fsm.MaskDigests(acl), Stat: st}
		}
		return wire.ErrNoAuth, nil
	case wire.OpGetEphemerals:
		// As ZooKeeper: a prefix that is blank or "/" once trimmed
		// selects all; any other is matched as sent, untrimmed.
		prefix := r.Path
		if t := strings.Trim(prefix, javaSpace); t == "" || t == fsm.RootPath {
			prefix = fsm.RootPath
		}
		return wire.OK, &wire.GetEphemeralsResponse{Ephemerals: v.Ephemerals(c.SessionID(), prefix)}
	case wire.OpGetAllChildrenNumber:
		path := lookupPath(r.Path)
		if acl, _, err := v.GetACL(path); err == nil && !c.allowed(acl, wire.PermRead) {
			return wire.ErrNoAuth, nil
		}
		n, err := v.AllChildrenNumber(path)
		if err != nil {
			return wire.CodeOf(err), nil
		}
		if r.Path == "" {
			n++ // ZooKeeper counts the paths starting with "/": the root too
		}
		return wire.OK, &wire.GetAllChildrenNumberResponse{TotalNumber: n}
	}
	return wire.ErrUnimplemented, nil
}

func (c *conn) multiRead(r *wire.MultiRequest) (out *wire.MultiResponse, at int64) {
	out = &wire.MultiResponse{Results: make([]wire.MultiResult, 0, len(r.Ops))}
	c.s.fsm.View(func(v fsm.Reader) {
		at = v.LastZxid()
		for _, mo := range r.Ops {
			req, _ := mo.Req.(*wire.PathWatchRequest)
			if req == nil {
				out.Results = append(out.Results, errResult(wire.ErrBadArguments))
				continue
			}
			var res wire.MultiResult
			if mo.Op == wire.OpGetData {
				data, st, err := v.Get(lookupPath(req.Path))
				res = wire.MultiResult{Op: wire.OpGetData, Resp: &wire.GetDataResponse{Data: data, Stat: st}}
				if code := c.readable(v, lookupPath(req.Path), err); code != wire.OK {
					res = errResult(code)
				}
			} else {
				kids, _, err := v.Children(lookupPath(req.Path))
				res = wire.MultiResult{Op: wire.OpGetChildren, Resp: &wire.GetChildrenResponse{Children: kids}}
				if code := c.readable(v, lookupPath(req.Path), err); code != wire.OK {
					res = errResult(code)
				}
			}
			out.Results = append(out.Results, res)
		}
	})
	return out, at
}

func errResult(code wire.Code) wire.MultiResult {
	return wire.MultiResult{Op: wire.OpError, Err: code, Resp: &wire.ErrorResponse{Err: code}}
}

func (c *conn) restoreWatches(rel int64, lists watch.WatchLists) reply {
	return func() (code wire.Code, resp wire.Record, at int64) {
		c.s.fsm.View(func(v fsm.Reader) {
			at = v.LastZxid()
			// "" is the root's alias, as for every other read (ZooKeeper's
			// DataTree finds the root under both).
			state := func(p string) (bool, int64, int64) { return v.WatchState(lookupPath(p)) }
			if err := c.s.watches.Restore(c, rel, at, lists, state); err != nil {
				code = wire.ErrThrottledOp
			}
		})
		// The events it raised carry zxid at: they go out before its reply.
		return code, nil, at
	}
}

func (c *conn) whoAmI() (wire.Code, wire.Record, int64) {
	ids := c.identities()
	info := make([]wire.ClientInfo, len(ids))
	for i, id := range ids {
		user := id.ID
		if id.Scheme == "digest" {
			// ZooKeeper's DigestAuthenticationProvider.getUserName: the
			// user name, without the password digest.
			user, _, _ = strings.Cut(user, ":")
		}
		info[i] = wire.ClientInfo{AuthScheme: id.Scheme, User: user}
	}
	return wire.OK, &wire.WhoAmIResponse{ClientInfo: info}, 0
}

// readable turns a read's lookup error and the node's ACL into the code a
// read answers: NoNode, NoAuth without READ, or OK.
func (c *conn) readable(v fsm.Reader, path string, err error) wire.Code {
	if err != nil {
		return wire.CodeOf(err)
	}
	if acl, _ := v.ACL(path); !c.allowed(acl, wire.PermRead) {
		return wire.ErrNoAuth
	}
	return wire.OK
}

// lookupPath is the node a read of path looks up. ZooKeeper's tree holds
// the root under "" as well as "/", so reads of "" answer for the root
// (watches stay on the path as given, as there: one on "" never fires).
// Reads do not validate paths otherwise: a malformed path names no node.
func lookupPath(path string) string {
	if path == "" {
		return fsm.RootPath
	}
	return path
}

// javaSpace is what Java's String.trim removes: every char up to U+0020.
const javaSpace = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f" +
	"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "
