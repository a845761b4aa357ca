package wire

// Headers, session-level and watch records (reference §1.3, §1.5).

// RequestHeader precedes every request body except ConnectRequest.
type RequestHeader struct {
	Xid int32
	Op  OpCode
}

// Encode implements Record.
func (r *RequestHeader) Encode(e *Encoder) {
	e.Int(r.Xid)
	e.Int(int32(r.Op))
}

// Decode implements Record.
func (r *RequestHeader) Decode(d *Decoder) error {
	r.Xid = d.Int()
	r.Op = OpCode(d.Int())
	return d.Err()
}

// ReplyHeaderSize is the encoded size of a ReplyHeader.
const ReplyHeaderSize = 16

// ReplyHeader precedes every reply. The body follows only when Err is OK.
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  Code
}

// Encode implements Record.
func (r *ReplyHeader) Encode(e *Encoder) {
	e.Int(r.Xid)
	e.Long(r.Zxid)
	e.Int(int32(r.Err))
}

// Decode implements Record.
func (r *ReplyHeader) Decode(d *Decoder) error {
	r.Xid = d.Int()
	r.Zxid = d.Long()
	r.Err = Code(d.Int())
	return d.Err()
}

// SetWatches is the body of setWatches (101), sent on reconnect.
type SetWatches struct {
	RelativeZxid int64
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

// Encode implements Record.
func (r *SetWatches) Encode(e *Encoder) {
	e.Long(r.RelativeZxid)
	e.Strings(r.DataWatches)
	e.Strings(r.ExistWatches)
	e.Strings(r.ChildWatches)
}

// Decode implements Record.
func (r *SetWatches) Decode(d *Decoder) error {
	r.RelativeZxid = d.Long()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
	return d.Err()
}

// SetWatches2 is the body of setWatches2 (105).
type SetWatches2 struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

// Encode implements Record.
func (r *SetWatches2) Encode(e *Encoder) {
	e.Long(r.RelativeZxid)
	e.Strings(r.DataWatches)
	e.Strings(r.ExistWatches)
	e.Strings(r.ChildWatches)
	e.Strings(r.PersistentWatches)
	e.Strings(r.PersistentRecursiveWatches)
}

// Decode implements Record.
func (r *SetWatches2) Decode(d *Decoder) error {
	r.RelativeZxid = d.Long()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
	r.PersistentWatches = d.Strings()
	r.PersistentRecursiveWatches = d.Strings()
	return d.Err()
}

// AddWatchRequest is the body of addWatch (106).
type AddWatchRequest struct {
	Path string
	Mode AddWatchMode
}

// Encode implements Record.
func (r *AddWatchRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int(int32(r.Mode))
}

// Decode implements Record.
func (r *AddWatchRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Mode = AddWatchMode(d.Int())
	return d.Err()
}

// WatchesRequest is the body of checkWatches (17) and removeWatches (18).
type WatchesRequest struct {
	Path string
	Type WatcherType
}

// Encode implements Record.
func (r *WatchesRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int(int32(r.Type))
}

// Decode implements Record.
func (r *WatchesRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Type = WatcherType(d.Int())
	return d.Err()
}

// ClientInfo is one authenticated identity in a WhoAmIResponse.
type ClientInfo struct {
	AuthScheme string
	User       string
}

// Encode implements Record.
func (r *ClientInfo) Encode(e *Encoder) {
	e.String(r.AuthScheme)
	e.String(r.User)
}

// Decode implements Record.
func (r *ClientInfo) Decode(d *Decoder) error {
	r.AuthScheme = d.String()
	r.User = d.String()
	return d.Err()
}

// WhoAmIResponse is the reply to whoAmI (107).
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

// Encode implements Record.
func (r *WhoAmIResponse) Encode(e *Encoder) {
	if r.ClientInfo == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(r.ClientInfo)))
	for i := range r.ClientInfo {
		r.ClientInfo[i].Encode(e)
	}
}

// Decode implements Record.
func (r *WhoAmIResponse) Decode(d *Decoder) error {
	r.ClientInfo = nil
	n := d.Count(8) // two empty strings
	if n < 0 || d.Err() != nil {
		return d.Err()
	}
	v := make([]ClientInfo, n)
	for i := range v {
		if v[i].Decode(d) != nil {
			return d.Err()
		}
	}
	r.ClientInfo = v
	return nil
}

// WatcherEvent is the body of a notification (xid -1).
type WatcherEvent struct {
	Type  EventType
	State State
	Path  string
}

// Encode implements Record.
func (r *WatcherEvent) Encode(e *Encoder) {
	e.Int(int32(r.Type))
	e.Int(int32(r.State))
	e.String(r.Path)
}

// Decode implements Record.
func (r *WatcherEvent) Decode(d *Decoder) error {
	r.Type = EventType(d.Int())
	r.State = State(d.Int())
	r.Path = d.String()
	return d.Err()
}

// ErrorResponse carries an error code: the body of an error result inside
// a multi response, and the (always OK) reply to addWatch.
type ErrorResponse struct {
	Err Code
}

// Encode implements Record.
func (r *ErrorResponse) Encode(e *Encoder) { e.Int(int32(r.Err)) }

// Decode implements Record.
func (r *ErrorResponse) Decode(d *Decoder) error {
	r.Err = Code(d.Int())
	return d.Err()
}

// AuthPacket is the body of auth (100, xid -4). Type is always 0.
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

// Encode implements Record.
func (r *AuthPacket) Encode(e *Encoder) {
	e.Int(r.Type)
	e.String(r.Scheme)
	e.Buffer(r.Auth)
}

// Decode implements Record.
func (r *AuthPacket) Decode(d *Decoder) error {
	r.Type = d.Int()
	r.Scheme = d.String()
	r.Auth = d.Buffer()
	return d.Err()
}

// SASLRequest is the body of sasl (102) and of its reply
// (GetSASLRequest / SetSASLResponse in jute).
type SASLRequest struct {
	Token []byte
}

// Encode implements Record.
func (r *SASLRequest) Encode(e *Encoder) { e.Buffer(r.Token) }

// Decode implements Record.
func (r *SASLRequest) Decode(d *Decoder) error {
	r.Token = d.Buffer()
	return d.Err()
}
