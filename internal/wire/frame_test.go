package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func frameBytes(length uint32, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, length)
	return append(b, payload...)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestReadFrameLengths(t *testing.T) {
	const max = DefaultMaxFrame
	big := make([]byte, max+8)
	cases := []struct {
		name   string
		length uint32
		ok     bool
	}{
		{"-1", 0xFFFFFFFF, false},
		{"0", 0, true},
		{"1", 1, true},
		{"max", max, true},
		{"max+1", max + 1, false},
		{"2^31-1", 1<<31 - 1, false},
		{"0xFFFFFFFF", 0xFFFFFFFF, false},
		{"-2^31", 0x80000000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cr := &countingReader{r: bytes.NewReader(frameBytes(c.length, big))}
			got, err := ReadFrame(cr, nil, max)
			if !c.ok {
				require.ErrorIs(t, err, ErrFrameTooLarge)
				require.Contains(t, err.Error(), "Len error")
				require.Nil(t, got)
				require.Equal(t, 4, cr.n, "must not read past the length")
				allocs := testing.AllocsPerRun(20, func() {
					_, _ = ReadFrame(bytes.NewReader(frameBytes(c.length, nil)), nil, max)
				})
				require.LessOrEqual(t, allocs, float64(maxRejectAllocs))
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			require.Len(t, got, int(c.length))
			require.Equal(t, 4+int(c.length), cr.n)
		})
	}
}

func TestReadFrameDefaultMax(t *testing.T) {
	_, err := ReadFrame(bytes.NewReader(frameBytes(DefaultMaxFrame+1, nil)), nil, 0)
	require.ErrorIs(t, err, ErrFrameTooLarge)
	_, err = ReadFrame(bytes.NewReader(frameBytes(11, nil)), nil, 10)
	require.ErrorIs(t, err, ErrFrameTooLarge)
	got, err := ReadFrame(bytes.NewReader(frameBytes(10, make([]byte, 10))), nil, 10)
	require.NoError(t, err)
	require.Len(t, got, 10)
}

func TestReadFrameReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 64)
	got, err := ReadFrame(bytes.NewReader(frameBytes(5, []byte("hello"))), buf, 0)
	require.NoError(t, err)
	require.Equal(t, []byte("hello"), got)
	require.Same(t, &buf[:1][0], &got[0])

	got, err = ReadFrame(bytes.NewReader(frameBytes(100, make([]byte, 100))), buf, 0)
	require.NoError(t, err)
	require.Len(t, got, 100)

	allocs := testing.AllocsPerRun(100, func() {
		_, _ = ReadFrame(bytes.NewReader(frameBytes(5, []byte("hello"))), buf, 0)
	})
	require.LessOrEqual(t, allocs, 3.0) // the reader and test bytes only
}

func TestReadFrameTruncated(t *testing.T) {
	_, err := ReadFrame(bytes.NewReader(nil), nil, 0)
	require.Equal(t, io.EOF, err, "clean EOF between frames")

	full := frameBytes(6, []byte("abcdef"))
	for i := 1; i < len(full); i++ {
		_, err := ReadFrame(bytes.NewReader(full[:i]), nil, 0)
		require.Equal(t, io.ErrUnexpectedEOF, err, "cut at %d", i)
	}
	// read errors are passed through
	boom := errors.New("boom")
	_, err = ReadFrame(iotest.ErrReader(boom), nil, 0)
	require.ErrorIs(t, err, boom)
	_, err = ReadFrame(io.MultiReader(bytes.NewReader(frameBytes(6, []byte("ab"))), iotest.ErrReader(boom)), nil, 0)
	require.ErrorIs(t, err, boom)
}

// A stream of frames delivered one byte at a time (a frame split at every
// byte) reads back exactly.
func TestReadFrameSplitAtEveryByte(t *testing.T) {
	var e Encoder
	payloads := [][]byte{[]byte("first"), {}, bytes.Repeat([]byte{0xab}, 300)}
	for _, p := range payloads {
		s := e.BeginFrame()
		e.buf = append(e.buf, p...)
		e.EndFrame(s)
	}
	for _, r := range []io.Reader{bytes.NewReader(e.Bytes()), iotest.OneByteReader(bytes.NewReader(e.Bytes())),
		iotest.HalfReader(bytes.NewReader(e.Bytes())), iotest.DataErrReader(bytes.NewReader(e.Bytes()))} {
		var buf []byte
		for _, p := range payloads {
			got, err := ReadFrame(r, buf, 0)
			require.NoError(t, err)
			require.Equal(t, p, got)
			buf = got
		}
		_, err := ReadFrame(r, buf, 0)
		require.Equal(t, io.EOF, err)
	}
}

func TestBeginEndFrame(t *testing.T) {
	e := NewEncoder(make([]byte, 0, 16))
	s := e.BeginFrame()
	require.Equal(t, 0, s)
	(&ReplyHeader{Xid: 3, Zxid: 9, Err: OK}).Encode(e)
	(&StatResponse{Stat: sampleStat()}).Encode(e)
	e.EndFrame(s)
	s2 := e.BeginFrame()
	require.Equal(t, 4+ReplyHeaderSize+StatSize, s2)
	e.EndFrame(s2) // an empty frame
	require.Equal(t, uint32(ReplyHeaderSize+StatSize), binary.BigEndian.Uint32(e.Bytes()))

	r := bytes.NewReader(e.Bytes())
	f, err := ReadFrame(r, nil, 0)
	require.NoError(t, err)
	d := NewDecoder(f)
	var h ReplyHeader
	var st StatResponse
	require.NoError(t, d.Record(&h))
	require.NoError(t, d.Record(&st))
	require.NoError(t, d.Finish())
	require.Equal(t, sampleStat(), st.Stat)
	f, err = ReadFrame(r, nil, 0)
	require.NoError(t, err)
	require.Empty(t, f)
}

func TestFourLetterWord(t *testing.T) {
	words := []string{"ruok", "stat", "srvr", "mntr", "cons", "crst", "conf", "envi", "dirs",
		"dump", "wchs", "wchc", "wchp", "isro", "srst", "gtmk", "stmk", "hash"}
	for _, w := range words {
		n := int32(binary.BigEndian.Uint32([]byte(w)))
		got, ok := FourLetterWord(n)
		require.True(t, ok, w)
		require.Equal(t, w, got)
		require.Greater(t, n, int32(DefaultMaxFrame), "a 4lw never looks like a valid frame length")
	}
	for _, w := range []string{"imok", "RUOK", "lsnp", "xxxx", "\x00\x00\x00,"} {
		_, ok := FourLetterWord(int32(binary.BigEndian.Uint32([]byte(w))))
		require.False(t, ok, w)
	}
	for _, n := range []int32{0, 44, 45, DefaultMaxFrame, -1} {
		_, ok := FourLetterWord(n)
		require.False(t, ok)
	}
}
