package server

import (
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
)

// writeCommand turns a write request into a Raft command. It returns
// (nil, OK) for requests that are not writes, and (nil, code) for a write
// rejected at the door (checks that need no state).
func (c *conn) writeCommand(op wire.OpCode, req wire.Record) (*fsm.Command, wire.Code) {
	switch r := req.(type) {
	case *wire.MultiRequest:
		if op != wire.OpMulti {
			return nil, wire.OK
		}
		cmd := &fsm.Command{Type: fsm.CmdOps, Multi: true, Ops: make([]fsm.Op, 0, len(r.Ops))}
		for _, mo := range r.Ops {
			o, _ := c.toOp(mo.Op, mo.Req)
			if (o.Type == wire.OpCreate || o.Type == wire.OpCreate2) && o.Mode.IsContainer() {
				// ZooKeeper types a multi's sub-create by its flags:
				// mode CONTAINER makes it a createContainer.
				o.Type = wire.OpCreateContainer
			}
			cmd.Ops = append(cmd.Ops, o)
		}
		return cmd, wire.OK
	}
	o, isWrite := c.toOp(op, req)
	if !isWrite {
		return nil, wire.OK
	}
	if o.Mode.IsTTL() && !c.s.cfg.TTLEnabled {
		return nil, wire.ErrUnimplemented
	}
	if code := fsm.ValidateOp(&o); code != wire.OK {
		return nil, code
	}
	return &fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{o}}, wire.OK
}

// toOp converts a write request record to an fsm op.
func (c *conn) toOp(op wire.OpCode, req wire.Record) (fsm.Op, bool) {
	switch r := req.(type) {
	case *wire.CreateRequest:
		if op != wire.OpCreate && op != wire.OpCreate2 && op != wire.OpCreateContainer {
			return fsm.Op{}, false
		}
		return fsm.Op{Type: op, Path: r.Path, Data: r.Data, ACL: c.expandACL(r.ACL), Mode: r.Flags}, true
	case *wire.CreateTTLRequest:
		return fsm.Op{Type: op, Path: r.Path, Data: r.Data, ACL: c.expandACL(r.ACL), Mode: r.Flags, TTL: r.TTL}, true
	case *wire.DeleteRequest:
		return fsm.Op{Type: wire.OpDelete, Path: r.Path, Version: r.Version}, true
	case *wire.SetDataRequest:
		return fsm.Op{Type: wire.OpSetData, Path: r.Path, Data: r.Data, Version: r.Version}, true
	case *wire.SetACLRequest:
		return fsm.Op{Type: wire.OpSetACL, Path: r.Path, ACL: c.expandACL(r.ACL), Version: r.Version}, true
	case *wire.CheckVersionRequest:
		return fsm.Op{Type: wire.OpCheck, Path: r.Path, Version: r.Version}, true
	}
	return fsm.Op{}, false
}

// writeReply builds the reply of an applied write.
func writeReply(op wire.OpCode, r *fsm.Result) (wire.Code, wire.Record) {
	if op == wire.OpMulti {
		if r.Err != wire.OK {
			return r.Err, nil
		}
		return wire.OK, multiResponse(r.Ops)
	}
	if r.Err != wire.OK {
		return r.Err, nil
	}
	res := r.Ops[0]
	switch op {
	case wire.OpCreate:
		return wire.OK, &wire.CreateResponse{Path: res.Path}
	case wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return wire.OK, &wire.Create2Response{Path: res.Path, Stat: res.Stat}
	case wire.OpSetData, wire.OpSetACL:
		return wire.OK, &wire.StatResponse{Stat: res.Stat}
	}
	return wire.OK, nil
}

func multiResponse(ops []fsm.OpResult) *wire.MultiResponse {
	out := &wire.MultiResponse{Results: make([]wire.MultiResult, len(ops))}
	for i, o := range ops {
		mr := wire.MultiResult{Op: o.Type, Err: o.Err}
		switch o.Type {
		case wire.OpError:
			mr.Resp = &wire.ErrorResponse{Err: o.Err}
		case wire.OpCreate:
			mr.Resp = &wire.CreateResponse{Path: o.Path}
		case wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
			mr.Resp = &wire.Create2Response{Path: o.Path, Stat: o.Stat}
		case wire.OpSetData:
			mr.Resp = &wire.StatResponse{Stat: o.Stat}
		}
		out.Results[i] = mr
	}
	return out
}
