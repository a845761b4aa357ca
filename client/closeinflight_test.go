package client

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/paddockzk/paddock/test/zktest"
)

// Close fails the calls still in flight with ErrClosed, as doc.go says:
// those sent after closeSession were drained with ErrConnectionLoss
// ("maybe applied, retry") once the server closed the connection.
func TestCloseFailsInFlightWithErrClosed(t *testing.T) {
	srv := zktest.Start(t)
	counts := map[string]int{}
	var mu sync.Mutex
	for round := 0; round < 10; round++ {
		c, err := Connect(context.Background(), []string{srv.Addr()})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := 0; g < 50; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for {
					_, _, err := c.Exists(context.Background(), "/")
					if err == nil {
						continue
					}
					mu.Lock()
					switch {
					case errors.Is(err, ErrClosed):
						counts["ErrClosed"]++
					case errors.Is(err, ErrConnectionLoss):
						counts["ErrConnectionLoss"]++
					default:
						counts[err.Error()]++
					}
					mu.Unlock()
					return
				}
			}()
		}
		close(start)
		c.Close()
		wg.Wait()
	}
	t.Logf("errors returned by calls in flight during Close: %v", counts)
	if counts["ErrConnectionLoss"] > 0 {
		t.Errorf("%d calls failed with ErrConnectionLoss during Close", counts["ErrConnectionLoss"])
	}
}
