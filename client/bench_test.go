package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// BenchmarkClients compares this client with go-zookeeper/zk on getData
// and setData, serially and from N goroutines sharing one connection
// (pipelined), against every server of testServers:
//
//	ZK_ORACLE=127.0.0.1:2181 go test -run '^$' -bench Clients ./client/
func BenchmarkClients(b *testing.B) {
	servers := testServers(b)
	for name, addr := range servers {
		b.Run(name, func(b *testing.B) {
			ours := connectTest(b, []string{addr})
			theirs := connectGoZK(b, addr)
			path := fmt.Sprintf("/client-bench-%d", time.Now().UnixNano())
			if _, _, err := ours.Create(context.Background(), path, make([]byte, 128), ModeEphemeral, nil); err != nil {
				b.Fatal(err)
			}
			clients := []struct {
				name string
				c    benchClient
			}{{"paddock", oursBench{ours}}, {"gozk", theirsBench{theirs}}}
			for _, op := range []string{"get", "set"} {
				for _, par := range []int{1, 16, 64} {
					for _, cl := range clients {
						b.Run(fmt.Sprintf("%s/par=%d/%s", op, par, cl.name), func(b *testing.B) {
							runBench(b, par, func() error {
								if op == "get" {
									return cl.c.get(path)
								}
								return cl.c.set(path)
							})
						})
					}
				}
			}
		})
	}
}

type benchClient interface {
	get(path string) error
	set(path string) error
}

var benchData = make([]byte, 128)

type oursBench struct{ c *Conn }

func (o oursBench) get(path string) error {
	_, _, err := o.c.Get(context.Background(), path)
	return err
}

func (o oursBench) set(path string) error {
	_, err := o.c.Set(context.Background(), path, benchData, -1)
	return err
}

type theirsBench struct{ c *zk.Conn }

func (t theirsBench) get(path string) error {
	_, _, err := t.c.Get(path)
	return err
}

func (t theirsBench) set(path string) error {
	_, err := t.c.Set(path, benchData, -1)
	return err
}

// runBench runs b.N calls of f from par goroutines.
func runBench(b *testing.B, par int, f func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	for range par {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := f(); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

func connectGoZK(b *testing.B, addr string) *zk.Conn {
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(nopLogger{}), zk.WithLogInfo(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	timeout := time.After(waitTimeout)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return c
			}
		case <-timeout:
			b.Fatal("go-zookeeper: no session")
		}
	}
}
