package zkcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/internal/wire"
)

// SplitLine splits a command line as zkCli does: words are separated by
// white space; a word that starts with a double or a single quote runs to
// the matching quote, which are removed ("a b" and 'a b' are one word, ""
// is an empty word); a quote with no match is dropped. There are no
// escapes.
func SplitLine(line string) []string {
	var args []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args
		}
		if q := line[i]; q == '"' || q == '\'' {
			if j := strings.IndexByte(line[i+1:], q); j >= 0 {
				args = append(args, line[i+1:i+1+j])
				i += j + 2
			} else {
				i++ // an unterminated quote is dropped, as zkCli's pattern skips it
			}
			continue
		}
		j := i + 1
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		args = append(args, line[i:j])
		i = j
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// options is a parsed command: flags (single letters, with their value
// when they take one), word options (-file, -members: a name of several
// letters after one dash) and the remaining arguments.
type options struct {
	flags map[byte]string
	words map[string]string
	args  []string
}

func (o options) has(f byte) bool { _, ok := o.flags[f]; return ok }

// hasWord reports whether the word option name was given.
func (o options) hasWord(name string) bool { _, ok := o.words[name]; return ok }

// parseOptions parses args as Apache commons-cli's DefaultParser does for
// zkCli: spec lists the flag letters, a letter followed by ':' takes a
// value; after a '|', word options follow, separated by '|' (a word
// followed by ':' takes a value). Flags may come anywhere, may be grouped
// (-sw), and a value may follow its letter (-v3) or be the next argument;
// a word option is written whole (-file path); "--" ends the flags.
func parseOptions(spec string, args []string) (options, error) {
	return parseOptionsGroup(spec, "", args)
}

// parseOptionsGroup is parseOptions where the flag letters of group
// exclude each other, as the options of a commons-cli OptionGroup.
func parseOptionsGroup(spec, group string, args []string) (options, error) {
	o := options{flags: map[byte]string{}, words: map[string]string{}}
	selected := byte(0)
	letters, wordSpec, _ := strings.Cut(spec, "|")
	words := map[string]bool{} // word -> takes a value
	if wordSpec != "" {
		for _, w := range strings.Split(wordSpec, "|") {
			name, hasValue := strings.CutSuffix(w, ":")
			words[name] = hasValue
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			o.args = append(o.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			o.args = append(o.args, a)
			continue
		}
		if hasValue, ok := words[a[1:]]; ok {
			o.words[a[1:]] = ""
			if hasValue {
				if i+1 == len(args) {
					return o, failf("Missing argument for option: %s", a[1:])
				}
				i++
				o.words[a[1:]] = args[i]
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			k := strings.IndexByte(letters, a[j])
			if k < 0 || a[j] == ':' {
				return o, failf("Unrecognized option: %s", a) // the whole token, as DefaultParser
			}
			if strings.IndexByte(group, a[j]) >= 0 {
				if selected != 0 && selected != a[j] {
					return o, failf("The option '%c' was specified but an option from this group has already been selected: '%c'", a[j], selected)
				}
				selected = a[j]
			}
			if k+1 < len(letters) && letters[k+1] == ':' {
				switch {
				case j+1 < len(a):
					o.flags[a[j]] = a[j+1:]
				case i+1 < len(args):
					i++
					o.flags[a[j]] = args[i]
				default:
					return o, failf("Missing argument for option: %c", a[j])
				}
				break
			}
			o.flags[a[j]] = ""
		}
	}
	return o, nil
}

// writeStat prints a Stat as zkCli's StatPrinter.
func (s *Shell) writeStat(w io.Writer, st *client.Stat) {
	fmt.Fprintf(w, "cZxid = 0x%x\n", uint64(st.Czxid))
	fmt.Fprintf(w, "ctime = %s\n", javaDate(st.Ctime, s.cfg.Location))
	fmt.Fprintf(w, "mZxid = 0x%x\n", uint64(st.Mzxid))
	fmt.Fprintf(w, "mtime = %s\n", javaDate(st.Mtime, s.cfg.Location))
	fmt.Fprintf(w, "pZxid = 0x%x\n", uint64(st.Pzxid))
	fmt.Fprintf(w, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(w, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(w, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(w, "ephemeralOwner = 0x%x\n", uint64(st.EphemeralOwner))
	fmt.Fprintf(w, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(w, "numChildren = %d\n", st.NumChildren)
}

// javaDate formats milliseconds since the epoch as Java's
// Date.toString: "Sat Nov 21 23:00:00 UTC 2026".
func javaDate(ms int64, loc *time.Location) string {
	return time.UnixMilli(ms).In(loc).Format("Mon Jan 02 15:04:05 MST 2006")
}

// writeData prints a znode's data as zkCli does: the bytes and a newline,
// "null" for a node created without data.
func writeData(w io.Writer, data []byte) {
	if data == nil {
		io.WriteString(w, "null\n")
		return
	}
	w.Write(data)
	io.WriteString(w, "\n")
}

// writeACL prints an ACL as zkCli's getAcl: the Id as Jute's CSV
// toString ("'world,'anyone" and a newline), then ": " and the perms.
func writeACL(w io.Writer, acl []client.ACL) {
	for _, a := range acl {
		fmt.Fprintf(w, "%s,%s\n: %s\n", csvString(a.ID.Scheme), csvString(a.ID.ID), a.Perms)
	}
}

// csvString quotes s as Jute's Utils.toCSVString.
func csvString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteString("%00")
		case '\n':
			b.WriteString("%0A")
		case '\r':
			b.WriteString("%0D")
		case ',':
			b.WriteString("%2C")
		case '}':
			b.WriteString("%7D")
		case '%':
			b.WriteString("%25")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ParseACL parses zkCli's ACL syntax: comma-separated scheme:id:perms
// entries, the id running from the first to the last colon
// (world:anyone:cdrwa, digest:user:hash:cdr, auth::cdrwa,
// ip:10.0.0.0/8:r). Unlike zkCli, which skips malformed entries and
// unknown permission letters with a warning, any mistake is an error.
func ParseACL(s string) ([]client.ACL, error) {
	var acl []client.ACL
	for _, a := range strings.Split(s, ",") {
		first, last := strings.IndexByte(a, ':'), strings.LastIndexByte(a, ':')
		if first < 0 || first == last {
			return nil, failf("%s does not have the form scheme:id:perm", a)
		}
		perms, err := parsePerms(a[last+1:])
		if err != nil {
			return nil, err
		}
		acl = append(acl, client.ACL{Perms: perms, ID: client.Id{Scheme: a[:first], ID: a[first+1 : last]}})
	}
	return acl, nil
}

func parsePerms(s string) (client.Perm, error) {
	var p client.Perm
	for _, c := range s {
		switch c {
		case 'r':
			p |= client.PermRead
		case 'w':
			p |= client.PermWrite
		case 'c':
			p |= client.PermCreate
		case 'd':
			p |= client.PermDelete
		case 'a':
			p |= client.PermAdmin
		default:
			return 0, failf("Unknown perm type: %c", c)
		}
	}
	return p, nil
}

// validatePath checks a path before it is sent, with the message of
// Java's PathUtils.validatePath.
func validatePath(path string) error {
	err := wire.ValidatePath(path)
	if err == nil {
		return nil
	}
	msg := err.Error()
	reason := msg[strings.LastIndex(msg, ": ")+2:]
	switch {
	case path == "":
		return failf("Path length must be > 0")
	case strings.HasPrefix(reason, "path must"):
		return failf("P%s", reason[1:])
	case strings.HasPrefix(reason, "relative paths not allowed"):
		// Java reports the index of the segment's last dot.
		start := 1
		for i := 1; i <= len(path); i++ {
			if i < len(path) && path[i] != '/' {
				continue
			}
			if seg := path[start:i]; seg == "." || seg == ".." {
				reason = fmt.Sprintf("relative paths not allowed @%d", i-1)
				break
			}
			start = i + 1
		}
	}
	return failf("Invalid path string %q caused by %s", path, reason)
}

// cliError turns an operation's error into the message zkCli prints for
// it (CliWrapperException), path being the znode concerned.
func cliError(err error, path string) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	var code client.Code
	switch {
	case errors.Is(err, context.Canceled):
		return failf("Interrupted")
	case errors.Is(err, context.DeadlineExceeded):
		return failf("KeeperErrorCode = OperationTimeout for %s", path)
	case errors.Is(err, client.ErrClosed):
		return failf("Not connected")
	case !errors.As(err, &code):
		return failf("%v", err)
	}
	switch code {
	case client.ErrNoNode:
		return failf("Node does not exist: %s", path)
	case client.ErrNoChildrenForEphemerals:
		return failf("Ephemerals cannot have children: %s", path)
	case client.ErrNodeExists:
		return failf("Node already exists: %s", path)
	case client.ErrNotEmpty:
		return failf("Node not empty: %s", path)
	case client.ErrNotReadOnly:
		return failf("Not a read-only call: %s", path)
	case client.ErrInvalidACL:
		return failf("Acl is not valid : %s", path)
	case client.ErrNoAuth:
		return failf("Insufficient permission : %s", path)
	case client.ErrBadArguments:
		return failf("Arguments are not valid : %s", path)
	case client.ErrBadVersion:
		return failf("version No is not valid : %s", path)
	case client.ErrQuotaExceeded:
		return failf("Quota has exceeded : %s", path)
	case client.ErrReconfigInProgress:
		return failf("Another reconfiguration is in progress -- concurrent reconfigs not supported (yet)")
	case client.ErrNewConfigNoQuorum:
		return failf("No quorum of new config is connected and up-to-date with the leader of last committed config - try invoking reconfiguration after new servers are connected and synced")
	}
	return failf("%s", keeperMessage(code, path))
}

// keeperMessage is Java's KeeperException.getMessage.
func keeperMessage(code client.Code, path string) string {
	msg := "KeeperErrorCode = " + codeMessage(code)
	if path != "" {
		msg += " for " + path
	}
	return msg
}

// codeMessage is Java's KeeperException.getCodeMessage.
func codeMessage(code client.Code) string {
	if m, ok := codeMessages[code]; ok {
		return m
	}
	return fmt.Sprintf("Unknown error %d", int32(code))
}

var codeMessages = map[client.Code]string{
	client.ErrSystemError:              "SystemError",
	client.ErrRuntimeInconsistency:     "RuntimeInconsistency",
	client.ErrDataInconsistency:        "DataInconsistency",
	client.ErrConnectionLoss:           "ConnectionLoss",
	client.ErrMarshallingError:         "MarshallingError",
	client.ErrNewConfigNoQuorum:        "NewConfigNoQuorum",
	client.ErrReconfigInProgress:       "ReconfigInProgress",
	client.ErrUnimplemented:            "Unimplemented",
	client.ErrOperationTimeout:         "OperationTimeout",
	client.ErrBadArguments:             "BadArguments",
	client.ErrUnknownSession:           "Unknown session",
	client.ErrAPIError:                 "APIError",
	client.ErrNoNode:                   "NoNode",
	client.ErrNoAuth:                   "NoAuth",
	client.ErrBadVersion:               "BadVersion",
	client.ErrNoChildrenForEphemerals:  "NoChildrenForEphemerals",
	client.ErrNodeExists:               "NodeExists",
	client.ErrInvalidACL:               "InvalidACL",
	client.ErrAuthFailed:               "AuthFailed",
	client.ErrNotEmpty:                 "Directory not empty",
	client.ErrSessionExpired:           "Session expired",
	client.ErrInvalidCallback:          "Invalid callback",
	client.ErrSessionMoved:             "Session moved",
	client.ErrNotReadOnly:              "Not a read-only call",
	client.ErrEphemeralOnLocalSession:  "Ephemeral node on local session",
	client.ErrNoWatcher:                "No such watcher",
	client.ErrRequestTimeout:           "Request timeout",
	client.ErrReconfigDisabled:         "Reconfig is disabled",
	client.ErrSessionClosedRequireSASL: "Session closed because client failed to authenticate",
	client.ErrQuotaExceeded:            "Quota has exceeded",
	client.ErrThrottledOp:              "Op throttled due to high load",
}
