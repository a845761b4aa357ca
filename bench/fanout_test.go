package bench

import (
	"errors"
	"testing"
)

func TestFanoutRoundReportsTheLastArrival(t *testing.T) {
	var f fanoutRound
	done := f.start(3)
	f.arrived()
	f.arrived()
	select {
	case err := <-done:
		t.Fatalf("round over after 2 of 3 arrivals (%v)", err)
	default:
	}
	if f.left() != 1 {
		t.Fatalf("left %d, want 1", f.left())
	}
	f.arrived()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("round not over after 3 of 3 arrivals")
	}
	f.fail(errors.New("late")) // between rounds: nobody waits, nothing blocks
	f.arrived()
}

func TestFanoutRoundReportsAFailure(t *testing.T) {
	var f fanoutRound
	done := f.start(2)
	f.arrived()
	f.fail(errors.New("watcher 1: StateDisconnected"))
	f.arrived() // reported already: must not block or report twice
	if err := <-done; err == nil || err.Error() != "watcher 1: StateDisconnected" {
		t.Fatalf("got %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("a second report: %v", err)
	default:
	}
}
