package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// Hold a lock, stop work when it is lost, and fence every write.
func ExampleMutex() {
	ctx := context.Background()
	conn, err := client.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	m := recipes.NewMutex(conn, "/locks/report") // recipes.WithCompat(recipes.Kazoo) to share it with kazoo
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	lease, err := m.Lock(wait)
	if err != nil {
		log.Fatal(err) // context.DeadlineExceeded: not acquired within a minute; no node left behind
	}
	defer m.Unlock(ctx)

	for page := 0; page < 10; page++ {
		select {
		case <-lease.Lost():
			log.Fatalf("lock lost: %v", lease.Err())
		default:
		}
		// Lost() cannot fire during a partition or a pause: the fenced
		// write is what keeps a stale holder out.
		_, err := lease.FencedSet(ctx, "/reports/latest", []byte(fmt.Sprint(page)), -1)
		if errors.Is(err, recipes.ErrLockLost) {
			log.Fatal("someone else holds the lock now")
		}
		// Outside ZooKeeper, send lease.Token() along with each write and
		// have the resource refuse tokens lower than the highest it saw.
	}
}

// Campaign for leadership and follow the leader.
func ExampleElection() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	conn, err := client.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	e := recipes.NewElection(conn, "/election/scheduler")
	go func() {
		for l := range e.Observe(ctx) {
			log.Printf("leader: %s (token %d)", l.Value, l.Token)
		}
	}()
	lease, err := e.Campaign(ctx, []byte("host-1"))
	if err != nil {
		log.Fatal(err)
	}
	defer e.Resign(context.Background())
	<-lease.Lost() // lead until the session is lost
}

// Readers share, writers exclude; a writer may downgrade to a reader.
func ExampleRWMutex() {
	ctx := context.Background()
	conn, err := client.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	rw := recipes.NewRWMutex(conn, "/locks/config")
	if _, err := rw.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	// ... write ...
	if _, err := rw.RLock(ctx); err != nil { // downgrade
		log.Fatal(err)
	}
	if err := rw.Unlock(ctx); err != nil { // still reading; queued writers wait
		log.Fatal(err)
	}
	// ... read ...
	if err := rw.RUnlock(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := rw.RLock(ctx); err != nil {
		log.Fatal(err)
	}
	_, err = rw.Lock(ctx) // upgrade: refused, never a deadlock
	fmt.Println(errors.Is(err, recipes.ErrUpgrade))
}
