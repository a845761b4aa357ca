package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/paddockzk/paddock/bench"
	"github.com/spf13/cobra"
)

// benchFlags holds `paddock bench`'s list-valued flags as text until they
// are parsed.
type benchFlags struct {
	servers, workloads, clients, contenders, watchers, znodes string
	jsonFile                                                  string
	quiet                                                     bool
}

func newBenchCmd() *cobra.Command {
	cfg := bench.DefaultConfig()
	fl := benchFlags{
		servers:    "127.0.0.1:2181",
		workloads:  "write,read,mixed",
		clients:    "1,16,64",
		contenders: "10,50,200",
		watchers:   "100,1000,10000",
		znodes:     "1000000",
	}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load-test any ZooKeeper-compatible server (Paddock or Apache ZooKeeper)",
		Long: `Measure throughput, latency (p50/p99/p99.9) and errors of ZooKeeper-compatible
servers with the go-zookeeper client, one session (TCP connection) per client.

Workloads (--workload, comma-separated, or all):
  write      create, then setData, of --value-size byte values   (per --clients)
  read       getData of random keys                              (per --clients)
  mixed      90% getData, 10% setData                             (per --clients)
  lock-fair  ZooKeeper's lock recipe: sequential ephemerals, each waiter
             watching its predecessor; hand-offs/s and release->acquire
             latency                                              (per --contenders)
  lock-herd  every contender creates one ephemeral node and watches it
  fanout     watchers on one znode; time from setData to the last
             notification                                         (per --watchers)
  expiry     --sessions abandoned sessions: delay from last contact to
             ephemeral deletion, as a multiple of the timeout
  scale      create --znodes znodes; create rate, and server RSS per
             znode with --pid

Runs last --duration after --warmup, or --ops operations (hand-offs,
fan-out rounds). Servers with a per-IP connection limit need it raised
(ZooKeeper: maxClientCnxns=0; Paddock: --max-client-cnxns 0).`,
		Example: `  paddock bench --server 127.0.0.1:2181 --workload write,read --clients 16,64 --duration 10s
  paddock bench --workload scale --znodes 1M --pid $(pgrep -n java) --json zk-scale.json
  paddock bench compare --markdown results.md /tmp/bench/standalone-fsync`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := fl.apply(&cfg); err != nil {
				return err
			}
			if !fl.quiet {
				cfg.Progress = cmd.ErrOrStderr()
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := bench.Run(ctx, cfg)
			if rep == nil {
				return err
			}
			if werr := bench.WriteTable(cmd.OutOrStdout(), rep.Results); werr != nil {
				return werr
			}
			if fl.jsonFile != "" {
				if werr := rep.WriteJSON(fl.jsonFile); werr != nil {
					return werr
				}
			}
			if errors.Is(err, context.Canceled) {
				return fmt.Errorf("interrupted")
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.servers, "server", fl.servers, "comma-separated host:port list; client i uses server i mod N")
	f.StringVar(&fl.workloads, "workload", fl.workloads, "comma-separated workloads: write,read,mixed,lock-fair,lock-herd,fanout,expiry,scale, or all")
	f.StringVar(&fl.clients, "clients", fl.clients, "client counts for write, read and mixed")
	f.StringVar(&fl.contenders, "contenders", fl.contenders, "contender counts for lock-fair and lock-herd")
	f.StringVar(&fl.watchers, "watchers", fl.watchers, "watcher counts for fanout")
	f.StringVar(&fl.znodes, "znodes", fl.znodes, "znodes scale creates (1M, 100k, ...)")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured time per run")
	f.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured time before each run")
	f.Int64Var(&cfg.Ops, "ops", 0, "operations per run instead of --duration (hand-offs for locks, rounds for fanout)")
	f.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "bytes per value written")
	f.IntVar(&cfg.Keys, "keys", cfg.Keys, "znodes read, mixed and write/set pick from")
	f.IntVar(&cfg.ScaleClients, "scale-clients", 0, "clients for scale (0: the largest --clients)")
	f.DurationVar(&cfg.RSSSettle, "rss-settle", cfg.RSSSettle, "scale with --pid: how long after the last create the server's RSS is sampled (the RSS at rest)")
	f.IntVar(&cfg.Sessions, "sessions", cfg.Sessions, "sessions expiry abandons")
	f.DurationVar(&cfg.SessionTimeout, "session-timeout", cfg.SessionTimeout, "session timeout expiry asks for")
	f.DurationVar(&cfg.Tick, "tick", cfg.Tick, "the server's tickTime (judges expiry accuracy: [T, T+2 ticks])")
	f.DurationVar(&cfg.Hold, "hold", 0, "how long a lock holder keeps the lock")
	f.IntVar(&cfg.PID, "pid", 0, "server process id to sample RSS from (/proc/PID/status VmRSS)")
	f.IntSliceVar(&cfg.CPUPIDs, "cpu-pid", nil, "server process ids (every node of a cluster; comma-separated or repeated) whose CPU time write, read, mixed and lock runs report per operation (/proc/PID/stat)")
	f.StringVar(&cfg.Root, "root", cfg.Root, "znode under which each run creates (and deletes) its tree")
	f.BoolVar(&cfg.Keep, "keep", false, "do not delete what the runs created")
	f.StringVar(&cfg.Label, "label", "", "name of the server under test, recorded in the JSON")
	f.StringVar(&fl.jsonFile, "json", "", "write the results as JSON to this file")
	f.BoolVarP(&fl.quiet, "quiet", "q", false, "no progress bar or per-run lines on stderr")
	cmd.AddCommand(newBenchCompareCmd())
	return cmd
}

// apply parses the list flags into cfg.
func (fl *benchFlags) apply(cfg *bench.Config) error {
	var err error
	if cfg.Servers, err = bench.ParseServers(fl.servers); err != nil {
		return fmt.Errorf("--server: %w", err)
	}
	if cfg.Workloads, err = bench.ParseWorkloads(fl.workloads); err != nil {
		return fmt.Errorf("--workload: %w", err)
	}
	if cfg.Clients, err = bench.ParseIntList(fl.clients); err != nil {
		return fmt.Errorf("--clients: %w", err)
	}
	if cfg.Contenders, err = bench.ParseIntList(fl.contenders); err != nil {
		return fmt.Errorf("--contenders: %w", err)
	}
	if cfg.Watchers, err = bench.ParseIntList(fl.watchers); err != nil {
		return fmt.Errorf("--watchers: %w", err)
	}
	if cfg.Znodes, err = bench.ParseCount(fl.znodes); err != nil {
		return fmt.Errorf("--znodes: %w", err)
	}
	return cfg.Validate()
}

func newBenchCompareCmd() *cobra.Command {
	var baseline, candidate, jsonFile, mdFile string
	cmd := &cobra.Command{
		Use:   "compare CONFIGDIR...",
		Short: "Print candidate/baseline ratios of `paddock bench --json` reports",
		Long: `Compare two servers measured by 'paddock bench --json'. Each CONFIGDIR (one per
configuration, e.g. standalone-fsync) holds BASELINE/*.json and CANDIDATE/*.json
(default zookeeper/ and paddock/); results are paired by workload and parameter,
and the ratios are checked against the goals of issue #9. A key measured in
several reports (repeated runs) is compared by its median run.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := bench.CompareDirs(args, baseline, candidate)
			if err != nil {
				return err
			}
			if err := bench.WriteCompareText(cmd.OutOrStdout(), cs); err != nil {
				return err
			}
			if mdFile != "" {
				f, err := os.Create(mdFile)
				if err != nil {
					return err
				}
				if err := bench.WriteCompareMarkdown(f, cs); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			if jsonFile != "" {
				return bench.WriteCompareJSON(jsonFile, cs)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&baseline, "baseline", "zookeeper", "subdirectory with the baseline's reports")
	f.StringVar(&candidate, "candidate", "paddock", "subdirectory with the candidate's reports")
	f.StringVar(&jsonFile, "json", "", "write the comparison as JSON to this file")
	f.StringVar(&mdFile, "markdown", "", "write the comparison as Markdown tables to this file")
	return cmd
}
