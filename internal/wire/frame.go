package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrFrameTooLarge is wrapped by ReadFrame's error for a frame length that
// is negative or above the limit. ZooKeeper logs this as "Len error" and
// closes the connection; so should the caller.
var ErrFrameTooLarge = errors.New("zk: Len error: frame length out of range")

// ReadFrame reads one frame from r: a 4-byte big-endian length, then that
// many payload bytes, which it returns. A length below 0 or above max
// (DefaultMaxFrame when max <= 0) is rejected with an error wrapping
// ErrFrameTooLarge before anything is allocated or read past the length.
// The payload is read into buf when cap(buf) is large enough, so the
// result may alias buf; otherwise a new slice is allocated. The result is
// never nil on success, even for an empty frame.
//
// A clean end of stream before the first length byte returns io.EOF; an
// end of stream anywhere later returns io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	if cap(buf) < 4 {
		buf = make([]byte, 4)
	}
	hdr := buf[:4]
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err // io.EOF or io.ErrUnexpectedEOF or a read error
	}
	n := int64(int32(binary.BigEndian.Uint32(hdr)))
	if n < 0 || n > int64(max) {
		return nil, fmt.Errorf("%w: length %d, limit %d", ErrFrameTooLarge, n, max)
	}
	if int64(cap(buf)) >= n {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// BeginFrame appends a 4-byte length placeholder and returns its offset,
// to be passed to EndFrame once the frame's payload has been appended.
func (e *Encoder) BeginFrame() int {
	start := len(e.buf)
	e.buf = append(e.buf, 0, 0, 0, 0)
	return start
}

// EndFrame writes the length of the payload appended since the matching
// BeginFrame into its placeholder. Frames may follow one another in the
// same Encoder.
func (e *Encoder) EndFrame(start int) {
	binary.BigEndian.PutUint32(e.buf[start:], uint32(len(e.buf)-start-4))
}

// fourLetterWords are ZooKeeper's four-letter admin commands
// (FourLetterCommands), recognised as the first 4 bytes of a connection.
var fourLetterWords = func() map[uint32]string {
	m := make(map[uint32]string)
	for _, w := range []string{
		"ruok", "stat", "srvr", "mntr", "cons", "crst", "conf", "envi", "dirs",
		"dump", "wchs", "wchc", "wchp", "isro", "srst", "gtmk", "stmk", "hash",
	} {
		m[binary.BigEndian.Uint32([]byte(w))] = w
	}
	return m
}()

// FourLetterWord reports whether length, the first 4 bytes of a new
// connection read as a frame length, spells one of ZooKeeper's four-letter
// words (ruok, stat, srvr, mntr, cons, crst, conf, envi, dirs, dump, wchs,
// wchc, wchp, isro, srst, gtmk, stmk, hash), and returns the word. Every
// such length is far above DefaultMaxFrame, so the check costs nothing for
// real frames. ("stmk" is followed by an 8-byte trace mask.)
func FourLetterWord(length int32) (string, bool) {
	w, ok := fourLetterWords[uint32(length)]
	return w, ok
}
