//go:build !failpoints

package server

import "github.com/hashicorp/raft"

// withFailpoints returns f: this build has no failpoints
// (internal/failpoint).
func withFailpoints(f raft.FSM) raft.FSM { return f }
