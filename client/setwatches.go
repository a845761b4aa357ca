package client

import (
	"github.com/paddockzk/paddock/internal/wire"
)

// restoreWatches re-registers the Conn's watches on a new connection,
// before any other request: SetWatches (op 101) for one-shot watches, or
// SetWatches2 (op 105) for batches holding persistent watches, all with
// xid -8 and relativeZxid = lastZxidSeen, so that the server fires the
// events missed while disconnected. Batches are split so that every frame
// stays within min(128 KiB, max frame).
func (c *Conn) restoreWatches(cs *connState) error {
	lists := c.watches.snapshot()
	limit := min(setWatchesMaxBytes, c.opts.maxFrame)
	reqs := setWatchesRequests(c.lastZxid.Load(), lists, limit)
	if len(reqs) == 0 {
		return nil
	}
	var buf []byte
	for _, r := range reqs {
		r.setXid(wire.XidSetWatches)
		r.onReply = func(code wire.Code) {
			if code != wire.OK {
				c.log.Warn("zk: setWatches failed", "err", code)
			}
		}
		buf = append(buf, r.frame...)
	}
	return c.writeBatch(cs, reqs, buf)
}

// setWatchesFixedSize is the size of a SetWatches2 frame with empty lists:
// length, header (xid, op), relativeZxid and five vector counts.
const setWatchesFixedSize = 4 + 8 + 8 + 5*4

// setWatchesRequests splits lists into frames of at most limit bytes
// (a single path longer than that still gets a frame of its own).
func setWatchesRequests(relZxid int64, lists watchLists, limit int) []*request {
	var reqs []*request
	var batch watchLists
	size, n := setWatchesFixedSize, 0
	flush := func() {
		if n == 0 {
			return
		}
		reqs = append(reqs, setWatchesRequest(relZxid, batch))
		batch = watchLists{}
		size, n = setWatchesFixedSize, 0
	}
	for k, paths := range lists {
		for _, p := range paths {
			if n > 0 && size+4+len(p) > limit {
				flush()
			}
			batch[k] = append(batch[k], p)
			size += 4 + len(p)
			n++
		}
	}
	flush()
	return reqs
}

func setWatchesRequest(relZxid int64, l watchLists) *request {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	if len(l[3]) == 0 && len(l[4]) == 0 {
		return newRequest(wire.OpSetWatches, &wire.SetWatches{
			RelativeZxid: relZxid,
			DataWatches:  nonNil(l[0]),
			ExistWatches: nonNil(l[1]),
			ChildWatches: nonNil(l[2]),
		}, nil)
	}
	return newRequest(wire.OpSetWatches2, &wire.SetWatches2{
		RelativeZxid:               relZxid,
		DataWatches:                nonNil(l[0]),
		ExistWatches:               nonNil(l[1]),
		ChildWatches:               nonNil(l[2]),
		PersistentWatches:          nonNil(l[3]),
		PersistentRecursiveWatches: nonNil(l[4]),
	}, nil)
}
