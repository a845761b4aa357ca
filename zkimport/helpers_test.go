package zkimport

import (
	"encoding/binary"
	"hash/adler32"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// jw writes jute the way ZooKeeper's BinaryOutputArchive does, so tests
// can build ZooKeeper files byte by byte.
type jw struct{ b []byte }

func (w *jw) int(v int32)  { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *jw) long(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *jw) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}
func (w *jw) str(s string) { w.int(int32(len(s))); w.b = append(w.b, s...) }
func (w *jw) buf(b []byte) {
	if b == nil {
		w.int(-1)
		return
	}
	w.int(int32(len(b)))
	w.b = append(w.b, b...)
}
func (w *jw) acls(acl []wire.ACL) {
	w.int(int32(len(acl)))
	for _, a := range acl {
		w.int(int32(a.Perms))
		w.str(a.ID.Scheme)
		w.str(a.ID.ID)
	}
}

// seal appends SnapStream.sealStream's checksum and "/".
func (w *jw) seal() {
	w.long(int64(adler32.Checksum(w.b)))
	w.str("/")
}

type tnode struct {
	path   string // "" for the root
	data   []byte
	aclRef int64
	st     stat
}

type tsnap struct {
	sessions [][2]int64 // id, timeout
	acls     []struct {
		ref  int64
		list []wire.ACL
	}
	nodes  []tnode
	digest bool
}

// baseNodes are the nodes every ZooKeeper snapshot starts with.
func baseNodes() []tnode {
	return []tnode{{path: ""}, {path: "/zookeeper"}, {path: "/zookeeper/quota"}, {path: "/zookeeper/config", aclRef: 1}}
}

func (s *tsnap) addACL(ref int64, list []wire.ACL) {
	s.acls = append(s.acls, struct {
		ref  int64
		list []wire.ACL
	}{ref, list})
}

func (s *tsnap) bytes() []byte {
	w := &jw{}
	w.int(snapMagic)
	w.int(2)
	w.long(-1)
	w.int(int32(len(s.sessions)))
	for _, x := range s.sessions {
		w.long(x[0])
		w.int(int32(x[1]))
	}
	w.int(int32(len(s.acls)))
	for _, a := range s.acls {
		w.long(a.ref)
		w.acls(a.list)
	}
	for _, n := range s.nodes {
		w.str(n.path)
		w.buf(n.data)
		w.long(n.aclRef)
		st := n.st
		for _, v := range []int64{st.czxid, st.mzxid, st.ctime, st.mtime} {
			w.long(v)
		}
		w.int(st.version)
		w.int(st.cversion)
		w.int(st.aversion)
		w.long(st.owner)
		w.long(st.pzxid)
	}
	w.str("/")
	w.seal()
	if s.digest {
		w.long(0x42)
		w.int(2)
		w.long(12345)
		w.seal()
	}
	return w.b
}

// Transaction record builders: each returns TxnHeader + record bytes.
func hdr(w *jw, client int64, zxid int64, typ int32) {
	w.long(client)
	w.int(1)
	w.long(zxid)
	w.long(1_700_000_000_000 + zxid)
	w.int(typ)
}

func createRec(w *jw, path, data string, acl []wire.ACL, eph bool, pcv int32) {
	w.str(path)
	w.buf([]byte(data))
	w.acls(acl)
	w.bool(eph)
	w.int(pcv)
}

func txCreate(client, zxid int64, typ int32, path, data string, eph bool, pcv int32) []byte {
	w := &jw{}
	hdr(w, client, zxid, typ)
	createRec(w, path, data, wire.OpenACLUnsafe, eph, pcv)
	return w.b
}

func txCreateTTL(zxid int64, path string, pcv int32, ttl int64) []byte {
	w := &jw{}
	hdr(w, 0, zxid, opCreateTTL)
	w.str(path)
	w.buf([]byte{})
	w.acls(wire.OpenACLUnsafe)
	w.int(pcv)
	w.long(ttl)
	return w.b
}

func txCreateContainer(zxid int64, path string, pcv int32) []byte {
	w := &jw{}
	hdr(w, 0, zxid, opCreateContainer)
	w.str(path)
	w.buf(nil)
	w.acls(wire.OpenACLUnsafe)
	w.int(pcv)
	return w.b
}

func txDelete(zxid int64, path string) []byte {
	w := &jw{}
	hdr(w, 0, zxid, opDelete)
	w.str(path)
	return w.b
}

func txSetData(zxid int64, path, data string, version int32) []byte {
	w := &jw{}
	hdr(w, 0, zxid, opSetData)
	w.str(path)
	w.buf([]byte(data))
	w.int(version)
	return w.b
}

func txSetACL(zxid int64, path string, acl []wire.ACL, version int32) []byte {
	w := &jw{}
	hdr(w, 0, zxid, opSetACL)
	w.str(path)
	w.acls(acl)
	w.int(version)
	return w.b
}

func txCreateSession(client, zxid int64, timeout int32) []byte {
	w := &jw{}
	hdr(w, client, zxid, opCreateSession)
	w.int(timeout)
	return w.b
}

func txCloseSession(client, zxid int64, paths ...string) []byte {
	w := &jw{}
	hdr(w, client, zxid, opCloseSession)
	w.int(int32(len(paths)))
	for _, p := range paths {
		w.str(p)
	}
	return w.b
}

func txError(zxid int64, code int32) []byte {
	w := &jw{}
	hdr(w, 0, zxid, opError)
	w.int(code)
	return w.b
}

// subtxn is one operation of a multi: its type and record bytes.
type subtxn struct {
	typ int32
	rec []byte
}

func subCreate(path, data string) subtxn {
	w := &jw{}
	createRec(w, path, data, wire.OpenACLUnsafe, false, -1)
	return subtxn{opCreate, w.b}
}

func subDelete(path string) subtxn {
	w := &jw{}
	w.str(path)
	return subtxn{opDelete, w.b}
}

func subSetData(path, data string, version int32) subtxn {
	w := &jw{}
	w.str(path)
	w.buf([]byte(data))
	w.int(version)
	return subtxn{opSetData, w.b}
}

func subCheck(path string, version int32) subtxn {
	w := &jw{}
	w.str(path)
	w.int(version)
	return subtxn{opCheck, w.b}
}

func subError(code int32) subtxn {
	w := &jw{}
	w.int(code)
	return subtxn{opError, w.b}
}

func txMulti(client, zxid int64, ops ...subtxn) []byte {
	w := &jw{}
	hdr(w, client, zxid, opMulti)
	w.int(int32(len(ops)))
	for _, op := range ops {
		w.int(op.typ)
		w.buf(op.rec)
	}
	return w.b
}

// withDigest appends the TxnDigest ZooKeeper 3.6+ writes after a record.
func withDigest(b []byte) []byte {
	w := &jw{b: append([]byte(nil), b...)}
	w.int(2)
	w.long(987654321)
	return w.b
}

// logBytes builds a transaction log file with entries and zero padding.
func logBytes(entries ...[]byte) []byte {
	w := &jw{}
	w.int(logMagic)
	w.int(2)
	w.long(0)
	for _, e := range entries {
		w.long(int64(adler32.Checksum(e)))
		w.buf(e)
		w.b = append(w.b, txnEOR)
	}
	return append(w.b, make([]byte, 64)...) // preallocation padding
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}
