package recipes

import (
	"context"
	"errors"
	"time"

	"github.com/paddockzk/paddock/client"
)

// cleanup runs del (a deletion, idempotent) with ctx's values but its own
// deadline, so that it also runs after ctx was cancelled. If del fails
// because the connection is lost, it is retried in the background until
// it succeeds, the session ends (taking its ephemeral nodes with it) or
// maxBackgroundCleanup passes: this is Curator's "guaranteed delete".
func cleanup(ctx context.Context, timeout time.Duration, del func(context.Context) error) {
	base := context.WithoutCancel(ctx)
	c, cancel := context.WithTimeout(base, timeout)
	err := del(c)
	cancel()
	if !needsRetry(err) {
		return
	}
	go func() {
		c, cancel := context.WithTimeout(base, maxBackgroundCleanup)
		defer cancel()
		for needsRetry(err) && pause(c, retryPause) {
			err = del(c)
		}
	}()
}

// needsRetry: the deletion may not have happened and the session may
// still hold the node.
func needsRetry(err error) bool {
	return err != nil && !isTerminal(err) && (isRetryable(err) || errors.Is(err, context.DeadlineExceeded))
}

// ensurePath creates p and its missing ancestors with mode; existing
// nodes are left alone. Ancestors of a container are containers too, as
// Curator's creatingParentContainersIfNeeded makes them.
func ensurePath(ctx context.Context, conn *client.Conn, p string, mode client.CreateMode, acl []client.ACL) error {
	if p == "/" {
		return nil
	}
	for {
		_, _, err := conn.Create(ctx, p, nil, mode, acl)
		switch {
		case err == nil || errors.Is(err, client.ErrNodeExists):
			return nil
		case errors.Is(err, client.ErrNoNode):
			if err := ensurePath(ctx, conn, parentPath(p), mode, acl); err != nil {
				return err
			}
		case !retryAfter(ctx, &err):
			return err
		}
	}
}

func parentPath(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}
