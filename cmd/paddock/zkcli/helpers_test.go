package zkcli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the Shell's event goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// fixture is a Shell connected to an in-process server, with a second
// client to change things behind the shell's back.
type fixture struct {
	t      *testing.T
	srv    *zktest.Server
	sh     *Shell
	events *syncBuffer
	other  *client.Conn
}

func newFixture(t *testing.T, opts ...func(*Config)) *fixture {
	t.Helper()
	return newFixtureOn(t, zktest.Start(t), opts...)
}

// newFixtureOn is newFixture on a server of the caller's.
func newFixtureOn(t *testing.T, srv *zktest.Server, opts ...func(*Config)) *fixture {
	t.Helper()
	events := &syncBuffer{}
	cfg := Config{Events: events, Location: time.UTC, Version: "paddock test", Timeout: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	sh := New(cfg)
	require.NoError(t, sh.Connect(context.Background(), srv.Addr()))
	t.Cleanup(func() { sh.Close() })
	other, err := client.Connect(context.Background(), srv.Servers())
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	return &fixture{t: t, srv: srv, sh: sh, events: events, other: other}
}

// run runs a command line and returns its output and error.
func (f *fixture) run(line string) (string, error) {
	var out bytes.Buffer
	err := f.sh.Run(context.Background(), line, &out)
	return out.String(), err
}

// ok runs a command that must succeed and returns its output.
func (f *fixture) ok(line string) string {
	f.t.Helper()
	out, err := f.run(line)
	require.NoError(f.t, err, line)
	return out
}

// expect runs a command that must succeed with exactly want as output.
func (f *fixture) expect(line, want string) {
	f.t.Helper()
	require.Equal(f.t, want, f.ok(line), line)
}

// fail runs a command that must fail with exactly msg, exit status 1.
func (f *fixture) fail(line, msg string) {
	f.t.Helper()
	out, err := f.run(line)
	require.Error(f.t, err, line)
	require.Equal(f.t, msg, err.Error(), line)
	require.Equal(f.t, 1, ExitCode(err), line)
	require.Empty(f.t, out, line)
}

// statText is the stat block zkCli prints for the node at path, built
// from what the second client reads (independently of writeStat).
func (f *fixture) statText(path string) string {
	f.t.Helper()
	st, ok, err := f.other.Exists(context.Background(), path)
	require.NoError(f.t, err)
	require.True(f.t, ok, path)
	date := func(ms int64) string {
		return time.UnixMilli(ms).UTC().Format("Mon Jan 02 15:04:05 UTC 2006")
	}
	return fmt.Sprintf(`cZxid = 0x%x
ctime = %s
mZxid = 0x%x
mtime = %s
pZxid = 0x%x
cversion = %d
dataVersion = %d
aclVersion = %d
ephemeralOwner = 0x%x
dataLength = %d
numChildren = %d
`, st.Czxid, date(st.Ctime), st.Mzxid, date(st.Mtime), st.Pzxid, st.Cversion, st.Version,
		st.Aversion, uint64(st.EphemeralOwner), st.DataLength, st.NumChildren)
}

// event is how zkCli prints a watch event.
func event(typ, path string) string {
	return fmt.Sprintf("\nWATCHER::\n\nWatchedEvent state:SyncConnected type:%s path:%s\n", typ, path)
}

// waitEvents polls until the events printed contain every string of want.
func (f *fixture) waitEvents(want ...string) {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		got := f.events.String()
		for _, w := range want {
			if !strings.Contains(got, w) {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "events %q not all printed; got:\n%s", want, f.events)
}

// waitCount polls until the events printed contain n copies of want.
func (f *fixture) waitCount(want string, n int) {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		return strings.Count(f.events.String(), want) >= n
	}, 10*time.Second, 10*time.Millisecond, "%d times %q not printed; got:\n%s", n, want, f.events)
}

// closedEvents closes the shell, which waits until every event
// goroutine has finished, and returns everything printed.
func (f *fixture) closedEvents() string {
	f.sh.Close()
	return f.events.String()
}

func (f *fixture) create(path, data string) {
	f.t.Helper()
	_, _, err := f.other.Create(context.Background(), path, []byte(data), client.ModePersistent, nil)
	require.NoError(f.t, err)
}

func (f *fixture) set(path, data string) {
	f.t.Helper()
	_, err := f.other.Set(context.Background(), path, []byte(data), -1)
	require.NoError(f.t, err)
}
