package fsm

import (
	"fmt"
	"math"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Commands are encoded by hand as msgpack arrays (no reflection: this is
// on every write's path). Field order is the format; CommandVersion
// changes with it.

// EncodeMsgpack implements msgpack.CustomEncoder.
func (c *Command) EncodeMsgpack(e *msgpack.Encoder) error {
	ew := errWriter{e: e}
	ew.arrayLen(13)
	ew.uint(uint64(c.Type))
	ew.int(c.Time)
	ew.int(c.Session)
	ew.uint(c.Term)
	ew.int(int64(c.Timeout))
	ew.bytes(c.Secret)
	ew.bool(c.Multi)
	ew.bytes(c.Data)
	ew.arrayLen(len(c.Auth))
	for _, id := range c.Auth {
		ew.str(id.Scheme)
		ew.str(id.ID)
	}
	ew.bool(c.EnforceQuota)
	ew.arrayLen(len(c.Ops))
	for i := range c.Ops {
		encodeOp(&ew, &c.Ops[i])
	}
	ew.optBool(c.NoTTL)   // was reserved: nil reads back as false
	ew.optInt(c.ServerID) // was reserved: nil reads back as 0
	return ew.err
}

func encodeOp(ew *errWriter, op *Op) {
	ew.arrayLen(7)
	ew.int(int64(op.Type))
	ew.str(op.Path)
	ew.bytes(op.Data)
	ew.arrayLen(len(op.ACL))
	for _, a := range op.ACL {
		ew.int(int64(a.Perms))
		ew.str(a.ID.Scheme)
		ew.str(a.ID.ID)
	}
	ew.int(int64(op.Mode))
	ew.int(op.TTL)
	ew.int(int64(op.Version))
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (c *Command) DecodeMsgpack(d *msgpack.Decoder) error {
	r := errReader{d: d}
	if n := r.arrayLen(); n != 13 && r.err == nil {
		return fmt.Errorf("command has %d fields, want 13", n)
	}
	c.Type = CmdType(r.uint())
	c.Time = r.int()
	c.Session = r.int()
	c.Term = r.uint()
	c.Timeout = int32(r.int())
	c.Secret = r.bytes()
	c.Multi = r.bool()
	c.Data = r.bytes()
	if n := r.arrayLen(); n > 0 {
		c.Auth = make([]wire.Id, n)
		for i := range c.Auth {
			c.Auth[i] = wire.Id{Scheme: r.str(), ID: r.str()}
		}
	}
	c.EnforceQuota = r.bool()
	if n := r.arrayLen(); n > 0 {
		c.Ops = make([]Op, n)
		for i := range c.Ops {
			decodeOp(&r, &c.Ops[i])
		}
	}
	c.NoTTL = r.optBool()
	c.ServerID = r.optInt()
	return r.err
}

func decodeOp(r *errReader, op *Op) {
	if n := r.arrayLen(); n != 7 && r.err == nil {
		r.err = fmt.Errorf("op has %d fields, want 7", n)
		return
	}
	op.Type = wire.OpCode(r.int())
	op.Path = r.str()
	op.Data = r.bytes()
	if n := r.arrayLen(); n > 0 {
		op.ACL = make([]wire.ACL, n)
		for i := range op.ACL {
			op.ACL[i] = wire.ACL{Perms: wire.Perm(r.int()), ID: wire.Id{Scheme: r.str(), ID: r.str()}}
		}
	}
	op.Mode = wire.CreateMode(r.int())
	op.TTL = r.int()
	op.Version = int32(r.int())
}

// errWriter and errReader keep the first error, so the codecs read as
// straight-line code.
type errWriter struct {
	e   *msgpack.Encoder
	err error
}

func (w *errWriter) do(err error) {
	if w.err == nil {
		w.err = err
	}
}
func (w *errWriter) arrayLen(n int) { w.do(w.e.EncodeArrayLen(n)) }
func (w *errWriter) uint(v uint64)  { w.do(w.e.EncodeUint(v)) }
func (w *errWriter) int(v int64)    { w.do(w.e.EncodeInt(v)) }
func (w *errWriter) bool(v bool)    { w.do(w.e.EncodeBool(v)) }
func (w *errWriter) str(v string)   { w.do(w.e.EncodeString(v)) }
func (w *errWriter) nil()           { w.do(w.e.EncodeNil()) }

// optBool writes true, or nil for false (the encoding of a reserved slot).
func (w *errWriter) optBool(v bool) {
	if v {
		w.bool(true)
		return
	}
	w.nil()
}

// optInt writes v, or nil for 0 (the encoding of a reserved slot).
func (w *errWriter) optInt(v int64) {
	if v != 0 {
		w.int(v)
		return
	}
	w.nil()
}

// bytes keeps nil and empty apart: nil data reads back as null.
func (w *errWriter) bytes(v []byte) {
	if v == nil {
		w.nil()
		return
	}
	w.do(w.e.EncodeBytes(v))
}

type errReader struct {
	d   *msgpack.Decoder
	err error
}

func (r *errReader) do(err error) bool {
	if r.err == nil && err != nil {
		r.err = err
	}
	return r.err == nil
}

func (r *errReader) arrayLen() int {
	if r.err != nil {
		return 0
	}
	n, err := r.d.DecodeArrayLen()
	if !r.do(err) || n < 0 {
		return 0
	}
	if n > maxCommandElems || n > r.left() {
		r.err = fmt.Errorf("array of %d elements", n)
		return 0
	}
	return n
}

func (r *errReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, err := r.d.DecodeUint64()
	r.do(err)
	return v
}

func (r *errReader) int() int64 {
	if r.err != nil {
		return 0
	}
	v, err := r.d.DecodeInt64()
	r.do(err)
	return v
}

func (r *errReader) bool() bool {
	if r.err != nil {
		return false
	}
	v, err := r.d.DecodeBool()
	r.do(err)
	return v
}

// optBool reads what optBool wrote: nil is false.
func (r *errReader) optBool() bool {
	if r.err != nil {
		return false
	}
	if code, err := r.d.PeekCode(); r.do(err) && code == msgpcode.Nil {
		r.skip()
		return false
	}
	return r.bool()
}

// optInt reads what optInt wrote: nil is 0.
func (r *errReader) optInt() int64 {
	if r.err != nil {
		return 0
	}
	if code, err := r.d.PeekCode(); r.do(err) && code == msgpcode.Nil {
		r.skip()
		return 0
	}
	return r.int()
}

func (r *errReader) str() string {
	if r.err != nil {
		return ""
	}
	v, err := r.d.DecodeString()
	r.do(err)
	return v
}

// bytes reads a byte string. Its declared length is checked against the
// input left before anything is allocated: msgpack's DecodeBytes
// allocates whatever a corrupt length says (4 GiB for a few bytes).
func (r *errReader) bytes() []byte {
	if r.err != nil {
		return nil
	}
	n, err := r.d.DecodeBytesLen()
	if !r.do(err) || n < 0 {
		return nil
	}
	if left := r.left(); n > left {
		r.do(fmt.Errorf("byte string of %d bytes with %d left", n, left))
		return nil
	}
	v := make([]byte, n)
	r.do(r.d.ReadFull(v))
	return v
}

// left is how many bytes of input remain when the decoder reads from
// memory (DecodeCommand), so that no declared length can exceed it;
// otherwise unbounded.
func (r *errReader) left() int {
	if l, ok := r.d.Buffered().(interface{ Len() int }); ok {
		return l.Len()
	}
	return math.MaxInt
}

func (r *errReader) skip() {
	if r.err == nil {
		r.do(r.d.Skip())
	}
}

// maxCommandElems bounds any array in a command (ops of a multi, ACL
// entries, identities) against corrupt log entries.
const maxCommandElems = 1 << 20
