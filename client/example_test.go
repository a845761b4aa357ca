package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/paddockzk/paddock/client"
)

// The examples need a running server, so they are compiled but not run.

func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, []string{"127.0.0.1:2181"},
		client.WithSessionTimeout(15*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	path, _, err := c.Create(ctx, "/app", []byte("v1"), client.ModePersistent, nil)
	if errors.Is(err, client.ErrNodeExists) {
		path = "/app"
	} else if err != nil {
		log.Fatal(err)
	}
	data, stat, err := c.Get(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s = %q (version %d)\n", path, data, stat.Version)

	// Compare-and-set on the version.
	if _, err := c.Set(ctx, path, []byte("v2"), stat.Version); errors.Is(err, client.ErrBadVersion) {
		fmt.Println("somebody else changed it")
	}
}

func ExampleConn_GetW() {
	ctx := context.Background()
	c, err := client.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	for {
		data, _, watch, err := c.GetW(ctx, "/config")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("config: %s\n", data)
		ev := <-watch // exactly one event, then the channel is closed
		if ev.Err != nil {
			log.Fatal(ev.Err) // session expired or Conn closed
		}
		if ev.Type == client.EventNodeDeleted {
			return
		}
	}
}

func ExampleConn_AddWatch() {
	ctx := context.Background()
	c, err := client.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	w, err := c.AddWatch(ctx, "/services", true)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Remove(ctx)
	for ev := range w.Events() {
		if ev.Type == client.EventNone {
			// Connection state: after Connected, re-read what you cache.
			fmt.Println("state", ev.State)
			continue
		}
		fmt.Println(ev.Type, ev.Path)
	}
}

func ExampleConn_Multi() {
	ctx := context.Background()
	c, err := client.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, err = c.Multi(ctx,
		client.CheckOp("/app", 2),
		client.CreateOp("/app/lock", nil, client.ModeEphemeral, nil),
		client.SetDataOp("/app", []byte("locked"), -1),
	)
	var me *client.MultiError
	switch {
	case errors.As(err, &me):
		fmt.Printf("op %d failed: %v; nothing was applied\n", me.Index, me.Err)
	case err != nil:
		log.Fatal(err)
	}
}

func ExampleConn_CreateProtectedEphemeralSequential() {
	ctx := context.Background()
	c, err := client.Connect(ctx, []string{"127.0.0.1:2181"},
		client.WithAuth("digest", []byte("alice:secret")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	acl := client.DigestACL(client.PermAll, "alice", "secret")
	p, err := c.CreateProtectedEphemeralSequential(ctx, "/locks/lock-", nil, acl)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created", p) // /locks/_c_<guid>-lock-0000000042
}
