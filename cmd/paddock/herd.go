package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/paddockzk/paddock/herd"
	"github.com/spf13/cobra"
)

func newHerdCmd() *cobra.Command {
	cfg := herd.DefaultConfig()
	var servers, recipeList, contenders, mode, out string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "herd",
		Short: "Measure the herd effect: herd-prone vs herd-free locks, read/write locks and elections",
		Long: `Run the herd-effect experiments: K contenders pass a lock (or a leadership)
around, and every hand-off is measured: watch notifications delivered, requests
sent, time from a release to the next acquisition (p50/p99), server CPU time.

Recipes (--recipes, comma-separated; a family name runs both variants):
  mutex-unfair     every waiter watches the one lock node       (herd-prone)
  mutex-fair       each waiter watches its predecessor          (herd-free)
  rw-naive         every waiter watches the lock's children     (herd-prone)
  rw-herdfree      readers watch the last writer before them,
                   writers their predecessor                    (herd-free)
  election-unfair  every candidate watches the leader node      (herd-prone)
  election-fair    each candidate watches its predecessor       (herd-free)

Each holder keeps the lock --hold, and until every other contender is back in
line, so each release finds K-1 waiters. An election leader leaves by closing
its session (--kill, as when a process dies) and campaigns again with a new one.
Hand-offs are counted after --warmup unmeasured ones.

By default the server is a Paddock server inside this process (in memory); its
CPU time is this process's, clients included. With --server, notifications and
requests come from mntr when the server allows it (zk_notifications_sent: Paddock;
zk_packets_received minus the contenders' pings), else from the contenders'
connections, and CPU time from --pid. Notifications and requests are also always
counted on the contenders' connections (client_* columns of the CSV).

Prints a table, and writes herd.csv, herd.json and the charts
herd-notifications.{png,svg} and herd-latency.{png,svg} into --out.`,
		Example: `  paddock herd
  paddock herd --contenders 10,50,100,200 --handoffs 50 --out /tmp/herd
  paddock herd --recipes mutex --mode goroutines --connections 4
  paddock herd --server 127.0.0.1:2181 --pid $(pgrep -f QuorumPeerMain)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Servers, err = herd.ParseServers(servers); err != nil {
				return fmt.Errorf("--server: %w", err)
			}
			if cfg.Recipes, err = herd.ParseRecipes(recipeList); err != nil {
				return fmt.Errorf("--recipes: %w", err)
			}
			if cfg.Contenders, err = herd.ParseContenders(contenders); err != nil {
				return fmt.Errorf("--contenders: %w", err)
			}
			cfg.Mode = herd.Mode(mode)
			if cfg.PID != 0 && len(cfg.Servers) == 0 {
				return errors.New("--pid needs --server (the in-process server reports this process's CPU time)")
			}
			if cfg.PID != 0 {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", cfg.PID)); err != nil {
					return fmt.Errorf("--pid %d: no such process to read the CPU time of (%v)", cfg.PID, err)
				}
			}
			if cfg.MetricsAddr != "" && len(cfg.Servers) != 0 {
				return errors.New("--metrics-addr is for the in-process server; a remote server serves its own")
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			if !quiet {
				cfg.Progress = cmd.ErrOrStderr()
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			start := time.Now()
			rep, err := herd.Run(ctx, cfg)
			if rep == nil {
				return err
			}
			w := cmd.OutOrStdout()
			if werr := herd.WriteTable(w, rep.Results); werr != nil {
				return werr
			}
			if werr := rep.WriteNotes(w); werr != nil {
				return werr
			}
			measured, failed := 0, 0
			for _, r := range rep.Results {
				if r.Handoffs > 0 {
					measured++
				}
				if r.Errors > 0 {
					failed++
				}
			}
			var werr error
			if measured > 0 {
				var files []string
				files, werr = rep.WriteFiles(out)
				for _, f := range files {
					fmt.Fprintf(w, "wrote %s\n", f)
				}
			} else {
				fmt.Fprintf(w, "no run measured anything: %s left as it was\n", out)
			}
			fmt.Fprintf(w, "%d runs in %.1fs\n", len(rep.Results), time.Since(start).Seconds())
			switch {
			case werr != nil:
				return werr
			case errors.Is(err, context.Canceled):
				return errors.New("interrupted")
			case err != nil:
				return err
			case failed > 0:
				return fmt.Errorf("%d of %d runs had errors (the ERRORS column)", failed, len(rep.Results))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&servers, "server", "", "host:port[,host:port...] of the server under test (default: an in-process Paddock server)")
	f.StringVar(&recipeList, "recipes", "all", "recipes to run: mutex-unfair,mutex-fair,rw-naive,rw-herdfree,election-unfair,election-fair, a family (mutex, rw, election) or all")
	f.StringVar(&contenders, "contenders", "10,50,100,200", "comma-separated contender counts (K)")
	f.IntVar(&cfg.Handoffs, "handoffs", cfg.Handoffs, "measured hand-offs per run")
	f.IntVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured releases before each run's measurement")
	f.DurationVar(&cfg.Hold, "hold", cfg.Hold, "how long a holder keeps the lock (then until every other contender is waiting)")
	f.StringVar(&mode, "mode", string(cfg.Mode), "sessions: one session per contender; goroutines: contenders share --connections sessions")
	f.IntVar(&cfg.Connections, "connections", cfg.Connections, "sessions shared by the contenders in --mode goroutines")
	f.Float64Var(&cfg.Readers, "readers", cfg.Readers, "fraction of read/write-lock contenders that are readers, in [0, 1)")
	f.BoolVar(&cfg.Kill, "kill", cfg.Kill, "election leaders leave by closing their session (false: they resign); --mode sessions only")
	f.DurationVar(&cfg.SessionTimeout, "session-timeout", cfg.SessionTimeout, "session timeout the contenders ask for")
	f.StringVar(&cfg.Root, "root", cfg.Root, "znode under which the runs create (and delete) their nodes")
	f.IntVar(&cfg.PID, "pid", 0, "with --server: the server's process id, to read its CPU time from /proc/PID/stat")
	f.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve the in-process server's Prometheus /metrics on this address while running")
	f.StringVar(&out, "out", "herd-results", "directory for herd.csv, herd.json and the charts")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar or per-run lines on stderr")
	return cmd
}
