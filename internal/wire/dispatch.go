package wire

// DecodeRequest decodes the body of a request with opcode op (the Decoder
// positioned just after the RequestHeader) and returns the record:
//
//   - create (1), create2 (15), createContainer (19): *CreateRequest
//   - createTTL (21): *CreateTTLRequest
//   - delete (2): *DeleteRequest
//   - exists (3), getData (4), getChildren (8), getChildren2 (12):
//     *PathWatchRequest
//   - setData (5): *SetDataRequest
//   - getACL (6), sync (9), getEphemerals (103), getAllChildrenNumber
//     (104): *PathRequest
//   - setACL (7): *SetACLRequest
//   - check (13): *CheckVersionRequest
//   - multi (14), multiRead (22): *MultiRequest; a multi may hold only
//     write ops and a multiRead only getData/getChildren, anything else is
//     an error wrapping ErrMalformed
//   - reconfig (16): *ReconfigRequest
//   - checkWatches (17), removeWatches (18): *WatchesRequest
//   - auth (100): *AuthPacket; sasl (102): *SASLRequest
//   - setWatches (101): *SetWatches; setWatches2 (105): *SetWatches2
//   - addWatch (106): *AddWatchRequest
//   - ping (11), closeSession (-11), whoAmI (107): no body; (nil, nil)
//     is returned without reading anything
//
// Any other op (including the server-internal createSession,
// deleteContainer and the notification pseudo-op) returns
// (nil, ErrUnimplemented), the bare Code, which the server answers with
// err -6 before closing the connection. Decoding errors wrap ErrMalformed.
//
// Like ZooKeeper, DecodeRequest ignores bytes after the record; call
// d.Finish to reject them.
func DecodeRequest(op OpCode, d *Decoder) (Record, error) {
	switch op {
	case OpPing, OpCloseSession, OpWhoAmI:
		return nil, nil
	case OpMulti, OpMultiRead:
		r := &MultiRequest{}
		if err := d.Record(r); err != nil {
			return nil, err
		}
		if err := r.checkKind(op, d); err != nil {
			return nil, err
		}
		return r, nil
	}
	r := NewRequest(op)
	if r == nil {
		return nil, ErrUnimplemented
	}
	if err := d.Record(r); err != nil {
		return nil, err
	}
	return r, nil
}

// NewRequest returns an empty request record for op, of the type
// DecodeRequest returns, or nil when op has no request body (ping,
// closeSession, whoAmI) or is not a client request.
func NewRequest(op OpCode) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}
	case OpCreateTTL:
		return &CreateTTLRequest{}
	case OpDelete:
		return &DeleteRequest{}
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		return &PathWatchRequest{}
	case OpSetData:
		return &SetDataRequest{}
	case OpGetACL, OpSync, OpGetEphemerals, OpGetAllChildrenNumber:
		return &PathRequest{}
	case OpSetACL:
		return &SetACLRequest{}
	case OpCheck:
		return &CheckVersionRequest{}
	case OpMulti, OpMultiRead:
		return &MultiRequest{}
	case OpReconfig:
		return &ReconfigRequest{}
	case OpCheckWatches, OpRemoveWatches:
		return &WatchesRequest{}
	case OpAuth:
		return &AuthPacket{}
	case OpSetWatches:
		return &SetWatches{}
	case OpSASL:
		return &SASLRequest{}
	case OpSetWatches2:
		return &SetWatches2{}
	case OpAddWatch:
		return &AddWatchRequest{}
	}
	return nil
}

// NewResponse returns an empty record for the body of a successful
// (err 0) reply to op, or nil when that reply has no body (delete, ping,
// check, setWatches, setWatches2, auth, checkWatches, removeWatches,
// closeSession) or op is unknown. For OpNotification it returns a
// *WatcherEvent, the body of a watch notification (xid -1).
func NewResponse(op OpCode) Record {
	switch op {
	case OpNotification:
		return &WatcherEvent{}
	case OpCreate:
		return &CreateResponse{}
	case OpCreate2, OpCreateContainer, OpCreateTTL:
		return &Create2Response{}
	case OpExists, OpSetData, OpSetACL:
		return &StatResponse{}
	case OpGetData, OpReconfig:
		return &GetDataResponse{}
	case OpGetACL:
		return &GetACLResponse{}
	case OpGetChildren:
		return &GetChildrenResponse{}
	case OpGetChildren2:
		return &GetChildren2Response{}
	case OpSync:
		return &PathRequest{}
	case OpMulti, OpMultiRead:
		return &MultiResponse{}
	case OpSASL:
		return &SASLRequest{}
	case OpGetEphemerals:
		return &GetEphemeralsResponse{}
	case OpGetAllChildrenNumber:
		return &GetAllChildrenNumberResponse{}
	case OpAddWatch:
		return &ErrorResponse{}
	case OpWhoAmI:
		return &WhoAmIResponse{}
	}
	return nil
}
