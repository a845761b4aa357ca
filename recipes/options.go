package recipes

import (
	"time"

	"github.com/paddockzk/paddock/client"
)

// DefaultCleanupTimeout bounds the deletion of a waiter's node after its
// context ended (timeout, cancellation). If the deletion cannot complete
// in time (connection loss), it is retried in the background for up to
// maxBackgroundCleanup.
const DefaultCleanupTimeout = 5 * time.Second

// maxBackgroundCleanup bounds the background retries of a deletion. After
// that the node goes away with its session.
const maxBackgroundCleanup = 2 * time.Minute

// Option configures a recipe. Options that do not apply to a recipe are
// ignored by it.
type Option func(*options)

type options struct {
	compat         Compat
	acl            []client.ACL
	data           []byte
	containers     *bool
	cleanupTimeout time.Duration
	waitHook       func()             // test hook: a waiter starts waiting on a watch
	wakeHook       func(client.Event) // test hook: a watch event woke a waiter
}

func buildOptions(opts []Option) options {
	o := options{cleanupTimeout: DefaultCleanupTimeout}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithCompat selects the node names and ordering of locks, read/write
// locks and elections (see Compat). Default Paddock.
func WithCompat(c Compat) Option { return func(o *options) { o.compat = c } }

// WithACL sets the ACL of the nodes a recipe creates (default
// OPEN_ACL_UNSAFE).
func WithACL(acl []client.ACL) Option { return func(o *options) { o.acl = acl } }

// WithNodeData sets the data stored in a contender's node (kazoo's
// identifier, Curator's lockData), shown by Contenders. Elections store
// the campaign value instead.
func WithNodeData(data []byte) Option {
	return func(o *options) { o.data = append([]byte(nil), data...) }
}

// WithContainerParents chooses whether missing parents of a lock,
// semaphore, election or registry path are created as containers (which
// the server deletes once empty) or as persistent nodes. The default is
// containers (as Curator does), except with WithCompat(Kazoo): kazoo
// creates persistent parents and does not expect them to vanish.
// Containers need ZooKeeper 3.5.1 or later.
func WithContainerParents(containers bool) Option {
	return func(o *options) { o.containers = &containers }
}

// WithCleanupTimeout bounds the synchronous deletion of a node after a
// context ended or on release (default DefaultCleanupTimeout).
func WithCleanupTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.cleanupTimeout = d
		}
	}
}

// parentMode is the create mode of missing parents of lock directories.
func (o *options) parentMode() client.CreateMode {
	containers := o.compat != Kazoo
	if o.containers != nil {
		containers = *o.containers
	}
	if containers {
		return client.ModeContainer
	}
	return client.ModePersistent
}

// waiting reports that a waiter starts waiting on a watch (test hook).
func (o *options) waiting() {
	if o.waitHook != nil {
		o.waitHook()
	}
}

// woke reports a watch event that woke a waiter (test hook).
func (o *options) woke(ev client.Event) {
	if o.wakeHook != nil {
		o.wakeHook(ev)
	}
}
