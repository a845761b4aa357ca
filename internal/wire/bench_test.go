package wire

import (
	"bytes"
	"testing"
)

func BenchmarkEncodeGetDataResponse(b *testing.B) {
	r := &GetDataResponse{Data: bytes.Repeat([]byte("x"), 256), Stat: sampleStat()}
	e := NewEncoder(make([]byte, 0, 1024))
	b.ReportAllocs()
	for b.Loop() {
		e.Reset()
		s := e.BeginFrame()
		(&ReplyHeader{Xid: 1, Zxid: 2}).Encode(e)
		r.Encode(e)
		e.EndFrame(s)
	}
	b.SetBytes(int64(e.Len()))
}

func BenchmarkDecodeCreateRequest(b *testing.B) {
	body := encode(&CreateRequest{Path: "/service/instances/node-0000000001", Data: bytes.Repeat([]byte("d"), 128),
		ACL: OpenACLUnsafe, Flags: ModeEphemeralSequential})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(OpCreate, NewDecoder(body)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeMulti(b *testing.B) {
	body := encode(sampleMultiRequest())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(OpMulti, NewDecoder(body)); err != nil {
			b.Fatal(err)
		}
	}
}
