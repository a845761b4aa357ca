package herd

import (
	"encoding/binary"
	"slices"
	"testing"
)

func frame(xid int32, body int) []byte {
	b := make([]byte, 8+body)
	binary.BigEndian.PutUint32(b, uint32(4+body))
	binary.BigEndian.PutUint32(b[4:], uint32(xid))
	return b
}

// The scanner finds every frame's xid however the stream is cut.
func TestFrameScanner(t *testing.T) {
	var stream []byte
	stream = append(stream, frame(0, 40)...) // handshake
	want := []int32{0}
	for i, x := range []int32{-1, 5, -2, -1, 7, -8, -1} {
		stream = append(stream, frame(x, i*3)...)
		want = append(want, x)
	}
	for _, chunk := range []int{1, 2, 3, 5, 7, 64, len(stream)} {
		var got []int32
		var firsts int
		s := frameScanner{onFrame: func(first bool, xid int32) {
			if first {
				firsts++
			}
			got = append(got, xid)
		}}
		for i := 0; i < len(stream); i += chunk {
			s.feed(stream[i:min(i+chunk, len(stream))])
		}
		if !slices.Equal(got, want) || firsts != 1 {
			t.Errorf("chunks of %d: xids %v (%d first), want %v", chunk, got, firsts, want)
		}
	}
	s := frameScanner{onFrame: func(bool, int32) { t.Error("frame after garbage") }}
	s.feed([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	if !s.broken {
		t.Error("a 1-byte frame did not stop the scanner")
	}
}

func TestParseRecipes(t *testing.T) {
	got, err := ParseRecipes("election,mutex-fair")
	if err != nil || !slices.Equal(got, []Recipe{MutexFair, ElectionUnfair, ElectionFair}) {
		t.Errorf("ParseRecipes = %v, %v", got, err)
	}
	if got, err := ParseRecipes("all"); err != nil || !slices.Equal(got, AllRecipes) {
		t.Errorf("all = %v, %v", got, err)
	}
	if _, err := ParseRecipes("mutex-fast"); err == nil {
		t.Error("no error for an unknown recipe")
	}
	if ks, err := ParseContenders("10, 50,100"); err != nil || !slices.Equal(ks, []int{10, 50, 100}) {
		t.Errorf("ParseContenders = %v, %v", ks, err)
	}
}

func TestConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if w := c.writers(10); w != 5 {
		t.Errorf("writers(10) at 50%% readers = %d", w)
	}
	c.Readers = 0.8
	if w := c.writers(10); w != 2 {
		t.Errorf("writers(10) at 80%% readers = %d", w)
	}
	if w := c.writers(2); w != 1 {
		t.Errorf("writers(2) = %d, want at least 1", w)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.Contenders = []int{1} },
		func(c *Config) { c.Readers = 1 },
		func(c *Config) { c.Mode = "threads" },
		func(c *Config) { c.Root = "/" },
		func(c *Config) { c.Handoffs = 0 },
	} {
		c := DefaultConfig()
		bad(&c)
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
	c.Mode = Goroutines
	if c.connections(100) != 4 || c.connections(2) != 2 || c.kills() {
		t.Error("goroutines mode: wrong connections or kills")
	}
}

// A report whose runs all failed still gets its (empty) charts.
func TestChartsWithoutData(t *testing.T) {
	rep := &Report{Server: "nowhere", Results: []Result{{Recipe: MutexFair, Contenders: 10, Errors: 1}}}
	files, err := rep.WriteFiles(t.TempDir())
	if err != nil || len(files) != 6 {
		t.Fatalf("WriteFiles = %v, %v", files, err)
	}
}
