package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/paddockzk/paddock/internal/wire"
)

// ProtectedPrefix starts the name of every node made by
// CreateProtectedEphemeralSequential, as in Curator's protected mode.
const ProtectedPrefix = "_c_"

// CreateProtectedEphemeralSequential creates an ephemeral sequential node
// named "_c_<32 hex GUID>-<base name of path><sequence>" in path's parent
// and returns its path. The GUID makes the create recoverable: if the
// connection is lost before the reply (the node may or may not exist),
// the client lists the parent once reconnected and returns the node
// carrying its GUID, or creates it again if there is none. Retries are
// bounded by ctx only.
func (c *Conn) CreateProtectedEphemeralSequential(ctx context.Context, path string, data []byte, acl []ACL) (string, error) {
	if err := wire.ValidateSequentialPrefix(path); err != nil {
		return "", err
	}
	guid, err := newGUID()
	if err != nil {
		return "", err
	}
	parent, base := wire.ParentPath(path), wire.BaseName(path)
	prefix := ProtectedPrefix + guid + "-"
	protected := wire.JoinPath(parent, prefix+base)
	for {
		p, _, err := c.Create(ctx, protected, data, ModeEphemeralSequential, acl)
		if !errors.Is(err, ErrConnectionLoss) {
			return p, err
		}
		c.log.Info("zk: protected create lost its reply; looking for the node", "path", protected)
		p, err = c.findProtected(ctx, parent, prefix)
		if err != nil || p != "" {
			return p, err
		}
	}
}

// findProtected lists parent (retrying on connection loss) and returns the
// path of the child starting with prefix, or "" if there is none.
func (c *Conn) findProtected(ctx context.Context, parent, prefix string) (string, error) {
	for {
		children, _, err := c.Children(ctx, parent)
		if errors.Is(err, ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return "", err
		}
		for _, name := range children {
			if strings.HasPrefix(name, prefix) {
				return wire.JoinPath(parent, name), nil
			}
		}
		return "", nil
	}
}

// newGUID returns 32 random hex digits.
func newGUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
