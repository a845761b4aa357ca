package recipes

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"github.com/paddockzk/paddock/client"
)

// Counter is a shared integer updated by compare-and-set on the node's
// version: Curator's SharedCount, kazoo's Counter, etcd's STM in
// miniature. There is no lock: a writer that lost a race retries.
//
// The encoding follows WithCompat: decimal text for Paddock and Kazoo (a
// kazoo Counter), a 4-byte big-endian int32 for Curator (Curator's
// SharedCount, kazoo's Counter with support_curator=True). A missing or
// empty node counts as 0.
type Counter struct {
	conn *client.Conn
	path string
	o    options
}

// NewCounter returns a counter stored at path. Options: WithCompat,
// WithACL.
func NewCounter(conn *client.Conn, path string, opts ...Option) *Counter {
	return &Counter{conn: conn, path: cleanPath(path), o: buildOptions(opts)}
}

// Get returns the value and the node's version, to pass to
// CompareAndSet. A missing node is created with value 0.
func (c *Counter) Get(ctx context.Context) (value int64, version int32, err error) {
	for {
		data, st, err := c.conn.Get(ctx, c.path)
		if errors.Is(err, client.ErrNoNode) {
			if err = c.create(ctx); err == nil {
				continue
			}
		}
		if err != nil {
			return 0, 0, err
		}
		v, err := c.decode(data)
		return v, st.Version, err
	}
}

func (c *Counter) create(ctx context.Context) error {
	if err := ensurePath(ctx, c.conn, parentPath(c.path), client.ModePersistent, c.o.acl); err != nil {
		return err
	}
	data, _ := c.encode(0)
	_, _, err := c.conn.Create(ctx, c.path, data, client.ModePersistent, c.o.acl)
	if errors.Is(err, client.ErrNodeExists) {
		return nil
	}
	return err
}

// CompareAndSet sets the value if the node's version is still version. It
// reports false, without error, when someone else changed it first.
func (c *Counter) CompareAndSet(ctx context.Context, version int32, value int64) (bool, error) {
	data, err := c.encode(value)
	if err != nil {
		return false, err
	}
	_, err = c.conn.Set(ctx, c.path, data, version)
	if errors.Is(err, client.ErrBadVersion) {
		return false, nil
	}
	return err == nil, err
}

// Add adds delta, retrying on conflicts, and returns the new value.
func (c *Counter) Add(ctx context.Context, delta int64) (int64, error) {
	for {
		v, ver, err := c.Get(ctx)
		if err != nil {
			return 0, err
		}
		ok, err := c.CompareAndSet(ctx, ver, v+delta)
		if err != nil || ok {
			return v + delta, err
		}
	}
}

func (c *Counter) encode(v int64) ([]byte, error) {
	if c.o.compat != Curator {
		return []byte(strconv.FormatInt(v, 10)), nil
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return nil, errorf(ErrBadCounter, "%d does not fit Curator's int32", v)
	}
	return binary.BigEndian.AppendUint32(nil, uint32(int32(v))), nil
}

func (c *Counter) decode(data []byte) (int64, error) {
	switch {
	case len(data) == 0:
		return 0, nil
	case c.o.compat == Curator && len(data) == 4:
		return int64(int32(binary.BigEndian.Uint32(data))), nil
	case c.o.compat == Curator:
		return 0, errorf(ErrBadCounter, "%s holds %d bytes, not a Curator int32", c.path, len(data))
	}
	v, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return 0, errorf(ErrBadCounter, "%s holds %q", c.path, data)
	}
	return v, nil
}
