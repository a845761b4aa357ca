package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/test/zktest"
)

// paddock herd against a server given with --server: counters from mntr.
func TestHerdCommand(t *testing.T) {
	srv := zktest.Start(t)
	dir := filepath.Join(t.TempDir(), "out")
	out, err := runRoot(t, "herd", "--server", srv.Servers()[0], "--recipes", "mutex", "--contenders", "3,4",
		"--handoffs", "4", "--hold", "5ms", "--out", dir, "--quiet")
	if err != nil {
		t.Fatalf("herd: %v\n%s", err, out)
	}
	for _, want := range []string{"NOTIF/HO", "mutex-unfair", "mutex-fair", "wrote " + filepath.Join(dir, "herd-latency.svg")} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"herd.csv", "herd.json", "herd-notifications.png", "herd-notifications.svg", "herd-latency.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if len(srv.Tree()) != 0 {
		t.Errorf("left behind: %v", srv.Tree())
	}
	for _, args := range [][]string{
		{"herd", "--recipes", "semaphore"},
		{"herd", "--contenders", "1"},
		{"herd", "--mode", "threads"},
		{"herd", "--readers", "1"},
		{"herd", "--pid", "1"},
		{"herd", "--server", "nohostport"},
		{"herd", "--server", srv.Servers()[0], "--pid", "999999999", "--recipes", "mutex-fair", // no such process
			"--contenders", "2", "--handoffs", "2", "--quiet", "--out", t.TempDir()},
	} {
		if _, err := runRoot(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// Runs that measured nothing (here: the server's per-IP connection limit
// refuses most contenders) leave --out as it was and exit with an error;
// the empty report used to replace the last good one.
func TestHerdCommandKeepsOutWhenNothingMeasured(t *testing.T) {
	srv := zktest.Start(t, zktest.WithMaxClientCnxns(4))
	dir := t.TempDir()
	earlier := filepath.Join(dir, "herd.csv")
	if err := os.WriteFile(earlier, []byte("an earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runRoot(t, "herd", "--server", srv.Servers()[0], "--recipes", "mutex-fair", "--contenders", "8",
		"--handoffs", "4", "--hold", "5ms", "--out", dir, "--quiet")
	if err == nil {
		t.Fatalf("no error:\n%s", out)
	}
	if !strings.Contains(out, "left as it was") {
		t.Errorf("output:\n%s", out)
	}
	if b, _ := os.ReadFile(earlier); string(b) != "an earlier run\n" {
		t.Errorf("herd.csv replaced: %q", b)
	}
}
