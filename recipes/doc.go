// Package recipes implements the coordination recipes ZooKeeper users read
// about (ZooKeeper's recipes doc, Curator, kazoo) on top of package
// client, and only client: every recipe works against Apache ZooKeeper
// (3.5 or later; containers need 3.5.1) as well as Paddock.
//
//   - Locks (Locker: Lock, TryLock, Unlock, each with a context): Mutex,
//     fair, reentrant and herd-free; UnfairMutex, herd-prone by design;
//     SemaphoreMutex, non-reentrant; RWMutex, herd-free, and
//     NewNaiveRWMutex, herd-prone. Semaphore counts N leases.
//   - Elections (Elector: Campaign, Resign, Leader, Observe): Election,
//     fair and herd-free; UnfairElection, herd-prone.
//   - Barrier, DoubleBarrier, Counter (compare-and-set on the version),
//     Queue (FIFO) and Registry (service instances, with a watched list).
//
// Every call that talks to the server takes a context first and returns
// when it ends; waiting with context.Background() waits as long as it
// takes (or until the session ends). A lock whose Lock or TryLock fails,
// for a timeout, a cancellation or an error, deletes the node it created,
// so abandoned attempts leave nothing behind that could stall the lock.
//
// # Herd-free and herd-prone
//
// A herd-free recipe makes each waiter watch the one node whose deletion
// may let it proceed, so a release sends one notification per waiter that
// can then proceed (Mutex: one; RWMutex: the readers queued behind a
// writer, or the writer behind the last reader). The herd-prone variants
// (UnfairMutex, NewNaiveRWMutex, UnfairElection) make every waiter watch
// the same node or children list, so every release wakes every waiter,
// which then all ask the server again. They are kept, honestly herd-prone,
// to compare with.
//
// # Interoperability
//
// WithCompat(Kazoo) or WithCompat(Curator) names and orders lock, read/write
// lock and election nodes as kazoo or Curator do (see Compat), so a Python
// service using kazoo's Lock, ReadLock, WriteLock or Election, or a Java
// service using Curator, and a Go service using this package exclude each
// other on the same path.
//
// # What a lock guarantees, and what it does not
//
// A lock is held through an ephemeral node. It guarantees that, at any
// point of the server's history, the nodes grant the lock to at most one
// holder (for RWMutex: to one writer, or to readers only). It does not
// guarantee that at most one process believes it holds the lock: a
// holder can lose the lock without knowing it yet.
//
//   - Its session can expire: after a network partition longer than the
//     session timeout, or a pause (GC, SIGSTOP, a VM migration) of the
//     holding process. The server then deletes the node and hands the
//     lock to the next waiter, while the old holder learns of the expiry
//     only when it reaches a server again, and a paused process keeps
//     running its critical section when it resumes, before any code can
//     check anything.
//   - Someone can delete the node.
//
// The Lease returned by every acquisition reports a loss as soon as the
// client knows: Lost() is closed and Err() wraps ErrLockLost. During a
// partition the client knows once no server has been heard from for 4/3
// of the session timeout (it then reports the session expired itself),
// which is after the servers may have handed the lock on; a paused
// process learns nothing until it resumes. Stop work when it fires, but
// do not rely on it for safety. For safety, fence:
//
//   - Inside ZooKeeper: write with Lease.FencedSet or Lease.FencedMulti,
//     which put Lease.Guard in front of the write in one multi (check
//     that the lock node still exists, then setData): the write fails
//     atomically, with ErrLockLost, once the lock has been lost,
//     whatever the holder believes.
//   - Outside: pass Lease.Token with every write to the protected
//     resource and have the resource reject a token lower than the
//     highest it has seen. The token is the lock node's czxid, which
//     strictly increases from one holder to the next (for every scheme,
//     even after the lock's parent is deleted and recreated).
//
// Without fencing, a lock is an efficiency lock (it makes duplicate work
// rare), not a correctness lock. The same holds for leadership.
//
// # Reentrancy
//
// Mutex, UnfairMutex and RWMutex are reentrant per value: a value that
// holds the lock gets it again at once, and releases it after as many
// Unlock calls. Different goroutines that must exclude each other need
// different values (they may share one client.Conn). SemaphoreMutex is
// not reentrant and says so with ErrNotReentrant. RWMutex refuses a
// read→write upgrade with ErrUpgrade rather than deadlocking, and allows
// the write→read downgrade.
//
// # Connection loss
//
// Reads and waits survive reconnections (watches are restored by the
// client). A create whose reply is lost is recovered by looking for the
// node's unique id (Curator's protected mode) after a sync, and is never
// retried before that look has answered, so it does not leave an orphan
// node that would stall the lock. Should the server apply the lost create
// after the look (a ZooKeeper ensemble can, if the request was still on
// its way to the leader), the extra node carries the same id: it is
// deleted when seen while waiting and on release. A deletion that cannot
// complete (release, cleanup after a timeout) is retried in the
// background until the session ends.
package recipes
