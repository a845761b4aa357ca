package recipes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// A Lock whose context ends while it waits to retry after a connection
// loss returns the context's error (paddock lock --timeout exits 75 on
// it), not the connection loss it was about to retry.
func TestLockTimeoutDuringRetryIsTheContextsError(t *testing.T) {
	e := newEnv(t)
	e.onPaddock("drops connections")
	dir := e.path("cl")
	ctx := tctx(t)
	holder := recipes.NewMutex(e.connect(), dir)
	if _, err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	stop := nemesis(e)
	defer stop()
	conn := e.connect()
	var connLoss, deadline int
	for i := 0; i < 200; i++ {
		m := recipes.NewMutex(conn, dir)
		c, cancel := context.WithTimeout(ctx, time.Duration(5+i%10)*time.Millisecond)
		_, err := m.Lock(c)
		expired := c.Err() != nil
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			deadline++
		case errors.Is(err, client.ErrConnectionLoss) && expired:
			connLoss++
		default:
			t.Fatalf("Lock: %v", err)
		}
	}
	t.Logf("timed out: %d reported DeadlineExceeded, %d reported ErrConnectionLoss", deadline, connLoss)
	if connLoss > 0 {
		t.Errorf("%d Lock calls whose context had ended returned ErrConnectionLoss instead of ctx.Err()", connLoss)
	}
}
