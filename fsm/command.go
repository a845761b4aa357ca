package fsm

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// CommandVersion is the format version byte that prefixes every encoded
// command. Decoding rejects versions it does not know.
const CommandVersion byte = 2

// CmdType says what a Command does.
type CmdType uint8

// Command types.
const (
	// CmdInit sets the cluster secret (once; later inits are no-ops).
	CmdInit CmdType = iota + 1
	// CmdCreateSession creates a session with Timeout (ms).
	CmdCreateSession
	// CmdCloseSession closes Session and deletes its ephemerals.
	CmdCloseSession
	// CmdExpireSession expires Session; ignored unless Term equals the
	// term of the log entry (a deposed leader's expiry never applies).
	CmdExpireSession
	// CmdOps applies Ops: one op, or an atomic multi when Multi is set.
	CmdOps
	// CmdSetConfig replaces the data of /zookeeper/config with Data, the
	// cluster membership in ZooKeeper's dynamic-config format.
	CmdSetConfig
	// CmdSetSessionTimeout gives Session the Timeout (ms) a reconnect
	// negotiated, as ZooKeeper's revalidateSession re-times a session with
	// the timeout of its new connection.
	CmdSetSessionTimeout
)

// Command is one replicated state change.
type Command struct {
	Type    CmdType `msgpack:"t"`
	Time    int64   `msgpack:"ts"` // ms since the epoch, stamped by the proposer; Apply uses the leader's append time instead
	Session int64   `msgpack:"s,omitempty"`
	Term    uint64  `msgpack:"tm,omitempty"`
	Timeout int32   `msgpack:"to,omitempty"`
	Secret  []byte  `msgpack:"sec,omitempty"`
	Multi   bool    `msgpack:"m,omitempty"`
	Data    []byte  `msgpack:"d,omitempty"`
	// Auth are the caller's identities, against which Apply checks the
	// ACLs of the nodes it changes; internal commands carry none.
	Auth []wire.Id `msgpack:"au,omitempty"`
	// EnforceQuota makes hard quota limits refuse writes (QuotaExceeded),
	// as ZooKeeper's zookeeper.enforceQuota.
	EnforceQuota bool `msgpack:"eq,omitempty"`
	// NoTTL refuses TTL creates with Unimplemented, as ZooKeeper does
	// without zookeeper.extendedTypesEnabled; carried in the command so
	// that a TTL create inside a multi fails in its place (earlier ops OK,
	// later ones RuntimeInconsistency).
	NoTTL bool `msgpack:"nt,omitempty"`
	// ServerID, in a CmdCreateSession, is the server id ZooKeeper puts in
	// the top byte of the session ids a server makes (1 for a standalone
	// server, ZooKeeperServer's createSessionTrackerServerId). Only the
	// first session ever created uses it: the ids that follow count on
	// from that one. Clusters leave it 0.
	ServerID int64 `msgpack:"sv,omitempty"`
	Ops      []Op  `msgpack:"o,omitempty"`
}

// Op is one tree operation. Type is the ZooKeeper opcode: create (1),
// create2 (15), createContainer (19), createTTL (21), delete (2),
// setData (5), setACL (7), check (13), or deleteContainer (20), the
// reaper's conditional delete of an empty container or expired TTL node.
type Op struct {
	Type    wire.OpCode     `msgpack:"o"`
	Path    string          `msgpack:"p"`
	Data    []byte          `msgpack:"d"` // nil and empty differ: getData returns null or ""
	ACL     []wire.ACL      `msgpack:"a,omitempty"`
	Mode    wire.CreateMode `msgpack:"f,omitempty"`
	TTL     int64           `msgpack:"l,omitempty"`
	Version int32           `msgpack:"v,omitempty"`
}

// EncodeCommand returns the versioned msgpack encoding of c.
func EncodeCommand(c *Command) ([]byte, error) {
	p := codecPool.Get().(*pooledCodec)
	defer codecPool.Put(p)
	p.buf.Reset()
	p.buf.WriteByte(CommandVersion)
	if err := c.EncodeMsgpack(p.enc); err != nil {
		return nil, err
	}
	return bytes.Clone(p.buf.Bytes()), nil
}

// ErrBadCommand is wrapped by DecodeCommand's errors.
var ErrBadCommand = errors.New("fsm: bad command")

// DecodeCommand decodes a command produced by EncodeCommand.
func DecodeCommand(b []byte) (*Command, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadCommand)
	}
	if b[0] != CommandVersion {
		return nil, fmt.Errorf("%w: unknown format version %d", ErrBadCommand, b[0])
	}
	p := codecPool.Get().(*pooledCodec)
	defer codecPool.Put(p)
	p.rd.Reset(b[1:])
	p.dec.Reset(&p.rd)
	c := new(Command)
	if err := c.DecodeMsgpack(p.dec); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCommand, err)
	}
	return c, nil
}

// pooledCodec reuses msgpack encoders and decoders across commands.
type pooledCodec struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	rd  bytes.Reader
	dec *msgpack.Decoder
}

var codecPool = sync.Pool{New: func() any {
	p := &pooledCodec{}
	p.enc = msgpack.NewEncoder(&p.buf)
	p.dec = msgpack.NewDecoder(&p.rd)
	return p
}}

// Result is what Apply returns for one command.
type Result struct {
	// Zxid is the log index the command was applied at.
	Zxid int64
	// Term is the Raft term of that log entry (for the leader's commit
	// push; not sent to followers).
	Term uint64 `msgpack:"-"`
	// Err is the command's error: the failing op's code for a single op,
	// ErrSessionExpired when the session is gone; OK for a multi, whose
	// failure is reported per op.
	Err wire.Code
	// Ops holds one result per op of a CmdOps command.
	Ops []OpResult
	// Session, Passwd and Timeout describe a created session (Session and
	// Timeout also a re-timed one: the server tracks it with Timeout).
	Session int64
	Passwd  []byte
	Timeout int32
	// Closed is the session a close or expiry command ended.
	Closed int64
	// QuotaWarnings lists quota'd paths whose soft limit this command
	// passed (the server logs them, as ZooKeeper does).
	QuotaWarnings []string `msgpack:"-"`
	// Events are the watch triggers the command caused, in order.
	Events []Event
}

// OpResult is one op's outcome. For a failed multi every op has Type
// OpError and Err as ZooKeeper encodes it.
type OpResult struct {
	Type wire.OpCode
	Err  wire.Code
	Path string    // created path (with sequence suffix)
	Stat wire.Stat // created or modified node's Stat
}

// Event is one watch trigger: ZooKeeper's DataTree.triggerWatch(path, type).
// NodeCreated/NodeDataChanged go to data watches of Path, NodeDeleted to
// data and child watches of Path, NodeChildrenChanged to child watches of
// Path (the parent of the created or deleted node).
type Event struct {
	Type wire.EventType
	Path string
	// ACL is the ACL of the node the event is about (the parent, for
	// NodeChildrenChanged; the node as it was, for NodeDeleted): since
	// ZooKeeper 3.8.4 a watcher without READ on it is not notified.
	ACL []wire.ACL `msgpack:"-"`
}
