package recipes

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Compat selects how locks, read/write locks and elections name and order
// their nodes, so that Paddock recipes and other clients' recipes on the
// same path see each other as contenders. Every scheme names a node
// <unique id><marker><sequence>, orders contenders by the sequence suffix
// after the marker (compared as a string, as kazoo and Curator do) and
// finds its own node after a connection loss by the unique id.
//
//	            mutex                    read / write             election
//	Paddock     _c_<32 hex>-lock-<seq>   _c_<32 hex>-read-/-write-  _c_<32 hex>-election-
//	Kazoo       <32 hex>__lock__<seq>    <32 hex>__rlock__/__lock__ <32 hex>__lock__
//	Curator     _c_<uuid>-lock-<seq>     _c_<uuid>-__READ__/__WRIT__ _c_<uuid>-latch-
//
// Paddock's mutex names are also those of go-zookeeper's zk.Lock. Kazoo's
// are kazoo.recipe.lock's Lock, ReadLock/WriteLock and Election (which is
// a Lock). Curator's are InterProcessMutex, InterProcessReadWriteLock and
// LeaderLatch, with Curator's protected-mode prefix.
type Compat int

// Naming schemes.
const (
	Paddock Compat = iota
	Kazoo
	Curator
)

// String returns the scheme's name as ParseCompat accepts it.
func (c Compat) String() string {
	switch c {
	case Paddock:
		return "paddock"
	case Kazoo:
		return "kazoo"
	case Curator:
		return "curator"
	}
	return fmt.Sprintf("Compat(%d)", int(c))
}

// ParseCompat parses "paddock", "kazoo" or "curator" ("" is paddock).
func ParseCompat(s string) (Compat, error) {
	switch strings.ToLower(s) {
	case "", "paddock":
		return Paddock, nil
	case "kazoo":
		return Kazoo, nil
	case "curator":
		return Curator, nil
	}
	return 0, fmt.Errorf("recipes: unknown compat %q (want paddock, kazoo or curator)", s)
}

// role is what a contender node stands for.
type role int

const (
	roleMutex role = iota
	roleRead
	roleWrite
	roleElection
	roleLease
	numRoles
)

var markers = map[Compat][numRoles]string{
	Paddock: {"lock-", "read-", "write-", "election-", "lease-"},
	Kazoo:   {"__lock__", "__rlock__", "__lock__", "__lock__", "lease-"},
	Curator: {"lock-", "__READ__", "__WRIT__", "latch-", "lease-"},
}

func (c Compat) marker(r role) string {
	m, ok := markers[c]
	if !ok {
		m = markers[Paddock]
	}
	return m[r]
}

// newID returns a fresh unique id in c's format: 32 hex digits, or a
// version-4 UUID for Curator.
func (c Compat) newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	if c != Curator {
		return hex.EncodeToString(b[:]), nil
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// idPrefix is the part of a node name that identifies its creator: every
// node whose name starts with it is ours.
func (c Compat) idPrefix(id string) string {
	if c == Kazoo {
		return id
	}
	return "_c_" + id + "-"
}

// nodePrefix is the name given to a sequential create: the sequence is
// appended by the server.
func (c Compat) nodePrefix(id string, r role) string {
	return c.idPrefix(id) + c.marker(r)
}

// idOf returns the part of a contender's name before its marker: the
// creator's id prefix (see idPrefix).
func (c Compat) idOf(ct contender) string {
	return ct.name[:len(ct.name)-len(ct.seq)-len(c.marker(ct.role))]
}

// contender is one recognised node of a lock directory.
type contender struct {
	name string
	seq  string
	role role
}

// parseContender recognises name as a node of one of roles: the name
// holds the role's marker followed by a sequence number (an optional
// minus sign and digits, at least 10 characters).
func (c Compat) parseContender(name string, roles []role) (contender, bool) {
	best := contender{}
	at := -1
	for _, r := range roles {
		m := c.marker(r)
		i := strings.LastIndex(name, m)
		if i < 0 || i <= at {
			continue
		}
		if seq := name[i+len(m):]; validSeq(seq) {
			best, at = contender{name: name, seq: seq, role: r}, i
		}
	}
	return best, at >= 0
}

func validSeq(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if len(s) < 10 || digits == "" {
		return false
	}
	for _, ch := range digits {
		if ch < '0' || ch > '9' {
			return false
		}
	}
	return true
}

// sortContenders returns the contenders among children, ordered by
// sequence (ties, which only a downgrade creates, by name).
func (c Compat) sortContenders(children []string, roles []role) []contender {
	var out []contender
	for _, name := range children {
		if ct, ok := c.parseContender(name, roles); ok {
			out = append(out, ct)
		}
	}
	slices.SortFunc(out, func(a, b contender) int {
		if x := strings.Compare(a.seq, b.seq); x != 0 {
			return x
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

func indexOf(cs []contender, name string) int {
	return slices.IndexFunc(cs, func(c contender) bool { return c.name == name })
}
