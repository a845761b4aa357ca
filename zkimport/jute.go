package zkimport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"slices"

	"github.com/paddockzk/paddock/internal/wire"
)

// ErrFormat is wrapped by every error about the content of a ZooKeeper
// file (as opposed to I/O errors).
var ErrFormat = errors.New("zkimport: malformed ZooKeeper file")

// errTruncated marks a read that hit the end of the input: for the
// transaction log that is a partially written tail, not corruption.
var errTruncated = fmt.Errorf("%w: unexpected end of file", ErrFormat)

// DefaultMaxField bounds any single string or buffer read from ZooKeeper's
// files. ZooKeeper itself refuses fields above jute.maxbuffer (1 MiB by
// default) plus 1 KiB; this limit leaves room for servers that raised it.
const DefaultMaxField = 64 << 20

// reader reads jute values from a stream, keeping an Adler-32 of every byte
// consumed (ZooKeeper seals snapshots with one). Errors are sticky. A length
// field is checked against max and the bytes are then read in bounded
// chunks, so a huge length in a short file fails without allocating it.
type reader struct {
	r   *bufio.Reader
	sum hash.Hash32
	off int64
	max int
	err error
}

func newReader(r io.Reader, maxField int) *reader {
	if maxField <= 0 {
		maxField = DefaultMaxField
	}
	return &reader{r: bufio.NewReaderSize(r, 64<<10), sum: adler32.New(), max: maxField}
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s (offset %d)", ErrFormat, fmt.Sprintf(format, args...), r.off)
	}
}

// atEOF reports whether the input ends here (no error is recorded).
func (r *reader) atEOF() bool {
	if r.err != nil {
		return false
	}
	_, err := r.r.Peek(1)
	return err == io.EOF
}

// bytes reads exactly n bytes.
func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	const chunk = 1 << 20
	buf := make([]byte, 0, min(n, chunk))
	for len(buf) < n {
		start := len(buf)
		buf = slices.Grow(buf, min(n-start, chunk))[:start+min(n-start, chunk)]
		got, err := io.ReadFull(r.r, buf[start:])
		r.sum.Write(buf[start : start+got])
		r.off += int64(got)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				r.err = fmt.Errorf("%w (offset %d)", errTruncated, r.off)
			} else {
				r.err = err
			}
			return nil
		}
	}
	return buf
}

func (r *reader) int() int32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

func (r *reader) long() int64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func (r *reader) u8() byte {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

// length reads a length field: -1 (null) or 0..max.
func (r *reader) length(what string) (int, bool) {
	n := r.int()
	switch {
	case r.err != nil:
		return 0, false
	case n == -1:
		return -1, true
	case n < 0:
		r.fail("negative %s length %d", what, n)
		return 0, false
	case int(n) > r.max:
		r.fail("%s length %d exceeds the limit of %d bytes", what, n, r.max)
		return 0, false
	}
	return int(n), true
}

// buffer reads a jute buffer; null reads as nil.
func (r *reader) buffer() []byte {
	n, ok := r.length("buffer")
	if !ok || n < 0 {
		return nil
	}
	return r.bytes(n)
}

// ustring reads a jute ustring; null sets null.
func (r *reader) ustring() (s string, null bool) {
	n, ok := r.length("string")
	if !ok {
		return "", false
	}
	if n < 0 {
		return "", true
	}
	return string(r.bytes(n)), false
}

// count reads a vector or map count; null (-1) is an error here.
func (r *reader) count(what string) int {
	n := r.int()
	if r.err == nil && n < 0 {
		r.fail("bad %s count %d", what, n)
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

// acl reads one jute ACL record.
func (r *reader) acl() wire.ACL {
	var a wire.ACL
	a.Perms = wire.Perm(r.int())
	a.ID.Scheme, _ = r.ustring()
	a.ID.ID, _ = r.ustring()
	return a
}

// seal reads ZooKeeper's checksum seal (SnapStream.sealStream: the
// Adler-32 of everything before it as a long, then the string "/") and
// checks it.
func (r *reader) seal() {
	want := int64(r.sum.Sum32())
	got := r.long()
	s, null := r.ustring()
	if r.err != nil {
		return
	}
	if null || s != "/" {
		r.fail("bad seal terminator")
		return
	}
	if got != want {
		r.fail("checksum mismatch: file says %#x, content has %#x", got, want)
	}
}
