package zkimport

import (
	"bytes"
	"errors"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// The parsers read files an operator points them at: whatever the bytes,
// they return a state or an error wrapping ErrFormat, and never panic or
// allocate in proportion to a length field the input does not back.

const fuzzMaxField = 1 << 16

func exampleTxns() [][]byte {
	return [][]byte{
		txCreateSession(0x22, e1|6, 8000),
		txCreate(0x22, e1|7, opCreate, "/app/e2", "x", true, 2),
		withDigest(txCreate(0, e1|8, opCreate2, "/app/s0000000002", "s", false, -1)),
		txSetData(e1|9, "/app", "v3", 3),
		txSetACL(e1|10, "/app", digestACL, 2),
		txCreateTTL(e1|11, "/app/ttl", 4, 60000),
		txCreateContainer(e1|12, "/cc", 4),
		txDelete(e1|13, "/c"),
		txError(e1|14, -110),
		txMulti(0, e1|15, subCheck("/app", 3), subCreate("/m", "1"), subSetData("/m", "2", 1), subDelete("/m")),
		txMulti(0, e1|16, subError(0), subError(-101)),
		txCloseSession(0x11, e1|17, "/app/eph"),
	}
}

// finish runs what Import does after parsing, to reach BuildState too.
func finish(t *testing.T, tr *tree) {
	if err := tr.dropUnimportable(); err != nil {
		return
	}
	f, err := tr.toFSM(fixedOptions(""), &Report{})
	if err == nil {
		if err := f.Check(); err != nil {
			t.Fatalf("BuildState returned a state that fails Check: %v", err)
		}
	}
}

func FuzzReadSnapshot(f *testing.F) {
	f.Add(exampleSnapshot().bytes())
	s := exampleSnapshot()
	s.digest = true
	f.Add(s.bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		sn, err := readSnapshot(bytes.NewReader(b), fuzzMaxField)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error does not wrap ErrFormat: %v", err)
			}
			return
		}
		finish(t, sn.tree)
	})
}

func FuzzReadLog(f *testing.F) {
	f.Add(logBytes(exampleTxns()...))
	f.Add(logBytes(exampleTxns()[0]))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		tr := replay(t)
		_, err := readLog(bytes.NewReader(b), fuzzMaxField, tr.apply)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error does not wrap ErrFormat: %v", err)
			}
			return
		}
		finish(t, tr)
	})
}

// FuzzApplyTxn reaches the transaction decoder and the replay directly (a
// fuzzer seldom forges the Adler-32 a log entry needs).
func FuzzApplyTxn(f *testing.F) {
	for _, b := range exampleTxns() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := decodeTxn(b, fuzzMaxField)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error does not wrap ErrFormat: %v", err)
			}
			return
		}
		tr := replay(t)
		if err := tr.apply(x); err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error does not wrap ErrFormat: %v", err)
			}
			return
		}
		finish(t, tr)
	})
}

func TestFuzzSeedsApply(t *testing.T) {
	tr := replay(t)
	for _, b := range exampleTxns() {
		x, err := decodeTxn(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.apply(x); err != nil {
			t.Fatal(err)
		}
	}
	if n := tr.nodes["/app"]; string(n.data) != "v3" || n.acl[0].ID.Scheme != "digest" || tr.nodes["/m"] != nil {
		t.Fatalf("unexpected replay result: %+v", n)
	}
	if _, ok := tr.nodes["/app/eph"]; ok {
		t.Fatal("closeSession kept an ephemeral")
	}
	if tr.nodes["/app/ttl"].stat.owner != wire.TTLOwner(60000) {
		t.Fatal("TTL owner")
	}
	finish(t, tr)
}
