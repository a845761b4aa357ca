package diff_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// TestRepliesLargerThanJuteMaxbuffer: jute.maxbuffer bounds what a server
// reads, not what it answers. A multi whose reply is larger than 1 MiB
// (14,000 setData results) is answered in full, and a getChildren of a
// node whose children's names take more than 1 MiB too (the Java client
// reads replies up to 4 MiB). Paddock used to answer both
// MARSHALLINGERROR, the multi after applying it.
func TestRepliesLargerThanJuteMaxbuffer(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/big", "", wire.ModePersistent)
		sets := make([]wire.MultiOp, 14000)
		for i := range sets {
			sets[i] = r.mSetData("/big", "", -1)
		}
		res := c.call(wire.OpMulti, &wire.MultiRequest{Ops: sets})
		r.note("multi of %d setData: %s, %d results", len(sets), codeName(res.code), multiResults(res))
		r.get(c, "/big", false)

		name := strings.Repeat("n", 100)
		for batch := range 4 {
			ops := make([]wire.MultiOp, 3250)
			for i := range ops {
				ops[i] = r.mCreate(wire.OpCreate, fmt.Sprintf("/big/%s%05d", name, batch*len(ops)+i), "", wire.ModePersistent)
			}
			res := c.call(wire.OpMulti, &wire.MultiRequest{Ops: ops})
			r.note("multi of %d creates: %s", len(ops), codeName(res.code))
		}
		res = c.call(wire.OpGetChildren, &wire.PathWatchRequest{Path: r.p("/big")})
		n := 0
		if kids, ok := res.resp.(*wire.GetChildrenResponse); ok {
			n = len(kids.Children)
		}
		r.note("getChildren of 13,000 children (about 1.4 MB): %s, %d children", codeName(res.code), n)
		r.exists(c, "/big", false)
	})
}

// multiResults counts a multi reply's results.
func multiResults(res result) int {
	if m, ok := res.resp.(*wire.MultiResponse); ok {
		return len(m.Results)
	}
	return 0
}
