package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// DefaultMaxFrame is ZooKeeper's default jute.maxbuffer: the largest frame
// (and the largest single field) accepted, 0xfffff bytes.
const DefaultMaxFrame = 0xfffff

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("zk: malformed record")

// ErrInvalidMultiOp (which wraps ErrMalformed) reports a well-formed multi
// or multiRead holding an op it does not allow: an unknown or
// disallowed type, or ops of both kinds. ZooKeeper answers such a request
// with MARSHALLINGERROR and keeps the connection.
var ErrInvalidMultiOp = fmt.Errorf("%w: invalid op in multi", ErrMalformed)

// Record is a jute record that can be encoded and decoded by hand.
type Record interface {
	Encode(e *Encoder)
	Decode(d *Decoder) error
}

// Encoder appends jute-encoded values to a byte slice. The zero value is
// ready to use. Encoding never fails.
type Encoder struct {
	buf []byte
}

// NewEncoder returns an Encoder that appends to buf[:0].
func NewEncoder(buf []byte) *Encoder { return &Encoder{buf: buf[:0]} }

// Bytes returns the encoded bytes. The slice aliases the Encoder's buffer.
func (e *Encoder) Bytes() []byte { return e.buf }

// Len returns the number of bytes encoded so far.
func (e *Encoder) Len() int { return len(e.buf) }

// Truncate drops everything encoded after the first n bytes.
func (e *Encoder) Truncate(n int) { e.buf = e.buf[:n] }

// Reset empties the Encoder, keeping its buffer.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// Int appends a big-endian int32.
func (e *Encoder) Int(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }

// Long appends a big-endian int64.
func (e *Encoder) Long(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }

// Bool appends one byte, 0 or 1.
func (e *Encoder) Bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// String appends a length-prefixed UTF-8 string.
func (e *Encoder) String(s string) {
	e.Int(int32(len(s)))
	e.buf = append(e.buf, s...)
}

// Buffer appends a length-prefixed byte buffer; nil encodes as length -1.
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(b)))
	e.buf = append(e.buf, b...)
}

// Strings appends a vector of strings; nil encodes as count -1.
func (e *Encoder) Strings(v []string) {
	if v == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(v)))
	for _, s := range v {
		e.String(s)
	}
}

// Record appends r.
func (e *Encoder) Record(r Record) { r.Encode(e) }

// Decoder reads jute values from one frame. Errors are sticky: after the
// first error every read returns a zero value and Err reports the error.
// No read allocates in proportion to a length field unless the frame
// holds that many bytes.
type Decoder struct {
	b   []byte
	off int
	err error
	// MaxField bounds any single string or buffer; 0 means len(frame).
	MaxField int
}

// NewDecoder returns a Decoder over b. The decoder does not copy b:
// Buffer results are copies, so b may be reused after decoding.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Err returns the first decoding error, if any.
func (d *Decoder) Err() error { return d.err }

// Remaining returns the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.b) - d.off }

// Offset returns the number of bytes consumed.
func (d *Decoder) Offset() int { return d.off }

// Fail records err (wrapped in ErrMalformed) unless an error is already set.
func (d *Decoder) Fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
}

// failOp records an ErrInvalidMultiOp unless an error is already set.
func (d *Decoder) failOp(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrInvalidMultiOp, fmt.Sprintf(format, args...))
	}
}

func (d *Decoder) need(n int, what string) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || n > d.Remaining() {
		d.Fail("%s needs %d bytes at offset %d, %d remain", what, n, d.off, d.Remaining())
		return false
	}
	return true
}

// Int reads a big-endian int32.
func (d *Decoder) Int() int32 {
	if !d.need(4, "int") {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(d.b[d.off:]))
	d.off += 4
	return v
}

// Long reads a big-endian int64.
func (d *Decoder) Long() int64 {
	if !d.need(8, "long") {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(d.b[d.off:]))
	d.off += 8
	return v
}

// Bool reads one byte; any non-zero value is true, as in jute.
func (d *Decoder) Bool() bool {
	if !d.need(1, "bool") {
		return false
	}
	v := d.b[d.off] != 0
	d.off++
	return v
}

func (d *Decoder) length(what string) (int, bool) {
	n := d.Int()
	if d.err != nil {
		return 0, false
	}
	if n == -1 {
		return -1, true
	}
	if n < 0 {
		d.Fail("negative %s length %d", what, n)
		return 0, false
	}
	if d.MaxField > 0 && int(n) > d.MaxField {
		d.Fail("%s length %d exceeds limit %d", what, n, d.MaxField)
		return 0, false
	}
	if !d.need(int(n), what) {
		return 0, false
	}
	return int(n), true
}

// String reads a length-prefixed string. A null string (-1) reads as "".
func (d *Decoder) String() string {
	n, ok := d.length("string")
	if !ok || n <= 0 {
		return ""
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s
}

// Buffer reads a length-prefixed buffer. Length -1 reads as nil; the result
// is a copy.
func (d *Decoder) Buffer() []byte {
	n, ok := d.length("buffer")
	if !ok || n < 0 {
		return nil
	}
	b := make([]byte, n)
	copy(b, d.b[d.off:])
	d.off += n
	return b
}

// Count reads a vector count and checks that at least minElem bytes per
// element remain, so that a huge count in a tiny frame is rejected before
// any allocation. A null vector (-1) returns -1.
func (d *Decoder) Count(minElem int) int {
	n := d.Int()
	if d.err != nil {
		return 0
	}
	if n == -1 {
		return -1
	}
	if n < 0 {
		d.Fail("negative vector count %d", n)
		return 0
	}
	if minElem < 1 {
		minElem = 1
	}
	if int64(n)*int64(minElem) > int64(d.Remaining()) {
		d.Fail("vector count %d exceeds the %d bytes remaining", n, d.Remaining())
		return 0
	}
	return int(n)
}

// Strings reads a vector of strings. A null vector reads as nil.
func (d *Decoder) Strings() []string {
	n := d.Count(4)
	if n <= 0 {
		if n == 0 && d.err == nil {
			return []string{}
		}
		return nil
	}
	v := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		v = append(v, d.String())
	}
	return v
}

// Record decodes r and returns the sticky error.
func (d *Decoder) Record(r Record) error {
	if d.err != nil {
		return d.err
	}
	if err := r.Decode(d); err != nil && d.err == nil {
		d.err = err
	}
	return d.err
}

// Finish returns the sticky error, or an error if bytes remain unread.
func (d *Decoder) Finish() error {
	if d.err != nil {
		return d.err
	}
	if d.Remaining() != 0 {
		d.Fail("%d trailing bytes", d.Remaining())
	}
	return d.err
}
