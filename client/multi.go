package client

import (
	"context"
	"fmt"

	"github.com/paddockzk/paddock/internal/wire"
)

// Op is one operation of a Multi, made by CreateOp, DeleteOp, SetDataOp or
// CheckOp.
type Op struct {
	kind    wire.OpCode // OpCreate2 (any create), OpDelete, OpSetData, OpCheck
	path    string
	data    []byte
	mode    CreateMode
	acl     []ACL
	version int32
	opts    []CreateOption
}

// CreateOp creates a znode (nil acl: OPEN_ACL_UNSAFE); see Create.
func CreateOp(path string, data []byte, mode CreateMode, acl []ACL, opts ...CreateOption) Op {
	return Op{kind: wire.OpCreate2, path: path, data: data, mode: mode, acl: acl, opts: opts}
}

// DeleteOp deletes a znode if its version matches (-1: any).
func DeleteOp(path string, version int32) Op {
	return Op{kind: wire.OpDelete, path: path, version: version}
}

// SetDataOp sets a znode's data if its version matches (-1: any).
func SetDataOp(path string, data []byte, version int32) Op {
	return Op{kind: wire.OpSetData, path: path, data: data, version: version}
}

// CheckOp fails the multi unless the znode exists with version (-1: any).
func CheckOp(path string, version int32) Op {
	return Op{kind: wire.OpCheck, path: path, version: version}
}

// OpResult is the result of one Op of a Multi.
type OpResult struct {
	// Path is the created path (creates only), chroot stripped.
	Path string
	// Stat is the node's Stat after a SetDataOp, and after a CreateOp when
	// the server returns it (ZooKeeper 3.9+; 3.8 does not).
	Stat *Stat
	// Err is the op's error code in a failed multi: nil for the ops before
	// the failing one, ErrRuntimeInconsistency after it.
	Err error
}

func (c *Conn) multiOp(o Op) (wire.MultiOp, error) {
	switch o.kind {
	case wire.OpCreate2:
		op, req, err := c.createRequest(o.path, o.data, o.mode, o.acl, o.opts)
		return wire.MultiOp{Op: op, Req: req}, err
	case wire.OpDelete, wire.OpSetData, wire.OpCheck:
		sp, err := c.serverPath(o.path)
		if err != nil {
			return wire.MultiOp{}, err
		}
		var req wire.Record
		switch o.kind {
		case wire.OpDelete:
			req = &wire.DeleteRequest{Path: sp, Version: o.version}
		case wire.OpSetData:
			req = &wire.SetDataRequest{Path: sp, Data: o.data, Version: o.version}
		default:
			req = &wire.CheckVersionRequest{Path: sp, Version: o.version}
		}
		return wire.MultiOp{Op: o.kind, Req: req}, nil
	}
	return wire.MultiOp{}, fmt.Errorf("%w: zero Op", ErrBadArguments)
}

// Multi applies ops atomically: all succeed or none is applied. On failure
// it returns a *MultiError (which unwraps to the failing op's code) along
// with the per-op results.
func (c *Conn) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	req := &wire.MultiRequest{Ops: make([]wire.MultiOp, len(ops))}
	for i, o := range ops {
		mo, err := c.multiOp(o)
		if err != nil {
			return nil, fmt.Errorf("multi op %d: %w", i, err)
		}
		req.Ops[i] = mo
	}
	var resp wire.MultiResponse
	if err := c.call(ctx, wire.OpMulti, req, &resp, nil); err != nil {
		return nil, err
	}
	if len(resp.Results) != len(ops) {
		return nil, fmt.Errorf("%w: multi of %d ops got %d results", ErrMarshallingError, len(ops), len(resp.Results))
	}
	results := make([]OpResult, len(resp.Results))
	failed := -1
	for i, res := range resp.Results {
		results[i] = c.opResult(res)
		if failed < 0 && res.Op == wire.OpError && res.Err != wire.OK {
			failed = i
		}
	}
	if failed >= 0 {
		return results, &MultiError{Index: failed, Err: resp.Results[failed].Err, Results: results}
	}
	return results, nil
}

func (c *Conn) opResult(res wire.MultiResult) OpResult {
	switch r := res.Resp.(type) {
	case *wire.CreateResponse:
		return OpResult{Path: c.strip(r.Path)}
	case *wire.Create2Response:
		return OpResult{Path: c.strip(r.Path), Stat: &r.Stat}
	case *wire.StatResponse:
		return OpResult{Stat: &r.Stat}
	}
	if res.Op == wire.OpError {
		return OpResult{Err: res.Err.Err()}
	}
	return OpResult{}
}

// ReadOp is one read of a MultiRead, made by GetDataOp or GetChildrenOp.
type ReadOp struct {
	kind wire.OpCode
	path string
}

// GetDataOp reads a znode's data and Stat.
func GetDataOp(path string) ReadOp { return ReadOp{kind: wire.OpGetData, path: path} }

// GetChildrenOp reads a znode's children (no Stat).
func GetChildrenOp(path string) ReadOp { return ReadOp{kind: wire.OpGetChildren, path: path} }

// ReadResult is the result of one ReadOp.
type ReadResult struct {
	Data     []byte
	Stat     *Stat // GetDataOp only
	Children []string
	// Err is this read's own error: reads succeed or fail independently.
	Err error
}

// MultiRead performs reads in one round trip (multiRead, ZooKeeper 3.6+),
// from one consistent view of the server. No watches are set.
func (c *Conn) MultiRead(ctx context.Context, ops ...ReadOp) ([]ReadResult, error) {
	req := &wire.MultiRequest{Ops: make([]wire.MultiOp, len(ops))}
	for i, o := range ops {
		if o.kind != wire.OpGetData && o.kind != wire.OpGetChildren {
			return nil, fmt.Errorf("multiRead op %d: %w: zero ReadOp", i, ErrBadArguments)
		}
		sp, err := c.serverPath(o.path)
		if err != nil {
			return nil, fmt.Errorf("multiRead op %d: %w", i, err)
		}
		req.Ops[i] = wire.MultiOp{Op: o.kind, Req: &wire.PathWatchRequest{Path: sp}}
	}
	var resp wire.MultiResponse
	if err := c.call(ctx, wire.OpMultiRead, req, &resp, nil); err != nil {
		return nil, err
	}
	if len(resp.Results) != len(ops) {
		return nil, fmt.Errorf("%w: multiRead of %d ops got %d results", ErrMarshallingError, len(ops), len(resp.Results))
	}
	results := make([]ReadResult, len(resp.Results))
	for i, res := range resp.Results {
		switch r := res.Resp.(type) {
		case *wire.GetDataResponse:
			results[i] = ReadResult{Data: r.Data, Stat: &r.Stat}
		case *wire.GetChildrenResponse:
			results[i] = ReadResult{Children: r.Children}
		default:
			results[i] = ReadResult{Err: res.Err.Err()}
			if res.Op == wire.OpError && res.Err == wire.OK {
				results[i].Err = ErrSystemError
			}
		}
	}
	return results, nil
}
