package wire

// multi (14) and multiRead (22) encoding (reference §1.10).

// MaxMultiOps bounds the number of operations in a decoded MultiRequest and
// of results in a decoded MultiResponse; decoding fails past it. The frame
// limit bounds the count too (the smallest op takes 14 bytes, so a
// DefaultMaxFrame frame holds at most 74,898 ops); this constant keeps the
// bound when a deployment raises the frame limit. ZooKeeper itself has no
// count limit.
const MaxMultiOps = 100000

// MultiHeader precedes every op of a multi request and every result of a
// multi response. A header with Done set ends the sequence.
type MultiHeader struct {
	Type OpCode
	Done bool
	Err  Code
}

// Encode implements Record.
func (h *MultiHeader) Encode(e *Encoder) {
	e.Int(int32(h.Type))
	e.Bool(h.Done)
	e.Int(int32(h.Err))
}

// Decode implements Record.
func (h *MultiHeader) Decode(d *Decoder) error {
	h.Type = OpCode(d.Int())
	h.Done = d.Bool()
	h.Err = Code(d.Int())
	return d.Err()
}

// multiEnd is the terminating header of both requests and responses.
var multiEnd = MultiHeader{Type: OpError, Done: true, Err: -1}

// MultiOp is one operation of a MultiRequest. Req's type depends on Op:
// create (1), create2 (15), createContainer (19): *CreateRequest;
// createTTL (21): *CreateTTLRequest; delete (2): *DeleteRequest;
// setData (5): *SetDataRequest; check (13): *CheckVersionRequest;
// getData (4), getChildren (8) (multiRead only): *PathWatchRequest.
// On the wire it is its MultiHeader followed by Req.
type MultiOp struct {
	Op  OpCode
	Req Record
}

// MultiRequest is the body of multi (14) and multiRead (22). A multi holds
// only write ops (create*, delete, setData, check) and a multiRead only
// getData and getChildren. Decode rejects unknown op types and a mix of
// the two kinds; DecodeRequest also checks the kind against the opcode.
type MultiRequest struct {
	Ops []MultiOp
}

const (
	kindInvalid = iota
	kindWrite
	kindRead
)

func multiOpKind(op OpCode) int {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpSetData, OpCheck:
		return kindWrite
	case OpGetData, OpGetChildren:
		return kindRead
	}
	return kindInvalid
}

// newMultiOpRequest returns an empty request record for an op allowed
// inside a multi or multiRead, or nil.
func newMultiOpRequest(op OpCode) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}
	case OpCreateTTL:
		return &CreateTTLRequest{}
	case OpDelete:
		return &DeleteRequest{}
	case OpSetData:
		return &SetDataRequest{}
	case OpCheck:
		return &CheckVersionRequest{}
	case OpGetData, OpGetChildren:
		return &PathWatchRequest{}
	}
	return nil
}

// Encode implements Record: the op's MultiHeader {Op, false, -1} followed
// by Req. A nil Req is encoded as an empty request record of Op's type.
func (o *MultiOp) Encode(e *Encoder) {
	h := MultiHeader{Type: o.Op, Done: false, Err: -1}
	h.Encode(e)
	req := o.Req
	if req == nil {
		req = newMultiOpRequest(o.Op)
	}
	if req != nil {
		req.Encode(e)
	}
}

// Decode implements Record. It fails on an end marker (Done) and on an op
// type that is not allowed in a multi or multiRead.
func (o *MultiOp) Decode(d *Decoder) error {
	var h MultiHeader
	if h.Decode(d) != nil {
		return d.Err()
	}
	if h.Done {
		d.Fail("unexpected end of multi")
		return d.Err()
	}
	return o.decodeBody(d, h)
}

func (o *MultiOp) decodeBody(d *Decoder, h MultiHeader) error {
	o.Op, o.Req = h.Type, nil
	req := newMultiOpRequest(h.Type)
	if req == nil {
		d.failOp("invalid type of op %v", h.Type)
		return d.Err()
	}
	if req.Decode(d) != nil {
		return d.Err()
	}
	o.Req = req
	return nil
}

// Encode implements Record. An op with a nil Req is encoded with an empty
// request record of its type.
func (r *MultiRequest) Encode(e *Encoder) {
	for i := range r.Ops {
		r.Ops[i].Encode(e)
	}
	multiEnd.Encode(e)
}

// Decode implements Record. An empty multi decodes as nil Ops.
func (r *MultiRequest) Decode(d *Decoder) error {
	r.Ops = nil
	kind := kindInvalid
	for {
		var h MultiHeader
		if h.Decode(d) != nil {
			return d.Err()
		}
		if h.Done {
			return nil
		}
		if len(r.Ops) >= MaxMultiOps {
			d.Fail("multi has more than %d ops", MaxMultiOps)
			return d.Err()
		}
		if k := multiOpKind(h.Type); kind == kindInvalid {
			kind = k
		} else if k != kind && k != kindInvalid {
			d.failOp("mixing different kind of ops")
			return d.Err()
		}
		var op MultiOp
		if op.decodeBody(d, h) != nil {
			return d.Err()
		}
		r.Ops = append(r.Ops, op)
	}
}

// checkKind fails d unless every op of r is of the kind op (multi or
// multiRead) allows.
func (r *MultiRequest) checkKind(op OpCode, d *Decoder) error {
	want := kindWrite
	if op == OpMultiRead {
		want = kindRead
	}
	for _, o := range r.Ops {
		if multiOpKind(o.Op) != want {
			d.failOp("%v does not allow op %v", op, o.Op)
			return d.Err()
		}
	}
	return nil
}

// MultiResult is one result of a MultiResponse. Resp's type depends on Op:
// create (1): *CreateResponse; create2 (15): *Create2Response;
// delete (2), check (13): nil; setData (5): *StatResponse;
// getData (4): *GetDataResponse; getChildren (8): *GetChildrenResponse;
// error (-1): *ErrorResponse.
//
// Err is the error of an error result and OK for every other op. When a
// multi fails, every result becomes an error result: ops before the failure
// with Err OK, the failing op with its code and later ops with
// ErrRuntimeInconsistency.
//
// Encoding: createTTL and createContainer results are written as create2
// results (type 15), as ZooKeeper does, so they decode with Op OpCreate2.
// A Resp that is nil or of the wrong type is replaced by an empty record
// of the right type (a *CreateResponse and a *Create2Response stand in for
// each other, keeping the path). An error result always carries
// ErrorResponse{Err}, whatever Resp holds. An Op not listed above cannot be
// expressed in a multi response and is encoded as an error result with
// ErrSystemError.
type MultiResult struct {
	Op   OpCode
	Err  Code
	Resp Record
}

// MultiResponse is the reply to multi (14) and multiRead (22).
type MultiResponse struct {
	Results []MultiResult
}

// respOr returns resp if it is a non-nil *T, and otherwise a new T.
func respOr[T any, PT interface {
	*T
	Record
}](resp Record) PT {
	if p, ok := resp.(PT); ok && p != nil {
		return p
	}
	return PT(new(T))
}

// Encode implements Record.
func (r *MultiResult) Encode(e *Encoder) {
	var body Record
	h := MultiHeader{Type: r.Op}
	switch r.Op {
	case OpCreate:
		if c2, ok := r.Resp.(*Create2Response); ok && c2 != nil {
			body = &CreateResponse{Path: c2.Path}
		} else {
			body = respOr[CreateResponse](r.Resp)
		}
	case OpCreate2, OpCreateTTL, OpCreateContainer:
		h.Type = OpCreate2
		if c, ok := r.Resp.(*CreateResponse); ok && c != nil {
			body = &Create2Response{Path: c.Path}
		} else {
			body = respOr[Create2Response](r.Resp)
		}
	case OpDelete, OpCheck:
	case OpSetData:
		body = respOr[StatResponse](r.Resp)
	case OpGetData:
		body = respOr[GetDataResponse](r.Resp)
	case OpGetChildren:
		body = respOr[GetChildrenResponse](r.Resp)
	case OpError:
		h.Err = r.Err
		body = &ErrorResponse{Err: r.Err}
	default:
		h = MultiHeader{Type: OpError, Err: ErrSystemError}
		body = &ErrorResponse{Err: ErrSystemError}
	}
	h.Encode(e)
	if body != nil {
		body.Encode(e)
	}
}

// Encode implements Record.
func (r *MultiResponse) Encode(e *Encoder) {
	for i := range r.Results {
		r.Results[i].Encode(e)
	}
	multiEnd.Encode(e)
}

// Decode implements Record. It fails on an end marker (Done) and on a
// result type that cannot appear in a multi response. The Err of an error
// result comes from its ErrorResponse body, as in ZooKeeper's client; the
// header's err field is ignored.
func (r *MultiResult) Decode(d *Decoder) error {
	var h MultiHeader
	if h.Decode(d) != nil {
		return d.Err()
	}
	if h.Done {
		d.Fail("unexpected end of multi response")
		return d.Err()
	}
	return r.decodeBody(d, h)
}

func (r *MultiResult) decodeBody(d *Decoder, h MultiHeader) error {
	*r = MultiResult{Op: h.Type}
	var resp Record
	switch h.Type {
	case OpCreate:
		resp = &CreateResponse{}
	case OpCreate2:
		resp = &Create2Response{}
	case OpDelete, OpCheck:
		return d.Err()
	case OpSetData:
		resp = &StatResponse{}
	case OpGetData:
		resp = &GetDataResponse{}
	case OpGetChildren:
		resp = &GetChildrenResponse{}
	case OpError:
		resp = &ErrorResponse{}
	default:
		d.Fail("invalid type %v in multi response", h.Type)
		return d.Err()
	}
	if resp.Decode(d) != nil {
		return d.Err()
	}
	if er, ok := resp.(*ErrorResponse); ok {
		r.Err = er.Err
	}
	r.Resp = resp
	return nil
}

// Decode implements Record. An empty response decodes as nil Results.
func (r *MultiResponse) Decode(d *Decoder) error {
	r.Results = nil
	for {
		var h MultiHeader
		if h.Decode(d) != nil {
			return d.Err()
		}
		if h.Done {
			return nil
		}
		if len(r.Results) >= MaxMultiOps {
			d.Fail("multi response has more than %d results", MaxMultiOps)
			return d.Err()
		}
		var res MultiResult
		if res.decodeBody(d, h) != nil {
			return d.Err()
		}
		r.Results = append(r.Results, res)
	}
}
