package wire

// This file holds the fixed-layout jute records of ZooKeeper's client
// protocol (reference §1.5). Every Decode method returns the Decoder's
// sticky error, so a truncated or malformed input is always reported as an
// error wrapping ErrMalformed. Decode methods do not check for trailing
// bytes; call Decoder.Finish for that.
//
// jute's null string (length -1) decodes as "", so records with string
// fields cannot tell null from empty; null buffers and vectors decode as nil
// and empty ones as non-nil empty slices, and both re-encode byte-exactly.

// CreateRequest is the body of create (1), create2 (15) and
// createContainer (19), and of the same ops inside a multi.
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags CreateMode
}

// Encode implements Record.
func (r *CreateRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	EncodeACLs(e, r.ACL)
	e.Int(int32(r.Flags))
}

// Decode implements Record.
func (r *CreateRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = DecodeACLs(d)
	r.Flags = CreateMode(d.Int())
	return d.Err()
}

// CreateTTLRequest is the body of createTTL (21).
type CreateTTLRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags CreateMode
	TTL   int64
}

// Encode implements Record.
func (r *CreateTTLRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	EncodeACLs(e, r.ACL)
	e.Int(int32(r.Flags))
	e.Long(r.TTL)
}

// Decode implements Record.
func (r *CreateTTLRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = DecodeACLs(d)
	r.Flags = CreateMode(d.Int())
	r.TTL = d.Long()
	return d.Err()
}

// CreateResponse is the reply to create (1).
type CreateResponse struct {
	Path string
}

// Encode implements Record.
func (r *CreateResponse) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *CreateResponse) Decode(d *Decoder) error {
	r.Path = d.String()
	return d.Err()
}

// Create2Response is the reply to create2, createContainer and createTTL.
type Create2Response struct {
	Path string
	Stat Stat
}

// Encode implements Record.
func (r *Create2Response) Encode(e *Encoder) {
	e.String(r.Path)
	r.Stat.Encode(e)
}

// Decode implements Record.
func (r *Create2Response) Decode(d *Decoder) error {
	r.Path = d.String()
	return r.Stat.Decode(d)
}

// DeleteRequest is the body of delete (2). Version -1 matches any version.
type DeleteRequest struct {
	Path    string
	Version int32
}

// Encode implements Record.
func (r *DeleteRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int(r.Version)
}

// Decode implements Record.
func (r *DeleteRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Version = d.Int()
	return d.Err()
}

// PathWatchRequest is the body of exists (3), getData (4), getChildren (8)
// and getChildren2 (12), and of getData/getChildren inside a multiRead.
type PathWatchRequest struct {
	Path  string
	Watch bool
}

// Encode implements Record.
func (r *PathWatchRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Bool(r.Watch)
}

// Decode implements Record.
func (r *PathWatchRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Watch = d.Bool()
	return d.Err()
}

// PathRequest is a record holding one path: the body of getACL (6), sync
// (9) and its reply, getEphemerals (103, the prefix path) and
// getAllChildrenNumber (104).
type PathRequest struct {
	Path string
}

// Encode implements Record.
func (r *PathRequest) Encode(e *Encoder) { e.String(r.Path) }

// Decode implements Record.
func (r *PathRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	return d.Err()
}

// StatResponse is the reply to exists, setData and setACL.
type StatResponse struct {
	Stat Stat
}

// Encode implements Record.
func (r *StatResponse) Encode(e *Encoder) { r.Stat.Encode(e) }

// Decode implements Record.
func (r *StatResponse) Decode(d *Decoder) error { return r.Stat.Decode(d) }

// GetDataResponse is the reply to getData (4) and reconfig (16).
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

// Encode implements Record.
func (r *GetDataResponse) Encode(e *Encoder) {
	e.Buffer(r.Data)
	r.Stat.Encode(e)
}

// Decode implements Record.
func (r *GetDataResponse) Decode(d *Decoder) error {
	r.Data = d.Buffer()
	return r.Stat.Decode(d)
}

// SetDataRequest is the body of setData (5). Version -1 matches any.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

// Encode implements Record.
func (r *SetDataRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	e.Int(r.Version)
}

// Decode implements Record.
func (r *SetDataRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.Version = d.Int()
	return d.Err()
}

// GetACLResponse is the reply to getACL (6).
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// Encode implements Record.
func (r *GetACLResponse) Encode(e *Encoder) {
	EncodeACLs(e, r.ACL)
	r.Stat.Encode(e)
}

// Decode implements Record.
func (r *GetACLResponse) Decode(d *Decoder) error {
	r.ACL = DecodeACLs(d)
	return r.Stat.Decode(d)
}

// SetACLRequest is the body of setACL (7). Version is compared with the
// node's aversion; -1 matches any.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

// Encode implements Record.
func (r *SetACLRequest) Encode(e *Encoder) {
	e.String(r.Path)
	EncodeACLs(e, r.ACL)
	e.Int(r.Version)
}

// Decode implements Record.
func (r *SetACLRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.ACL = DecodeACLs(d)
	r.Version = d.Int()
	return d.Err()
}

// GetChildrenResponse is the reply to getChildren (8).
type GetChildrenResponse struct {
	Children []string
}

// Encode implements Record.
func (r *GetChildrenResponse) Encode(e *Encoder) { e.Strings(r.Children) }

// Decode implements Record.
func (r *GetChildrenResponse) Decode(d *Decoder) error {
	r.Children = d.Strings()
	return d.Err()
}

// GetChildren2Response is the reply to getChildren2 (12).
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

// Encode implements Record.
func (r *GetChildren2Response) Encode(e *Encoder) {
	e.Strings(r.Children)
	r.Stat.Encode(e)
}

// Decode implements Record.
func (r *GetChildren2Response) Decode(d *Decoder) error {
	r.Children = d.Strings()
	return r.Stat.Decode(d)
}

// CheckVersionRequest is the body of check (13), normally inside a multi.
type CheckVersionRequest struct {
	Path    string
	Version int32
}

// Encode implements Record.
func (r *CheckVersionRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int(r.Version)
}

// Decode implements Record.
func (r *CheckVersionRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Version = d.Int()
	return d.Err()
}

// ReconfigRequest is the body of reconfig (16). Java clients send null for
// unset strings; those decode as "", so treat "" as "not given". Encode
// sends "" as null, as ZooKeeper tells the modes apart by null: a
// newMembers of "" (not null) asks for an empty membership.
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64
}

// Encode implements Record.
func (r *ReconfigRequest) Encode(e *Encoder) {
	for _, s := range []string{r.JoiningServers, r.LeavingServers, r.NewMembers} {
		if s == "" {
			e.Int(-1) // null
		} else {
			e.String(s)
		}
	}
	e.Long(r.CurConfigID)
}

// Decode implements Record.
func (r *ReconfigRequest) Decode(d *Decoder) error {
	r.JoiningServers = d.String()
	r.LeavingServers = d.String()
	r.NewMembers = d.String()
	r.CurConfigID = d.Long()
	return d.Err()
}

// GetEphemeralsResponse is the reply to getEphemerals (103).
type GetEphemeralsResponse struct {
	Ephemerals []string
}

// Encode implements Record.
func (r *GetEphemeralsResponse) Encode(e *Encoder) { e.Strings(r.Ephemerals) }

// Decode implements Record.
func (r *GetEphemeralsResponse) Decode(d *Decoder) error {
	r.Ephemerals = d.Strings()
	return d.Err()
}

// GetAllChildrenNumberResponse is the reply to getAllChildrenNumber (104).
type GetAllChildrenNumberResponse struct {
	TotalNumber int32
}

// Encode implements Record.
func (r *GetAllChildrenNumberResponse) Encode(e *Encoder) { e.Int(r.TotalNumber) }

// Decode implements Record.
func (r *GetAllChildrenNumberResponse) Decode(d *Decoder) error {
	r.TotalNumber = d.Int()
	return d.Err()
}
