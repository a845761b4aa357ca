package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/paddockzk/paddock/cmd/paddock/zkcli"
	"github.com/paddockzk/paddock/server"
	"github.com/spf13/cobra"
)

func newCLICmd() *cobra.Command {
	var srv, historyFile string
	var timeout time.Duration
	var readOnly bool
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
  paddock cli -server 127.0.0.1:2181 -timeout 30000 -r ls /    # zkCli.sh's flags
  printf 'create /a\nls /\n' | paddock cli --server 127.0.0.1:2181`,
		// Parsed in RunE, after zkCli's single-dash flags are rewritten.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if err := f.Parse(zkCliFlags(args)); err != nil {
				return err
			}
			if help, _ := f.GetBool("help"); help {
				return cmd.Help()
			}
			args = f.Args()
			cfg := zkcli.Config{Timeout: timeout, Version: "paddock " + server.Version, ReadOnly: readOnly}
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
	f.DurationVar(&timeout, "timeout", zkcli.DefaultTimeout, "session timeout; also bounds the wait for a connection (a number alone is milliseconds, as zkCli's -timeout)")
	f.BoolVarP(&readOnly, "read-only", "r", false, "allow a read-only server to serve the session (zkCli's -r)")
	f.StringVar(&historyFile, "history-file", historyFile, "where the interactive shell keeps its history (empty: nowhere)")
	return cmd
}

// zkCliFlags rewrites the single-dash flags of zkCli.sh that come before
// the command (-server HOST:PORT, -timeout MS; -r is this command's -r)
// into this command's, so a zkCli command line works as it is. A timeout
// without a unit is in milliseconds, as zkCli's.
func zkCliFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...) // the command and its own flags
		}
		name, val, hasVal := strings.Cut(a, "=")
		switch name {
		case "-server", "-timeout":
			name = "-" + name
		case "--server", "--timeout", "--history-file":
		default:
			out = append(out, a)
			continue
		}
		if !hasVal && i+1 < len(args) {
			i++
			val, hasVal = args[i], true
		}
		if _, err := strconv.Atoi(val); err == nil && name == "--timeout" {
			val += "ms"
		}
		out = append(out, name)
		if hasVal {
			out = append(out, val)
		}
	}
	return out
}

// runCLIOnce connects, runs one command and returns its exit status.
func runCLIOnce(ctx context.Context, cfg zkcli.Config, srv string, args []string, stdout, stderr io.Writer) int {
	cfg.Events, cfg.Stderr = stdout, stderr
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
	cfg.Events, cfg.Stderr = stdout, stderr
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
