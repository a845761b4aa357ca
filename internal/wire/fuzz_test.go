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

// FuzzDecodeRequest feeds arbitrary (opcode, body) pairs to DecodeRequest.
// It must never panic; errors are ErrUnimplemented or wrap ErrMalformed;
// a decoded record re-encodes to at most the input's size and decodes
// again to an equal value.
func FuzzDecodeRequest(f *testing.F) {
	for _, c := range sampleRequests() {
		f.Add(int32(c.op), encode(c.req))
	}
	f.Add(int32(OpPing), []byte{})
	f.Add(int32(OpWhoAmI), []byte{})
	f.Add(int32(99), []byte{0, 0, 0, 1, '/'})
	f.Add(int32(OpMulti), encode(&MultiRequest{}))
	f.Add(int32(OpMultiRead), encode(sampleMultiRequest()))
	f.Add(int32(OpGetChildren), []byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0})

	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		r, err := DecodeRequest(OpCode(op), NewDecoder(body))
		if err != nil {
			require.Nil(t, r)
			if err == error(ErrUnimplemented) {
				require.Nil(t, NewRequest(OpCode(op)))
				return
			}
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		if r == nil {
			require.Contains(t, []OpCode{OpPing, OpCloseSession, OpWhoAmI}, OpCode(op))
			return
		}
		b := encode(r)
		require.LessOrEqual(t, len(b), len(body))
		d := NewDecoder(b)
		r2, err := DecodeRequest(OpCode(op), d)
		require.NoError(t, err)
		require.NoError(t, d.Finish())
		require.Equal(t, r, r2)
		require.Equal(t, b, encode(r2))
	})
}

func sampleResponses() map[OpCode]Record {
	st := sampleStat()
	return map[OpCode]Record{
		OpNotification:         &WatcherEvent{Type: EventNodeDeleted, State: StateSyncConnected, Path: "/x"},
		OpCreate:               &CreateResponse{Path: "/a"},
		OpCreate2:              &Create2Response{Path: "/a", Stat: st},
		OpExists:               &StatResponse{Stat: st},
		OpGetData:              &GetDataResponse{Data: []byte("d"), Stat: st},
		OpGetACL:               &GetACLResponse{ACL: sampleACL(), Stat: st},
		OpGetChildren:          &GetChildrenResponse{Children: []string{"a", "b"}},
		OpGetChildren2:         &GetChildren2Response{Children: []string{"a"}, Stat: st},
		OpSync:                 &PathRequest{Path: "/s"},
		OpMulti:                sampleMultiResponse(),
		OpSASL:                 &SASLRequest{Token: []byte("tok")},
		OpGetEphemerals:        &GetEphemeralsResponse{Ephemerals: []string{"/e"}},
		OpGetAllChildrenNumber: &GetAllChildrenNumberResponse{TotalNumber: 3},
		OpAddWatch:             &ErrorResponse{},
		OpWhoAmI:               &WhoAmIResponse{ClientInfo: []ClientInfo{{"ip", "::1"}}},
	}
}

// FuzzDecodeResponse does the same for reply bodies, as a client decodes
// them (NewResponse + Decode).
func FuzzDecodeResponse(f *testing.F) {
	for op, r := range sampleResponses() {
		f.Add(int32(op), encode(r))
	}
	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		r := NewResponse(OpCode(op))
		if r == nil {
			return
		}
		if err := r.Decode(NewDecoder(body)); err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		b := encode(r)
		require.LessOrEqual(t, len(b), len(body))
		r2 := NewResponse(OpCode(op))
		d := NewDecoder(b)
		require.NoError(t, r2.Decode(d))
		require.NoError(t, d.Finish())
		require.Equal(t, r, r2)
	})
}

// FuzzConnectRequest decodes arbitrary handshakes as both connect records.
func FuzzConnectRequest(f *testing.F) {
	req := ConnectRequest{TimeOut: 30000, SessionID: 0x1234, Passwd: make([]byte, 16)}
	f.Add(encode(&req))
	req.HasReadOnly = true
	f.Add(encode(&req))
	f.Add(encode(&ConnectResponse{TimeOut: 4000, Passwd: make([]byte, 16)}))
	f.Add(encode(&ConnectResponse{TimeOut: 4000, Passwd: make([]byte, 16), HasReadOnly: true}))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range []Record{&ConnectRequest{}, &ConnectResponse{}} {
			d := NewDecoder(data)
			if err := r.Decode(d); err != nil {
				require.ErrorIs(t, err, ErrMalformed)
				continue
			}
			complete := d.Finish() == nil
			b := encode(r)
			if complete {
				require.Len(t, b, len(data))
			}
			r2 := newLike(r)
			d2 := NewDecoder(b)
			require.NoError(t, r2.Decode(d2))
			require.NoError(t, d2.Finish())
			require.Equal(t, r, r2)
		}
	})
}

// FuzzReadFrame reads a stream of frames from arbitrary bytes, whole and
// one byte at a time, and checks each frame and the final error against a
// direct parse of the input.
func FuzzReadFrame(f *testing.F) {
	var e Encoder
	for _, p := range [][]byte{[]byte("abc"), {}, make([]byte, 200)} {
		s := e.BeginFrame()
		e.buf = append(e.buf, p...)
		e.EndFrame(s)
	}
	f.Add(e.Bytes())
	f.Add(frameBytes(0xFFFFFFFF, nil))
	f.Add(frameBytes(1<<31-1, []byte("xx")))
	f.Add(frameBytes(5, []byte("ab")))
	f.Add([]byte("ruok"))

	const max = 1024
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
			rest := data
			var buf []byte
			for {
				got, err := ReadFrame(r, buf, max)
				switch {
				case len(rest) == 0:
					require.Equal(t, io.EOF, err)
				case len(rest) < 4:
					require.Equal(t, io.ErrUnexpectedEOF, err)
				default:
					n := int32(binary.BigEndian.Uint32(rest))
					switch {
					case n < 0 || n > max:
						require.ErrorIs(t, err, ErrFrameTooLarge)
					case int(n) > len(rest)-4:
						require.Equal(t, io.ErrUnexpectedEOF, err)
					default:
						require.NoError(t, err)
						require.Equal(t, rest[4:4+n], got)
						rest = rest[4+n:]
						buf = got
						continue
					}
				}
				require.Nil(t, got)
				require.True(t, err == io.EOF || err == io.ErrUnexpectedEOF || errors.Is(err, ErrFrameTooLarge))
				break
			}
		}
	})
}

// FuzzValidatePath compares ValidatePath with a direct port of ZooKeeper's
// PathUtils.validatePath and checks the path helpers on valid paths.
func FuzzValidatePath(f *testing.F) {
	for _, c := range pathCases {
		if len(c.path) < 1024 {
			f.Add(c.path)
		}
	}
	f.Fuzz(func(t *testing.T, path string) {
		err := ValidatePath(path)
		require.Equal(t, javaValidatePath(path), err == nil, "%q: %v", path, err)
		if err != nil {
			require.ErrorIs(t, err, ErrBadArguments)
			return
		}
		if path == "/" {
			return
		}
		parent := ParentPath(path)
		require.NoError(t, ValidatePath(parent))
		require.Equal(t, path, JoinPath(parent, BaseName(path)))
		require.NoError(t, ValidateSequentialPrefix(path))
		require.NoError(t, ValidateSequentialPrefix(path+"/"))
	})
}
