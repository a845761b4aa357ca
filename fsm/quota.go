package fsm

import (
	"strconv"
	"strings"

	"github.com/paddockzk/paddock/internal/wire"
)

// Quotas, as ZooKeeper's DataTree and StatsTrack: a node
// /zookeeper/quota/<path>/zookeeper_limits holds "count=N,bytes=M" (soft)
// and optionally "countHardLimit=N,byteHardLimit=M"; the server keeps
// /zookeeper/quota/<path>/zookeeper_stats at "count=C,bytes=B" for the
// subtree under <path> (C counts <path> and its descendants, B their data
// bytes). Soft limits are reported for logging; hard limits refuse writes
// with QuotaExceeded when the command asks for enforcement.
const (
	quotaLimitNode = "zookeeper_limits"
	quotaStatNode  = "zookeeper_stats"
)

// quotaTrack is one parsed limits or stats record; -1 means unset.
type quotaTrack struct {
	count, bytes, countHard, bytesHard int64
}

// parseQuota reads a limits or stats record (unset fields are -1).
// Fields are separated by runs of ',' and ';', and a field's key and value
// are its first two '='-separated parts, as ZooKeeper's StatsTrack reads
// them: zkCli 3.8 writes "count=5,bytes=-1=;byteHardLimit=100;
// countHardLimit=1". A field that does not parse is skipped.
func parseQuota(data []byte) quotaTrack {
	q := quotaTrack{-1, -1, -1, -1}
	for _, kv := range strings.FieldsFunc(string(data), func(r rune) bool { return r == ',' || r == ';' }) {
		parts := strings.Split(strings.TrimSpace(kv), "=")
		if len(parts) < 2 {
			continue
		}
		k := parts[0]
		n, err := strconv.ParseInt(strings.TrimSpace(parts[1]), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "count":
			q.count = n
		case "bytes":
			q.bytes = n
		case "countHardLimit":
			q.countHard = n
		case "byteHardLimit":
			q.bytesHard = n
		}
	}
	return q
}

func statsData(count, bytes int64) []byte {
	return []byte("count=" + strconv.FormatInt(count, 10) + ",bytes=" + strconv.FormatInt(bytes, 10))
}

// quotaTarget returns the quota'd path a limits/stats node belongs to, or
// "" for any other node.
func quotaTarget(path, leaf string) string {
	rest, ok := strings.CutPrefix(path, QuotaPath)
	if !ok || !strings.HasSuffix(rest, "/"+leaf) {
		return ""
	}
	target := strings.TrimSuffix(rest, "/"+leaf)
	if target == "" {
		return "/"
	}
	return target
}

// quotaFor returns the deepest path at or above p that has a quota.
func (f *FSM) quotaFor(p string) (string, bool) {
	if len(f.quotas) == 0 || strings.HasPrefix(p, ZooKeeperPath+"/") || p == ZooKeeperPath {
		return "", false
	}
	for {
		if _, ok := f.quotas[p]; ok {
			return p, true
		}
		if p == RootPath {
			return "", false
		}
		p = wire.ParentPath(p)
	}
}

// quotaCheck returns QuotaExceeded if adding count nodes and bytes data
// under p would pass a hard limit (when enforce is set), and records a
// soft-limit warning in r otherwise.
func (f *FSM) quotaCheck(p string, count, bytes int64, enforce bool, r *Result) wire.Code {
	q, ok := f.quotaFor(p)
	if !ok {
		return wire.OK
	}
	lim := f.quotas[q]
	st := f.quotaStats(q)
	newCount, newBytes := st.count+count, st.bytes+bytes
	if enforce && ((lim.countHard >= 0 && count > 0 && newCount > lim.countHard) ||
		(lim.bytesHard >= 0 && bytes > 0 && newBytes > lim.bytesHard)) {
		return wire.ErrQuotaExceeded
	}
	if (lim.count >= 0 && count > 0 && newCount > lim.count) || (lim.bytes >= 0 && bytes > 0 && newBytes > lim.bytes) {
		r.QuotaWarnings = append(r.QuotaWarnings, q)
	}
	return wire.OK
}

func (f *FSM) quotaStats(q string) quotaTrack {
	if n := f.node(wire.JoinPath(QuotaPath+q, quotaStatNode)); n != nil {
		return parseQuota(n.data())
	}
	if q == RootPath {
		if n := f.node(QuotaPath + "/" + quotaStatNode); n != nil {
			return parseQuota(n.data())
		}
	}
	return quotaTrack{}
}

// quotaUpdate adds count nodes and bytes to the stats of p's quota.
func (f *FSM) quotaUpdate(p string, count, bytes int64) {
	q, ok := f.quotaFor(p)
	if !ok {
		return
	}
	statPath := statNodePath(q)
	id, ok := f.lookup(statPath)
	if !ok {
		return
	}
	st := parseQuota(f.chunks.at(id).data())
	n := f.mut(id)
	f.setData(n, statsData(st.count+count, st.bytes+bytes))
}

func statNodePath(q string) string {
	if q == RootPath {
		return QuotaPath + "/" + quotaStatNode
	}
	return QuotaPath + q + "/" + quotaStatNode
}

// quotaNodeChanged keeps the quota table in step when a limits or stats
// node is created, changed or deleted (ZooKeeper's pTrie and
// updateQuotaForPath): a new stats node is filled with the subtree's
// current count and bytes.
func (f *FSM) quotaNodeChanged(path string, deleted bool) {
	if q := quotaTarget(path, quotaLimitNode); q != "" {
		if deleted {
			f.setQuota(q, nil)
		} else {
			lim := parseQuota(f.node(path).data())
			f.setQuota(q, &lim)
		}
		return
	}
	if q := quotaTarget(path, quotaStatNode); q != "" && !deleted {
		count, bytes := f.subtreeSize(q)
		n := f.mutable(path)
		f.setData(n, statsData(count, bytes))
	}
}

func (f *FSM) setQuota(q string, lim *quotaTrack) {
	old, had := f.quotas[q]
	if lim == nil {
		delete(f.quotas, q)
	} else {
		f.quotas[q] = *lim
	}
	if f.undo != nil {
		f.record(func() {
			if had {
				f.quotas[q] = old
			} else {
				delete(f.quotas, q)
			}
		})
	}
}

// subtreeSize counts p and its descendants and their data bytes.
func (f *FSM) subtreeSize(p string) (count, bytes int64) {
	id, ok := f.lookup(p)
	if !ok {
		return 0, 0
	}
	f.chunks.subtree(id, func(n *node) {
		count++
		bytes += int64(n.dataLen())
	})
	return count, bytes
}

// rebuildQuotas re-reads every limits node (after a snapshot restore).
func (f *FSM) rebuildQuotas() {
	f.quotas = make(map[string]quotaTrack)
	// Limits nodes live under /zookeeper/quota: walk only that subtree.
	id, ok := f.lookup(QuotaPath)
	if !ok {
		return
	}
	f.chunks.walkFrom(id, QuotaPath, func(p string, _ uint32, n *node) {
		if q := quotaTarget(p, quotaLimitNode); q != "" {
			f.quotas[q] = parseQuota(n.data())
		}
	})
}
