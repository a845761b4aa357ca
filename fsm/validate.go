package fsm

import (
	"net"
	"strconv"
	"strings"

	"github.com/paddockzk/paddock/internal/wire"
)

// ValidateOp performs the checks that depend only on the op itself, in
// ZooKeeper's order (PrepRequestProcessor): create mode and TTL, path
// syntax, ACL syntax. The server calls it at the door and Apply calls it
// again. It returns wire.OK or the error code.
func ValidateOp(op *Op) wire.Code {
	switch op.Type {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return validateCreate(op)
	case wire.OpDelete, wire.OpSetData, wire.OpCheck, wire.OpDeleteContainer:
		return pathCode(wire.ValidatePath(op.Path))
	case wire.OpSetACL:
		if c := pathCode(wire.ValidatePath(op.Path)); c != wire.OK {
			return c
		}
		return ValidateACL(op.ACL)
	}
	return wire.ErrUnimplemented
}

func validateCreate(op *Op) wire.Code {
	if !op.Mode.Valid() {
		return wire.ErrBadArguments
	}
	ttl := int64(-1) // ZooKeeper passes -1 for requests without a TTL
	if op.Type == wire.OpCreateTTL {
		ttl = op.TTL
	}
	if op.Mode.IsTTL() {
		if ttl <= 0 || ttl > wire.MaxTTL {
			return wire.ErrBadArguments
		}
	} else if ttl >= 0 {
		return wire.ErrBadArguments
	}
	if op.Type == wire.OpCreateContainer && !op.Mode.IsContainer() {
		return wire.ErrBadArguments
	}
	var err error
	if op.Mode.IsSequential() {
		err = wire.ValidateSequentialPrefix(op.Path)
	} else {
		err = wire.ValidatePath(op.Path)
	}
	if c := pathCode(err); c != wire.OK {
		return c
	}
	return ValidateACL(op.ACL)
}

func pathCode(err error) wire.Code {
	if err != nil {
		return wire.ErrBadArguments
	}
	return wire.OK
}

// ValidateACL checks an ACL list as ZooKeeper's fixupACL does once the
// "auth" scheme has been expanded: not empty, and every id valid for its
// scheme (world:anyone, digest user:hash, ip address or CIDR, x509 and
// sasl any non-empty id, super). An unexpanded "auth" entry is invalid
// here: the server replaces it with the caller's identities first.
func ValidateACL(acl []wire.ACL) wire.Code {
	if len(acl) == 0 {
		return wire.ErrInvalidACL
	}
	for _, a := range acl {
		if !validID(a.ID) {
			return wire.ErrInvalidACL
		}
	}
	return wire.OK
}

func validID(id wire.Id) bool {
	switch id.Scheme {
	case "world":
		return id.ID == "anyone"
	case "digest":
		return len(strings.Split(id.ID, ":")) == 2
	case "ip":
		return ValidIPID(id.ID)
	case "x509", "sasl", "super":
		return id.ID != ""
	}
	return false
}

// ValidIPID reports whether s is an ip-scheme id: an IPv4 or IPv6 address,
// optionally followed by /bits.
func ValidIPID(s string) bool {
	addr, bits, hasBits := strings.Cut(s, "/")
	ip := net.ParseIP(addr)
	if ip == nil {
		return false
	}
	if !hasBits {
		return true
	}
	n, err := strconv.Atoi(bits)
	max := 128
	if ip.To4() != nil {
		max = 32
	}
	return err == nil && n >= 0 && n <= max
}
