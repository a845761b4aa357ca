package wire

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

func sampleStat() Stat {
	return Stat{
		Czxid: 0x100000001, Mzxid: 0x100000002, Ctime: 1700000000000, Mtime: 1700000000500,
		Version: 3, Cversion: -1, Aversion: 2, EphemeralOwner: 0x0123456789abcdef,
		DataLength: 5, NumChildren: 7, Pzxid: 0x100000003,
	}
}

func sampleACL() []ACL {
	return []ACL{
		{Perms: PermAll, ID: AnyoneID},
		{Perms: PermRead | PermAdmin, ID: Id{Scheme: "digest", ID: "user:HASH="}},
	}
}

// opRequest pairs a request opcode with a populated request record.
type opRequest struct {
	op  OpCode
	req Record
}

// sampleRequests returns one populated request for every client opcode
// that has a body (multi variants included).
func sampleRequests() []opRequest {
	create := &CreateRequest{Path: "/a/b", Data: []byte("hello"), ACL: sampleACL(), Flags: ModeEphemeralSequential}
	return []opRequest{
		{OpCreate, create},
		{OpCreate2, &CreateRequest{Path: "/c", Data: nil, ACL: OpenACLUnsafe, Flags: ModePersistent}},
		{OpCreateContainer, &CreateRequest{Path: "/ctr", Data: []byte{}, ACL: []ACL{}, Flags: ModeContainer}},
		{OpCreateTTL, &CreateTTLRequest{Path: "/ttl", Data: []byte{1, 2, 3}, ACL: CreatorAllACL, Flags: ModePersistentWithTTL, TTL: 60000}},
		{OpDelete, &DeleteRequest{Path: "/a", Version: -1}},
		{OpExists, &PathWatchRequest{Path: "/e", Watch: true}},
		{OpGetData, &PathWatchRequest{Path: "/d", Watch: false}},
		{OpSetData, &SetDataRequest{Path: "/s", Data: []byte("v2"), Version: 4}},
		{OpGetACL, &PathRequest{Path: "/acl"}},
		{OpSetACL, &SetACLRequest{Path: "/acl", ACL: ReadACLUnsafe, Version: 1}},
		{OpGetChildren, &PathWatchRequest{Path: "/", Watch: true}},
		{OpSync, &PathRequest{Path: "/sync"}},
		{OpGetChildren2, &PathWatchRequest{Path: "/kids", Watch: true}},
		{OpCheck, &CheckVersionRequest{Path: "/chk", Version: 9}},
		{OpMulti, sampleMultiRequest()},
		{OpReconfig, &ReconfigRequest{JoiningServers: "server.4=h:2888:3888;2181", LeavingServers: "3", NewMembers: "", CurConfigID: -1}},
		{OpCheckWatches, &WatchesRequest{Path: "/w", Type: WatcherData}},
		{OpRemoveWatches, &WatchesRequest{Path: "/w", Type: WatcherAny}},
		{OpMultiRead, sampleMultiReadRequest()},
		{OpAuth, &AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("user:pass")}},
		{OpSetWatches, &SetWatches{RelativeZxid: 42, DataWatches: []string{"/a", "/b"}, ExistWatches: []string{}, ChildWatches: nil}},
		{OpSASL, &SASLRequest{Token: []byte{0xde, 0xad}}},
		{OpGetEphemerals, &PathRequest{Path: "/"}},
		{OpGetAllChildrenNumber, &PathRequest{Path: "/x"}},
		{OpSetWatches2, &SetWatches2{RelativeZxid: 7, DataWatches: []string{"/d"}, ExistWatches: []string{"/e"},
			ChildWatches: []string{"/c"}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{"/r", "/r2"}}},
		{OpAddWatch, &AddWatchRequest{Path: "/aw", Mode: AddWatchPersistentRecursive}},
	}
}

func sampleMultiRequest() *MultiRequest {
	return &MultiRequest{Ops: []MultiOp{
		{OpCreate, &CreateRequest{Path: "/m/1", Data: []byte("x"), ACL: OpenACLUnsafe, Flags: ModePersistent}},
		{OpCreate2, &CreateRequest{Path: "/m/2", Data: nil, ACL: OpenACLUnsafe, Flags: ModeEphemeral}},
		{OpCreateContainer, &CreateRequest{Path: "/m/3", Data: []byte{}, ACL: OpenACLUnsafe, Flags: ModeContainer}},
		{OpCreateTTL, &CreateTTLRequest{Path: "/m/4", Data: []byte("t"), ACL: OpenACLUnsafe, Flags: ModePersistentSequentialWithTTL, TTL: 1000}},
		{OpDelete, &DeleteRequest{Path: "/m/5", Version: 2}},
		{OpSetData, &SetDataRequest{Path: "/m/6", Data: []byte("new"), Version: -1}},
		{OpCheck, &CheckVersionRequest{Path: "/m", Version: 5}},
	}}
}

func sampleMultiReadRequest() *MultiRequest {
	return &MultiRequest{Ops: []MultiOp{
		{OpGetData, &PathWatchRequest{Path: "/r/1"}},
		{OpGetChildren, &PathWatchRequest{Path: "/r"}},
	}}
}

func sampleMultiResponse() *MultiResponse {
	st := sampleStat()
	return &MultiResponse{Results: []MultiResult{
		{Op: OpCreate, Resp: &CreateResponse{Path: "/m/1"}},
		{Op: OpCreate2, Resp: &Create2Response{Path: "/m/2", Stat: st}},
		{Op: OpDelete},
		{Op: OpSetData, Resp: &StatResponse{Stat: st}},
		{Op: OpCheck},
		{Op: OpGetData, Resp: &GetDataResponse{Data: []byte("d"), Stat: st}},
		{Op: OpGetChildren, Resp: &GetChildrenResponse{Children: []string{"a", "b"}}},
		{Op: OpError, Err: ErrNoNode, Resp: &ErrorResponse{Err: ErrNoNode}},
	}}
}

// sampleRecords returns a populated value of every record type, plus
// variants with null and empty fields.
func sampleRecords() []Record {
	st := sampleStat()
	rs := []Record{
		&RequestHeader{Xid: 5, Op: OpCreate2},
		&RequestHeader{Xid: XidPing, Op: OpPing},
		&ReplyHeader{Xid: 5, Zxid: 0x200000010, Err: ErrNodeExists},
		&ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 99, TimeOut: 30000, SessionID: 0x1234, Passwd: make([]byte, 16)},
		&ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 99, TimeOut: 30000, SessionID: 0x1234, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true},
		&ConnectResponse{TimeOut: 4000, SessionID: 77, Passwd: []byte("0123456789abcdef")},
		&ConnectResponse{TimeOut: 4000, SessionID: 77, Passwd: []byte("0123456789abcdef"), HasReadOnly: true},
		&CreateResponse{Path: "/a/b0000000001"},
		&Create2Response{Path: "/x", Stat: st},
		&StatResponse{Stat: st},
		&GetDataResponse{Data: []byte("payload"), Stat: st},
		&GetDataResponse{Data: nil, Stat: st},
		&GetACLResponse{ACL: sampleACL(), Stat: st},
		&GetACLResponse{ACL: nil, Stat: st},
		&GetChildrenResponse{Children: []string{"a", "日本", ""}},
		&GetChildrenResponse{Children: []string{}},
		&GetChildrenResponse{Children: nil},
		&GetChildren2Response{Children: []string{"x"}, Stat: st},
		&GetEphemeralsResponse{Ephemerals: []string{"/e1", "/e2"}},
		&GetAllChildrenNumberResponse{TotalNumber: 12345},
		&ClientInfo{AuthScheme: "ip", User: "127.0.0.1"},
		&WhoAmIResponse{ClientInfo: []ClientInfo{{"ip", "127.0.0.1"}, {"digest", "bob"}}},
		&WhoAmIResponse{ClientInfo: []ClientInfo{}},
		&WhoAmIResponse{ClientInfo: nil},
		&WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/w"},
		&ErrorResponse{Err: ErrBadVersion},
		&MultiHeader{Type: OpCheck, Done: false, Err: -1},
		&MultiOp{Op: OpCheck, Req: &CheckVersionRequest{Path: "/c", Version: 1}},
		&MultiOp{Op: OpGetChildren, Req: &PathWatchRequest{Path: "/c"}},
		&MultiResult{Op: OpError, Err: ErrNoNode, Resp: &ErrorResponse{Err: ErrNoNode}},
		&MultiResult{Op: OpCheck},
		&MultiResult{Op: OpCreate2, Resp: &Create2Response{Path: "/p", Stat: st}},
		&MultiRequest{},
		&MultiResponse{},
		sampleMultiResponse(),
		&Stat{},
		&ACL{Perms: PermCreate, ID: Id{Scheme: "sasl", ID: "x"}},
	}
	for _, r := range sampleRequests() {
		rs = append(rs, r.req)
	}
	return rs
}

// newLike returns a new zero record of r's dynamic type.
func newLike(r Record) Record {
	return reflect.New(reflect.TypeOf(r).Elem()).Interface().(Record)
}

func encode(r Record) []byte {
	e := NewEncoder(nil)
	r.Encode(e)
	return e.Bytes()
}

func name(r Record) string { return fmt.Sprintf("%T", r) }

// roundTrip encodes r, decodes the bytes into a fresh record, checks that
// every byte was consumed and returns the decoded record.
func roundTrip(t *testing.T, r Record) Record {
	t.Helper()
	b := encode(r)
	got := newLike(r)
	d := NewDecoder(b)
	require.NoError(t, d.Record(got), name(r))
	require.NoError(t, d.Finish(), name(r))
	require.Equal(t, b, encode(got), "re-encoding %s", name(r))
	return got
}
