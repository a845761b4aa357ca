// Package failpoint lets tests crash a server process at a chosen point of
// its write path, as etcd's gofail does: before and after the Raft log
// stores a batch, on the cluster leader's log writer, before and after the
// state machine applies a batch, and while a snapshot is written
// (reliability plan 9.1, "failpoint hooks").
//
// In an ordinary build Hit is an empty function the compiler removes: the
// hooks cost nothing and nothing can turn them on. Built with
// `-tags failpoints`, a process reads the environment variable Env once,
// a comma-separated list of NAME=exit@N, and exits with ExitCode (no
// deferred function runs, nothing is flushed: a crash, as SIGKILL) at the
// Nth time it reaches failpoint NAME (exit alone means exit@1). A name
// that is not one of Names, or a malformed action, makes the first Hit
// exit with code 2 and a message, so a test cannot arm a failpoint that
// does not exist.
package failpoint

// The failpoints, by where they sit.
const (
	// BeforeStoreLogs: a batch of Raft log entries is about to be stored
	// (every role; under the cluster leader's log writer too).
	BeforeStoreLogs = "before-store-logs"
	// AfterStoreLogs: a batch is stored (and synced), and Raft does not
	// know yet.
	AfterStoreLogs = "after-store-logs"
	// LeaderLogWriting: the cluster leader's log writer is about to store
	// a batch that Raft is already replicating: the followers can hold,
	// and commit, entries the leader never stored.
	LeaderLogWriting = "leader-log-writing"
	// LeaderLogStored: the cluster leader's log writer stored a batch and
	// has not yet let it be applied or committed on its account.
	LeaderLogStored = "leader-log-stored"
	// BeforeApply: a committed batch is about to be applied.
	BeforeApply = "before-apply"
	// AfterApply: a batch is applied and its writes not yet answered.
	AfterApply = "after-apply"
	// BeforeSnapshotPersist: a snapshot is about to be written.
	BeforeSnapshotPersist = "before-snapshot-persist"
	// BeforeSnapshotClose: a snapshot's data is written and the snapshot
	// not yet closed (made durable and visible).
	BeforeSnapshotClose = "before-snapshot-close"
)

// Names lists every failpoint.
var Names = []string{
	BeforeStoreLogs, AfterStoreLogs, LeaderLogWriting, LeaderLogStored,
	BeforeApply, AfterApply, BeforeSnapshotPersist, BeforeSnapshotClose,
}

// Env is the environment variable a failpoints build reads.
const Env = "PADDOCK_FAILPOINTS"

// ExitCode is the exit status of a process that reached an armed
// failpoint.
const ExitCode = 86
