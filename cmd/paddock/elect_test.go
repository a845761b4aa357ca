package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/recipes"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// paddock elect prints "elected:" once it leads however many leaders came
// before it: it passed the printed leaders' tokens through a 64-slot
// queue, dropped its own when the queue was full, and then led without
// ever saying so.
func TestElectManyLeadersAhead(t *testing.T) {
	srv := zktest.Start(t)
	ctx := lockCtx(t)
	conn := lockConn(t, srv)
	const ahead = 70
	path := "/election/many"
	els := make([]*recipes.Election, ahead)
	won := make([]chan error, ahead)
	for i := range els {
		els[i] = recipes.NewElection(conn, path)
		won[i] = make(chan error, 1)
		go func(i int) {
			_, err := els[i].Campaign(ctx, []byte(fmt.Sprintf("c%02d", i)))
			won[i] <- err
		}(i)
		// keep them in order
		pollUntil(t, "candidate queued", func() bool {
			kids, _, _ := conn.Children(ctx, path)
			return len(kids) == i+1
		})
	}
	out := &lockBuffer{}
	done := make(chan int, 1)
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		done <- runPaddockWith(tctx, out, &lockBuffer{}, "elect", "--server", srv.Addr(), path, "target")
	}()
	pollUntil(t, "target queued", func() bool {
		kids, _, _ := conn.Children(ctx, path)
		return len(kids) == ahead+1
	})
	for i := 0; i < ahead; i++ {
		if err := <-won[i]; err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("leader: c%02d ", i)
		pollUntil(t, want, func() bool { return strings.Contains(out.String(), want) })
		if err := els[i].Resign(ctx); err != nil {
			t.Fatal(err)
		}
	}
	pollUntil(t, "leader: target", func() bool { return strings.Contains(out.String(), "leader: target") })
	pollUntil(t, "elected: target", func() bool { return strings.Contains(out.String(), "elected: target") })
	cancel()
	require.Equal(t, 0, <-done)
}

// printLeaders records the last leader it printed, however many came
// before it (runElect waits for its own token there).
func TestPrintLeadersRecordsTheLast(t *testing.T) {
	leaders := make(chan recipes.LeaderInfo, 200)
	for i := int64(1); i <= 200; i++ {
		leaders <- recipes.LeaderInfo{Value: []byte(fmt.Sprint(i)), Token: i}
	}
	close(leaders)
	shown, done := newShownLeader(), make(chan struct{})
	out := &lockBuffer{}
	printLeaders(leaders, out, done, shown)
	<-done
	require.True(t, shown.is(200))
	require.Contains(t, out.String(), "leader: 200 (token 200)\n")
}
