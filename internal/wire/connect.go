package wire

// Handshake records (reference §1.2). Neither is preceded by a header.

// ConnectRequestSize is the encoded size of a ConnectRequest with a 16-byte
// password and no readOnly byte; with the byte it is one more.
const ConnectRequestSize = 44

// PasswordSize is the length of a session password.
const PasswordSize = 16

// ConnectRequest is the first frame a client sends.
//
// The trailing readOnly flag is optional: clients before ZooKeeper 3.9 (and
// go-zookeeper) omit it. Decode reads it, and sets HasReadOnly, when any
// byte remains after the password, as ZooKeeper's server tries one
// readBool there; anything after that byte is left unread (ZooKeeper
// ignores it; Decoder.Finish reports it). Encode writes the byte only
// when HasReadOnly.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// Encode implements Record.
func (r *ConnectRequest) Encode(e *Encoder) {
	e.Int(r.ProtocolVersion)
	e.Long(r.LastZxidSeen)
	e.Int(r.TimeOut)
	e.Long(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// Decode implements Record.
func (r *ConnectRequest) Decode(d *Decoder) error {
	r.ProtocolVersion = d.Int()
	r.LastZxidSeen = d.Long()
	r.TimeOut = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	r.ReadOnly, r.HasReadOnly = decodeTrailingReadOnly(d)
	return d.Err()
}

// ConnectResponse is the server's answer to a ConnectRequest. An expired or
// unknown session is answered with TimeOut 0, SessionID 0 and a zero
// password. Set HasReadOnly exactly when the request had it.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// Encode implements Record.
func (r *ConnectResponse) Encode(e *Encoder) {
	e.Int(r.ProtocolVersion)
	e.Int(r.TimeOut)
	e.Long(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// Decode implements Record. The readOnly byte is read, and HasReadOnly
// set, when a byte remains after the password, as for ConnectRequest.
func (r *ConnectResponse) Decode(d *Decoder) error {
	r.ProtocolVersion = d.Int()
	r.TimeOut = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	r.ReadOnly, r.HasReadOnly = decodeTrailingReadOnly(d)
	return d.Err()
}

func decodeTrailingReadOnly(d *Decoder) (readOnly, has bool) {
	if d.Err() != nil || d.Remaining() < 1 {
		return false, false
	}
	return d.Bool(), true
}
