package fsm

import (
	"net"
	"regexp"
	"strings"

	"github.com/paddockzk/paddock/internal/wire"
)

// SuperID is the identity that bypasses every ACL check (ZooKeeper's
// "super" auth id, granted by the configured super digest).
var SuperID = wire.Id{Scheme: "super", ID: ""}

// CheckACL reports whether a caller with the identities auth holds perm
// on a node whose ACL is acl, as ZooKeeper's ZooKeeperServer.checkACL: a
// super identity passes; an empty ACL passes; otherwise some entry must
// grant perm to world:anyone or to one of auth's identities (digest, x509
// and sasl match exactly; an ip entry matches the caller's address, with
// an optional /bits prefix length).
func CheckACL(acl []wire.ACL, perm wire.Perm, auth []wire.Id) bool {
	for _, id := range auth {
		if id.Scheme == SuperID.Scheme {
			return true
		}
	}
	if len(acl) == 0 {
		return true
	}
	for _, a := range acl {
		if a.Perms&perm == 0 {
			continue
		}
		if a.ID.Scheme == "world" && a.ID.ID == "anyone" {
			return true
		}
		for _, id := range auth {
			if id.Scheme == a.ID.Scheme && idMatches(id, a.ID) {
				return true
			}
		}
	}
	return false
}

func idMatches(caller, entry wire.Id) bool {
	if caller.Scheme != "ip" {
		return caller.ID == entry.ID
	}
	ip := net.ParseIP(caller.ID)
	if ip == nil {
		return false
	}
	if !strings.Contains(entry.ID, "/") {
		other := net.ParseIP(entry.ID)
		return other != nil && other.Equal(ip)
	}
	_, cidr, err := net.ParseCIDR(entry.ID)
	return err == nil && cidr.Contains(ip)
}

// MaskDigests returns a copy of acl with digest hashes replaced by "x", as
// ZooKeeper's getACL answers callers without ADMIN on the node: it
// rewrites a digest id with id.replaceAll(":.*", ":x"), where Java's "."
// stops at a line terminator, so an id such as "u:a\nb::" (a valid digest
// id: Java's split drops the trailing empty parts) is shown "u:x\nb:x".
func MaskDigests(acl []wire.ACL) []wire.ACL {
	out := make([]wire.ACL, len(acl))
	for i, a := range acl {
		out[i] = a
		if a.ID.Scheme == "digest" {
			out[i].ID.ID = digestHash.ReplaceAllLiteralString(a.ID.ID, ":x")
		}
	}
	return out
}

// digestHash is ZooKeeper's ":.*" with the line terminators Java's "."
// does not match (Pattern without DOTALL or UNIX_LINES).
var digestHash = regexp.MustCompile(`:[^\n\r\x{85}\x{2028}\x{2029}]*`)

// allowed checks perm on n for cmd's caller; internal commands (no
// session and no identities) are always allowed.
func (f *FSM) allowed(cmd *Command, n *node, perm wire.Perm) bool {
	if cmd.Session == 0 && len(cmd.Auth) == 0 {
		return true
	}
	return CheckACL(f.acls.get(n.aclRef), perm, cmd.Auth)
}
