package wire

import (
	"fmt"
	"strings"
)

// OpCode is a request type (ZooDefs.OpCode).
type OpCode int32

// Operation codes.
const (
	OpNotification         OpCode = 0
	OpCreate               OpCode = 1
	OpDelete               OpCode = 2
	OpExists               OpCode = 3
	OpGetData              OpCode = 4
	OpSetData              OpCode = 5
	OpGetACL               OpCode = 6
	OpSetACL               OpCode = 7
	OpGetChildren          OpCode = 8
	OpSync                 OpCode = 9
	OpPing                 OpCode = 11
	OpGetChildren2         OpCode = 12
	OpCheck                OpCode = 13
	OpMulti                OpCode = 14
	OpCreate2              OpCode = 15
	OpReconfig             OpCode = 16
	OpCheckWatches         OpCode = 17
	OpRemoveWatches        OpCode = 18
	OpCreateContainer      OpCode = 19
	OpDeleteContainer      OpCode = 20
	OpCreateTTL            OpCode = 21
	OpMultiRead            OpCode = 22
	OpAuth                 OpCode = 100
	OpSetWatches           OpCode = 101
	OpSASL                 OpCode = 102
	OpGetEphemerals        OpCode = 103
	OpGetAllChildrenNumber OpCode = 104
	OpSetWatches2          OpCode = 105
	OpAddWatch             OpCode = 106
	OpWhoAmI               OpCode = 107
	OpCreateSession        OpCode = -10
	OpCloseSession         OpCode = -11
	OpError                OpCode = -1
)

var opNames = map[OpCode]string{
	OpNotification: "notification", OpCreate: "create", OpDelete: "delete",
	OpExists: "exists", OpGetData: "getData", OpSetData: "setData",
	OpGetACL: "getACL", OpSetACL: "setACL", OpGetChildren: "getChildren",
	OpSync: "sync", OpPing: "ping", OpGetChildren2: "getChildren2",
	OpCheck: "check", OpMulti: "multi", OpCreate2: "create2",
	OpReconfig: "reconfig", OpCheckWatches: "checkWatches",
	OpRemoveWatches: "removeWatches", OpCreateContainer: "createContainer",
	OpDeleteContainer: "deleteContainer", OpCreateTTL: "createTTL",
	OpMultiRead: "multiRead", OpAuth: "auth", OpSetWatches: "setWatches",
	OpSASL: "sasl", OpGetEphemerals: "getEphemerals",
	OpGetAllChildrenNumber: "getAllChildrenNumber", OpSetWatches2: "setWatches2",
	OpAddWatch: "addWatch", OpWhoAmI: "whoAmI", OpCreateSession: "createSession",
	OpCloseSession: "closeSession", OpError: "error",
}

func (o OpCode) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("op(%d)", int32(o))
}

// Special xids (§1.3 of the protocol reference).
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// CreateMode is the flags field of a create request (CreateMode.java).
type CreateMode int32

// Create modes.
const (
	ModePersistent                  CreateMode = 0
	ModeEphemeral                   CreateMode = 1
	ModePersistentSequential        CreateMode = 2
	ModeEphemeralSequential         CreateMode = 3
	ModeContainer                   CreateMode = 4
	ModePersistentWithTTL           CreateMode = 5
	ModePersistentSequentialWithTTL CreateMode = 6
)

var modeNames = [...]string{"PERSISTENT", "EPHEMERAL", "PERSISTENT_SEQUENTIAL",
	"EPHEMERAL_SEQUENTIAL", "CONTAINER", "PERSISTENT_WITH_TTL", "PERSISTENT_SEQUENTIAL_WITH_TTL"}

func (m CreateMode) String() string {
	if m.Valid() {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", int32(m))
}

// Valid reports whether m is one of the seven defined modes.
func (m CreateMode) Valid() bool { return m >= 0 && int(m) < len(modeNames) }

// IsEphemeral reports whether nodes of this mode belong to a session.
func (m CreateMode) IsEphemeral() bool { return m == ModeEphemeral || m == ModeEphemeralSequential }

// IsSequential reports whether the server appends a sequence suffix.
func (m CreateMode) IsSequential() bool {
	return m == ModePersistentSequential || m == ModeEphemeralSequential || m == ModePersistentSequentialWithTTL
}

// IsContainer reports whether m is CONTAINER.
func (m CreateMode) IsContainer() bool { return m == ModeContainer }

// IsTTL reports whether m is one of the TTL modes.
func (m CreateMode) IsTTL() bool {
	return m == ModePersistentWithTTL || m == ModePersistentSequentialWithTTL
}

// ephemeralOwner encodings of special node types (EphemeralType.java).
const (
	// ContainerOwner is the ephemeralOwner of a container node.
	ContainerOwner int64 = -1 << 63
	// TTLOwnerMask marks a TTL node; the low 40 bits hold the TTL in ms.
	TTLOwnerMask int64 = -0x0100000000000000 // 0xFF00000000000000
	// MaxTTL is the largest TTL (ms) a TTL node may have: 2^40-1.
	MaxTTL int64 = 1<<40 - 1
)

// TTLOwner returns the ephemeralOwner value of a TTL node.
func TTLOwner(ttl int64) int64 { return TTLOwnerMask | ttl }

// TTLOf returns the TTL encoded in a TTL node's ephemeralOwner and whether
// owner is a TTL encoding at all.
func TTLOf(owner int64) (int64, bool) {
	if owner != ContainerOwner && owner&TTLOwnerMask == TTLOwnerMask {
		return owner & MaxTTL, true
	}
	return 0, false
}

// EventType is a watch event type (Watcher.Event.EventType).
type EventType int32

// Event types. 5–7 are generated by clients only.
const (
	EventNone                   EventType = -1
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5
	EventChildWatchRemoved      EventType = 6
	EventPersistentWatchRemoved EventType = 7
)

var eventNames = map[EventType]string{
	EventNone: "None", EventNodeCreated: "NodeCreated", EventNodeDeleted: "NodeDeleted",
	EventNodeDataChanged: "NodeDataChanged", EventNodeChildrenChanged: "NodeChildrenChanged",
	EventDataWatchRemoved: "DataWatchRemoved", EventChildWatchRemoved: "ChildWatchRemoved",
	EventPersistentWatchRemoved: "PersistentWatchRemoved",
}

func (e EventType) String() string {
	if s, ok := eventNames[e]; ok {
		return s
	}
	return fmt.Sprintf("event(%d)", int32(e))
}

// State is a session/connection state (Watcher.Event.KeeperState).
type State int32

// Keeper states.
const (
	StateUnknown           State = -1
	StateDisconnected      State = 0
	StateNoSyncConnected   State = 1
	StateSyncConnected     State = 3
	StateAuthFailed        State = 4
	StateConnectedReadOnly State = 5
	StateSaslAuthenticated State = 6
	StateExpired           State = -112
	StateClosed            State = 7
)

var stateNames = map[State]string{
	StateUnknown: "Unknown", StateDisconnected: "Disconnected", StateNoSyncConnected: "NoSyncConnected",
	StateSyncConnected: "SyncConnected", StateAuthFailed: "AuthFailed",
	StateConnectedReadOnly: "ConnectedReadOnly", StateSaslAuthenticated: "SaslAuthenticated",
	StateExpired: "Expired", StateClosed: "Closed",
}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("state(%d)", int32(s))
}

// WatcherType selects watches in checkWatches/removeWatches.
type WatcherType int32

// Watcher types.
const (
	WatcherChildren            WatcherType = 1
	WatcherData                WatcherType = 2
	WatcherAny                 WatcherType = 3
	WatcherPersistent          WatcherType = 4
	WatcherPersistentRecursive WatcherType = 5
)

var watcherTypeNames = map[WatcherType]string{
	WatcherChildren: "Children", WatcherData: "Data", WatcherAny: "Any",
	WatcherPersistent: "Persistent", WatcherPersistentRecursive: "PersistentRecursive",
}

func (w WatcherType) String() string {
	if s, ok := watcherTypeNames[w]; ok {
		return s
	}
	return fmt.Sprintf("watcherType(%d)", int32(w))
}

// AddWatchMode is the mode of an addWatch request.
type AddWatchMode int32

// Add-watch modes.
const (
	AddWatchPersistent          AddWatchMode = 0
	AddWatchPersistentRecursive AddWatchMode = 1
)

func (m AddWatchMode) String() string {
	switch m {
	case AddWatchPersistent:
		return "PERSISTENT"
	case AddWatchPersistentRecursive:
		return "PERSISTENT_RECURSIVE"
	}
	return fmt.Sprintf("addWatchMode(%d)", int32(m))
}

// Perm is a set of ACL permission bits (ZooDefs.Perms).
type Perm int32

// Permission bits.
const (
	PermRead   Perm = 1 << 0
	PermWrite  Perm = 1 << 1
	PermCreate Perm = 1 << 2
	PermDelete Perm = 1 << 3
	PermAdmin  Perm = 1 << 4
	PermAll    Perm = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// String renders perms as zkCli does: a subset of "crwda".
func (p Perm) String() string {
	var b strings.Builder
	for _, x := range []struct {
		bit Perm
		c   byte
	}{{PermCreate, 'c'}, {PermDelete, 'd'}, {PermRead, 'r'}, {PermWrite, 'w'}, {PermAdmin, 'a'}} {
		if p&x.bit != 0 {
			b.WriteByte(x.c)
		}
	}
	return b.String()
}

// Id is an authentication identity: a scheme and an id within it.
type Id struct {
	Scheme string
	ID     string
}

// ACL grants Perms to an identity.
type ACL struct {
	Perms Perm
	ID    Id
}

// Well-known ACL lists (ZooDefs.Ids).
var (
	AnyoneID      = Id{Scheme: "world", ID: "anyone"}
	AuthID        = Id{Scheme: "auth", ID: ""}
	OpenACLUnsafe = []ACL{{Perms: PermAll, ID: AnyoneID}}
	CreatorAllACL = []ACL{{Perms: PermAll, ID: AuthID}}
	ReadACLUnsafe = []ACL{{Perms: PermRead, ID: AnyoneID}}
)

// Stat is a znode's metadata, 68 bytes on the wire.
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
	Pzxid          int64
}

// StatSize is the encoded size of a Stat.
const StatSize = 68
