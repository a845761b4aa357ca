package recipes_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/paddockzk/paddock/recipes"
)

func TestElectionFair(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("election")
	obsCtx, stop := context.WithCancel(ctx)
	defer stop()
	observed := recipes.NewElection(e.connect(), dir).Observe(obsCtx)

	a := recipes.NewElection(e.connect(), dir)
	la, err := a.Campaign(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := recv(t, observed); string(got.Value) != "a" || got.Token != la.Token() {
		t.Fatalf("observed %q (token %d), want a (%d)", got.Value, got.Token, la.Token())
	}
	bConn, expireB := e.expirable()
	b := recipes.NewElection(bConn, dir)
	c := recipes.NewElection(e.connect(), dir)
	won := make(chan string, 2)
	for i, x := range []struct {
		el    *recipes.Election
		value string
	}{{b, "b"}, {c, "c"}} {
		go func() {
			if _, err := x.el.Campaign(ctx, []byte(x.value)); err != nil {
				t.Error(err)
			}
			won <- x.value
		}()
		e.waitChildren(dir, i+2) // queued in this order
	}
	if info, err := c.Leader(ctx); err != nil || string(info.Value) != "a" {
		t.Fatalf("Leader = %q, %v", info.Value, err)
	}
	if l, err := a.Campaign(ctx, []byte("a")); err != nil || l != la {
		t.Fatalf("Campaign while leading = %v, %v", l, err)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if w := recv(t, won); w != "b" {
		t.Fatalf("%s won after a resigned, want b (next in line)", w)
	}
	gotB := recv(t, observed)
	if string(gotB.Value) != "b" || gotB.Token <= la.Token() {
		t.Fatalf("observed %q token %d after a (token %d)", gotB.Value, gotB.Token, la.Token())
	}
	expireB(gotB.Node)
	if w := recv(t, won); w != "c" {
		t.Fatalf("%s won after b's session expired", w)
	}
	if got := recv(t, observed); string(got.Value) != "c" || got.Token <= gotB.Token {
		t.Fatalf("observed %q token %d after b", got.Value, got.Token)
	}
	if err := c.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Leader(ctx); !errors.Is(err, recipes.ErrNoLeader) {
		t.Fatalf("Leader with no candidate = %v", err)
	}
	stop()
	for range observed { // closed when ctx ends
	}
}

func TestElectionCampaignCancelled(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("election")
	a := recipes.NewElection(e.connect(), dir)
	if _, err := a.Campaign(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, err := recipes.NewElection(e.connect(), dir).Campaign(c, []byte("b"))
		done <- err
	}()
	e.waitChildren(dir, 2)
	cancel()
	if err := recv(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Campaign = %v", err)
	}
	e.waitChildren(dir, 1)
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestElectionNodeNames(t *testing.T) {
	res := map[recipes.Compat]*regexp.Regexp{
		recipes.Paddock: regexp.MustCompile(`^_c_[0-9a-f]{32}-election-\d{10}$`),
		recipes.Kazoo:   regexp.MustCompile(`^[0-9a-f]{32}__lock__\d{10}$`),
		recipes.Curator: regexp.MustCompile(`^_c_[0-9a-f-]{36}-latch-\d{10}$`),
	}
	e := newEnv(t)
	ctx := tctx(t)
	for compat, re := range res {
		dir := e.path("names-" + compat.String())
		el := recipes.NewElection(e.connect(), dir, recipes.WithCompat(compat))
		if _, err := el.Campaign(ctx, []byte("v")); err != nil {
			t.Fatal(err)
		}
		if kids := e.children(dir); len(kids) != 1 || !re.MatchString(kids[0]) {
			t.Errorf("%v: nodes %v", compat, kids)
		}
		if err := el.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnfairElection(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("unfair-election")
	observed := recipes.NewUnfairElection(e.connect(), dir).Observe(ctx)
	a := recipes.NewUnfairElection(e.connect(), dir)
	la, err := a.Campaign(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := recv(t, observed); string(got.Value) != "a" {
		t.Fatalf("observed %q", got.Value)
	}
	won := make(chan *recipes.UnfairElection, 2)
	for _, v := range []string{"b", "c"} {
		el := recipes.NewUnfairElection(e.connect(), dir)
		go func() {
			if _, err := el.Campaign(ctx, []byte(v)); err != nil {
				t.Error(err)
			}
			won <- el
		}()
	}
	if info, err := a.Leader(ctx); err != nil || string(info.Value) != "a" {
		t.Fatalf("Leader = %q, %v", info.Value, err)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	next := recv(t, won)
	got := recv(t, observed)
	if (string(got.Value) != "b" && string(got.Value) != "c") || got.Token <= la.Token() {
		t.Fatalf("observed %q token %d after a (token %d)", got.Value, got.Token, la.Token())
	}
	if _, err := la.FencedSet(ctx, dir, nil, -1); !errors.Is(err, recipes.ErrLockLost) {
		t.Fatalf("fenced write after resigning = %v", err)
	}
	if err := next.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	last := recv(t, won)
	if err := last.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := last.Leader(ctx); !errors.Is(err, recipes.ErrNoLeader) {
		t.Fatalf("Leader = %v", err)
	}
}
