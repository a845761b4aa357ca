package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/paddockzk/paddock/cmd/paddock/zkcli"
	"github.com/paddockzk/paddock/server"
	"github.com/spf13/cobra"
)

func newCLICmd() *cobra.Command {
	var srv, historyFile string
	var timeout time.Duration
	if home, err := os.UserHomeDir(); err == nil {
		historyFile = filepath.Join(home, ".paddock_cli_history")
	}
	cmd := &cobra.Command{
		Use:   "cli [flags] [COMMAND [ARGS...]]",
		Short: "A ZooKeeper shell with zkCli's commands and output formats",
		Long: `A shell for Paddock or any ZooKeeper-compatible server, with the commands and
output formats of ZooKeeper's zkCli.sh:

  ls [-s] [-w] [-R] path         get [-s] [-w] path          stat [-w] path
  set [-s] [-v version] path data
  create [-s] [-e] [-c] [-t ttl] path [data] [acl]
  delete [-v version] path       deleteall path [-b batch size]
  getAcl [-s] path               setAcl [-s] [-v version] [-R] path acl
  addauth scheme auth            whoami                      sync path
  addWatch [-m PERSISTENT|PERSISTENT_RECURSIVE] path
  removewatches path [-c|-d|-a] [-l]
  getEphemerals [path]           getAllChildrenNumber path
  connect host:port              close                       printwatches on|off
  history                        redo cmdno                  version
  help                           quit

ACLs are comma-separated scheme:id:perms entries: world:anyone:cdrwa,
digest:user:base64(sha1(user:password)):cdr, auth::cdrwa, ip:10.0.0.0/8:r.
Arguments containing spaces are quoted with "..." or '...'.

With a COMMAND, runs it and exits. Otherwise, on a terminal, it is an
interactive shell (line editing, history, Tab completion of commands and
paths, watch events printed as they arrive); with standard input from a
file or pipe, it runs one command per line. The exit status is 0 on
success, 1 when a command fails (127 for an unknown one); for commands
read from standard input, that of the last command that failed.`,
		Example: `  paddock cli --server 127.0.0.1:2181
  paddock cli --server 127.0.0.1:2181 create /app "some data"
  paddock cli --server 127.0.0.1:2181 get -s /app
  printf 'create /a\nls /\n' | paddock cli --server 127.0.0.1:2181`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := zkcli.Config{Timeout: timeout, Version: "paddock " + server.Version}
			ctx := cmd.Context()
			var code int
			switch {
			case len(args) > 0:
				code = runCLIOnce(ctx, cfg, srv, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
			case cmd.InOrStdin() == os.Stdin && zkcli.IsTerminal(os.Stdin):
				if err := zkcli.Interactive(ctx, cfg, srv, historyFile); err != nil {
					return err
				}
			default:
				code = runCLIScript(ctx, cfg, srv, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if code != 0 {
				// The failure has been printed already.
				cmd.SilenceErrors = true
				return exitError{code}
			}
			return nil
		},
	}
	// Flags after the command belong to it: paddock cli get -s /a.
	cmd.Flags().SetInterspersed(false)
	f := cmd.Flags()
	f.StringVar(&srv, "server", "127.0.0.1:2181", "servers to connect to: host:port[,host:port...][/chroot]")
	f.DurationVar(&timeout, "timeout", zkcli.DefaultTimeout, "session timeout; also bounds the wait for a connection")
	f.StringVar(&historyFile, "history-file", historyFile, "where the interactive shell keeps its history (empty: nowhere)")
	return cmd
}

// runCLIOnce connects, runs one command and returns its exit status.
func runCLIOnce(ctx context.Context, cfg zkcli.Config, srv string, args []string, stdout, stderr io.Writer) int {
	cfg.Events = stdout
	sh := zkcli.New(cfg)
	defer sh.Close()
	if err := sh.Connect(ctx, srv); err != nil {
		sh.WriteError(stderr, err)
		return zkcli.ExitCode(err)
	}
	err := sh.RunArgs(ctx, args, stdout)
	sh.WriteError(stderr, err)
	return zkcli.ExitCode(err)
}

// runCLIScript runs the commands read from in, one per line, and returns
// the exit status of the last one that failed (0 if none did).
func runCLIScript(ctx context.Context, cfg zkcli.Config, srv string, in io.Reader, stdout, stderr io.Writer) int {
	cfg.Events = stdout
	sh := zkcli.New(cfg)
	defer sh.Close()
	if err := sh.Connect(ctx, srv); err != nil {
		sh.WriteError(stderr, err)
		return zkcli.ExitCode(err)
	}
	code := 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		err := sh.Run(ctx, sc.Text(), stdout)
		if err == zkcli.ErrQuit {
			break
		}
		if err != nil {
			sh.WriteError(stderr, err)
			code = zkcli.ExitCode(err)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, err)
		code = 1
	}
	return code
}
