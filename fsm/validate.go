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
//
// As in ZooKeeper, create and delete check little of the path here: a
// create's full path check comes after its parent lookup (FSM.create), and
// delete never checks more than deletePathCode does.
func ValidateOp(op *Op) wire.Code {
	switch op.Type {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return validateCreate(op)
	case wire.OpDelete:
		return deletePathCode(op.Path)
	case wire.OpSetData, wire.OpCheck, wire.OpDeleteContainer:
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
	// createContainer takes any other mode: the opcode makes the node a
	// container (FSM.create), as in ZooKeeper.
	if !hasParent(op.Path) {
		return wire.ErrBadArguments
	}
	return ValidateACL(op.ACL)
}

// hasParent is ZooKeeper's validatePathForCreate and the first half of its
// getParentPathAndValidate: a path without '/' or with a NUL is refused
// before anything else; the rest of the syntax is left to later checks.
func hasParent(path string) bool {
	return strings.IndexByte(path, '/') >= 0 && strings.IndexByte(path, 0) < 0
}

// deletePathCode is all the path checking ZooKeeper does for delete
// (getParentPathAndValidate): BadArguments for a path without '/', with a
// NUL, or naming a system node; any other malformed path names no node
// and is answered by the lookups (NoNode, or NoAuth on its parent).
func deletePathCode(path string) wire.Code {
	if !hasParent(path) || isSystemPath(path) {
		return wire.ErrBadArguments
	}
	return wire.OK
}

func pathCode(err error) wire.Code {
	if err != nil {
		return wire.ErrBadArguments
	}
	return wire.OK
}

// ValidateACL checks an ACL list as ZooKeeper's fixupACL does once the
// "auth" scheme has been expanded: not empty, and every id valid for one
// of the schemes the server authenticates (world:anyone, digest user:hash,
// ip address or CIDR, x509 any non-empty id). An unexpanded "auth" entry
// is invalid here: the server replaces it with the caller's identities
// first. Perms are not checked, as in ZooKeeper. "sasl" and "super" ids
// are refused, as by a ZooKeeper without SASL: no caller could ever hold
// them.
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
		// DigestAuthenticationProvider.isValid: id.split(":").length == 2,
		// where Java's split drops trailing empty fields.
		parts := strings.Split(id.ID, ":")
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		return len(parts) == 2
	case "ip":
		return ValidIPID(id.ID)
	case "x509":
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

// isCreate reports whether t is one of the create opcodes.
func isCreate(t wire.OpCode) bool {
	return t == wire.OpCreate || t == wire.OpCreate2 || t == wire.OpCreateContainer || t == wire.OpCreateTTL
}
