package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// A node written with the largest setData the server takes can be read
// back: its getData reply is larger than the request (ZooKeeper's server
// allows jute.maxbuffer.extrasize more; the Java client reads up to 4 MiB).
// The client used to bound replies by the request limit, so the read broke
// the connection, every time.
func TestServerLargestNodeReadsBack(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		ctx := testCtx(t)
		// A short path: the longer the path, the smaller the data.
		p := fmt.Sprintf("/big%d", time.Now().UnixNano()%1e6)
		_, _, err := c.Create(ctx, p, nil, ModePersistent, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Delete(context.Background(), p, -1) })
		// A setData frame is 24 bytes and the path beside the data.
		data := make([]byte, wire.DefaultMaxFrame-26-len(p))
		data[len(data)-1] = 7
		_, err = c.Set(ctx, p, data, -1)
		require.NoError(t, err)
		got, st, err := c.Get(ctx, p)
		require.NoError(t, err)
		require.Equal(t, data, got)
		require.EqualValues(t, len(data), st.DataLength)
	})
}
