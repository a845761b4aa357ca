package wire

// Encode implements Record.
func (s *Stat) Encode(e *Encoder) {
	e.Long(s.Czxid)
	e.Long(s.Mzxid)
	e.Long(s.Ctime)
	e.Long(s.Mtime)
	e.Int(s.Version)
	e.Int(s.Cversion)
	e.Int(s.Aversion)
	e.Long(s.EphemeralOwner)
	e.Int(s.DataLength)
	e.Int(s.NumChildren)
	e.Long(s.Pzxid)
}

// Decode implements Record.
func (s *Stat) Decode(d *Decoder) error {
	s.Czxid = d.Long()
	s.Mzxid = d.Long()
	s.Ctime = d.Long()
	s.Mtime = d.Long()
	s.Version = d.Int()
	s.Cversion = d.Int()
	s.Aversion = d.Int()
	s.EphemeralOwner = d.Long()
	s.DataLength = d.Int()
	s.NumChildren = d.Int()
	s.Pzxid = d.Long()
	return d.Err()
}

// Encode implements Record.
func (i *Id) Encode(e *Encoder) {
	e.String(i.Scheme)
	e.String(i.ID)
}

// Decode implements Record.
func (i *Id) Decode(d *Decoder) error {
	i.Scheme = d.String()
	i.ID = d.String()
	return d.Err()
}

// Encode implements Record.
func (a *ACL) Encode(e *Encoder) {
	e.Int(int32(a.Perms))
	a.ID.Encode(e)
}

// Decode implements Record.
func (a *ACL) Decode(d *Decoder) error {
	a.Perms = Perm(d.Int())
	return a.ID.Decode(d)
}

// EncodeACLs appends a vector of ACLs; nil encodes as count -1.
func EncodeACLs(e *Encoder, acl []ACL) {
	if acl == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(acl)))
	for i := range acl {
		acl[i].Encode(e)
	}
}

// DecodeACLs reads a vector of ACLs (a null vector reads as nil).
func DecodeACLs(d *Decoder) []ACL {
	n := d.Count(12) // perms + two empty strings
	if n < 0 || d.Err() != nil {
		return nil
	}
	acl := make([]ACL, n)
	for i := range acl {
		if acl[i].Decode(d) != nil {
			return nil
		}
	}
	return acl
}
