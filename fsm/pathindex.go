package fsm

import "hash/maphash"

// pathIndex finds a node's id from its path. It stores no paths: each slot
// is one uint64, the top 32 bits of the path's hash (the fragment) and the
// node id + 1 (0 marks an empty slot), in an open-addressed table with
// linear probing, so it costs ~12 bytes per node and holds no pointers for
// the collector to scan. A fragment match is only a candidate: the caller
// confirms it against the tree (tree.pathIs), so colliding hashes cost a
// comparison, never a wrong answer.
//
// The hash seed is random per index, like a Go map's, so that nobody can
// choose paths that collide; it decides where entries sit, never what a
// lookup returns.
type pathIndex struct {
	seed  maphash.Seed
	slots []uint64
	n     int
}

const (
	// indexMinSlots is the table's initial size (a power of two).
	indexMinSlots = 64
	// indexMaxLoad is the fill, in quarters, past which the table doubles:
	// 3/4 keeps probe sequences short with linear probing.
	indexMaxLoad = 3
)

func newPathIndex() pathIndex {
	return pathIndex{seed: maphash.MakeSeed(), slots: make([]uint64, indexMinSlots)}
}

// fragment is the part of path's hash the index stores.
func (x *pathIndex) fragment(path string) uint32 {
	return uint32(maphash.String(x.seed, path) >> 32)
}

// find returns the id of the entry with fragment frag for which match is
// true.
func (x *pathIndex) find(frag uint32, match func(id uint32) bool) (uint32, bool) {
	mask := uint32(len(x.slots) - 1)
	for i := frag & mask; ; i = (i + 1) & mask {
		e := x.slots[i]
		if e == 0 {
			return 0, false
		}
		if uint32(e>>32) == frag && match(uint32(e)-1) {
			return uint32(e) - 1, true
		}
	}
}

// insert adds (frag, id); the caller has checked that the path is absent.
func (x *pathIndex) insert(frag, id uint32) {
	if (x.n+1)*4 > len(x.slots)*indexMaxLoad {
		x.grow()
	}
	x.put(uint64(frag)<<32 | uint64(id+1))
	x.n++
}

func (x *pathIndex) put(e uint64) {
	mask := uint32(len(x.slots) - 1)
	i := uint32(e>>32) & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = e
}

func (x *pathIndex) grow() {
	old := x.slots
	x.slots = make([]uint64, 2*len(old))
	for _, e := range old {
		if e != 0 {
			x.put(e)
		}
	}
}

// remove deletes (frag, id), shifting later entries of the probe run back
// so that no tombstones are needed.
func (x *pathIndex) remove(frag, id uint32) {
	mask := uint32(len(x.slots) - 1)
	want := uint64(frag)<<32 | uint64(id+1)
	i := frag & mask
	for x.slots[i] != want {
		if x.slots[i] == 0 {
			return
		}
		i = (i + 1) & mask
	}
	x.n--
	for {
		x.slots[i] = 0
		j := i
		for {
			j = (j + 1) & mask
			e := x.slots[j]
			if e == 0 {
				return
			}
			// An entry whose home slot k lies cyclically in (i, j] is
			// still reachable; any other must move into the hole at i.
			k := uint32(e>>32) & mask
			if !cyclicBetween(i, k, j) {
				x.slots[i] = e
				i = j
				break
			}
		}
	}
}

// cyclicBetween reports whether k lies in the cyclic interval (i, j].
func cyclicBetween(i, k, j uint32) bool {
	if i <= j {
		return i < k && k <= j
	}
	return i < k || k <= j
}
