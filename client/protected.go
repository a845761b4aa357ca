package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// ProtectedPrefix starts the name of every node made by
// CreateProtectedEphemeralSequential, as in Curator's protected mode.
const ProtectedPrefix = "_c_"

// ProtectedCleanupTimeout bounds the background deletion of a protected
// node whose create may have happened after the caller gave up.
const ProtectedCleanupTimeout = 30 * time.Second

// protectedRetryPause is the pause between the background deletion's
// attempts while the connection is down.
const protectedRetryPause = 50 * time.Millisecond

// CreateProtectedEphemeralSequential creates an ephemeral sequential node
// named "_c_<32 hex GUID>-<base name of path><sequence>" in path's parent
// and returns its path. The GUID makes the create recoverable: if the
// connection is lost before the reply (the node may or may not exist),
// the client syncs and lists the parent once reconnected and returns the
// node carrying its GUID, or creates it again if there is none. Retries
// are bounded by ctx only. If ctx ends while the node may exist, the call
// returns ctx.Err() and deletes the node in the background (for at most
// ProtectedCleanupTimeout), as Curator's FindAndDeleteProtectedNode does,
// so that a node nobody knows of does not outlive the call (a lock waiter
// would otherwise stall its lock).
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
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				go c.deleteProtected(context.WithoutCancel(ctx), parent, prefix)
			}
			return p, err
		}
		c.log.Info("zk: protected create lost its reply; looking for the node", "path", protected)
		p, err = c.findProtected(ctx, parent, prefix)
		if err != nil && ctx.Err() != nil {
			go c.deleteProtected(context.WithoutCancel(ctx), parent, prefix)
		}
		if err != nil || p != "" {
			return p, err
		}
	}
}

// findProtected syncs and lists parent (retrying on connection loss) and
// returns the path of the child starting with prefix, or "" if there is
// none. The sync makes a create the leader applied before the connection
// broke visible on the server now serving this Conn.
func (c *Conn) findProtected(ctx context.Context, parent, prefix string) (string, error) {
	for {
		err := c.Sync(ctx, parent)
		var children []string
		if err == nil {
			children, _, err = c.Children(ctx, parent)
		}
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

// deleteProtected deletes every child of parent starting with prefix,
// retrying while the connection is down, until none is left, the session
// ends or ProtectedCleanupTimeout passes.
func (c *Conn) deleteProtected(ctx context.Context, parent, prefix string) {
	ctx, cancel := context.WithTimeout(ctx, ProtectedCleanupTimeout)
	defer cancel()
	for {
		p, err := c.findProtected(ctx, parent, prefix)
		if err == nil && p == "" {
			return
		}
		if err == nil {
			err = c.Delete(ctx, p, -1)
		}
		switch {
		case err == nil, errors.Is(err, ErrNoNode):
			continue
		case errors.Is(err, ErrConnectionLoss):
		default:
			c.log.Info("zk: giving up deleting a protected node", "parent", parent, "prefix", prefix, "err", err)
			return
		}
		t := time.NewTimer(protectedRetryPause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
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
