package recipes_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// TestInvalidPathsFail: a recipe's path is used as given, so an invalid
// one fails each call with ErrBadArguments (as Curator's validatePath and
// kazoo refuse it) instead of naming another node: "locks" used to become
// "/locks" and "/a/../b" "/b".
func TestInvalidPathsFail(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	conn := e.connect()
	for _, p := range []string{"", "locks", e.root + "/x/", e.root + "/a/../b", e.root + "//x"} {
		calls := map[string]func(context.Context) error{
			"Mutex.Lock": func(ctx context.Context) error { _, err := recipes.NewMutex(conn, p).Lock(ctx); return err },
			"UnfairMutex.Lock": func(ctx context.Context) error {
				_, err := recipes.NewUnfairMutex(conn, p).Lock(ctx)
				return err
			},
			"RWMutex.RLock": func(ctx context.Context) error { _, err := recipes.NewRWMutex(conn, p).RLock(ctx); return err },
			"Semaphore.Acquire": func(ctx context.Context) error {
				_, err := recipes.NewSemaphore(conn, p, 2).Acquire(ctx)
				return err
			},
			"Election.Campaign": func(ctx context.Context) error {
				_, err := recipes.NewElection(conn, p).Campaign(ctx, nil)
				return err
			},
			"Election.Leader": func(ctx context.Context) error { _, err := recipes.NewElection(conn, p).Leader(ctx); return err },
			"Barrier.Set":     func(ctx context.Context) error { return recipes.NewBarrier(conn, p).Set(ctx) },
			"Barrier.Wait":    func(ctx context.Context) error { return recipes.NewBarrier(conn, p).Wait(ctx) },
			"DoubleBarrier.Enter": func(ctx context.Context) error {
				return recipes.NewDoubleBarrier(conn, p, 2).Enter(ctx)
			},
			"Queue.Put":   func(ctx context.Context) error { return recipes.NewQueue(conn, p).Put(ctx, nil) },
			"Queue.Take":  func(ctx context.Context) error { _, err := recipes.NewQueue(conn, p).Take(ctx); return err },
			"Counter.Add": func(ctx context.Context) error { _, err := recipes.NewCounter(conn, p).Add(ctx, 1); return err },
			"Registry.Register": func(ctx context.Context) error {
				_, err := recipes.NewRegistry(conn, p).Register(ctx, "svc", "id", nil)
				return err
			},
		}
		for name, call := range calls {
			if err := call(ctx); !errors.Is(err, client.ErrBadArguments) {
				t.Errorf("%s on %q: %v, want ErrBadArguments", name, p, err)
			}
		}
	}
}
