package server

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/stretchr/testify/require"
)

// A write proposed on a stopped server is answered: hashicorp/raft's
// ApplyLog after its shutdown picks at random between its closed shutdown
// channel and room in its buffered apply channel, and a proposal left in
// that buffer was never answered (every other apply hung).
func TestWriteOnAStoppedServerIsAnswered(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Port = 0
	s, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	for range 20 {
		done := make(chan error, 1)
		go func() {
			_, err := s.apply(&fsm.Command{Type: fsm.CmdSetConfig, Data: []byte("server.1=x")})
			done <- err
		}()
		select {
		case err := <-done:
			require.ErrorIs(t, err, raft.ErrRaftShutdown)
		case <-time.After(10 * time.Second):
			t.Fatal("a write on a stopped server was never answered")
		}
	}
}
