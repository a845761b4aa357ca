// Package zkimport migrates an Apache ZooKeeper data directory to Paddock.
//
// Import reads ZooKeeper's newest valid snapshot (version-2/snapshot.<zxid>,
// plain or .gz; a snapshot that is incomplete or fails its Adler-32 seal is
// skipped for the next older one, as ZooKeeper does) and replays every
// transaction after the snapshot's zxid from the log.<zxid> files, with the
// semantics of ZooKeeper's own recovery (DataTree.processTxn): a fuzzy
// snapshot's overlapping transactions fail harmlessly, a failed multi
// changes nothing, closeSession deletes the session's ephemerals. A log
// file ends at its zero padding or at a partially written entry; a bad
// checksum or impossible length is an error, as ZooKeeper refuses to load
// such a log, unless it is in the last file and Options.AcceptCorruptTail
// ends the log there. The result is a Paddock fsm state; seed a new data
// dir with it with server.SeedDataDir (the `paddock import-zk` command does
// both). ZooKeeper must be stopped, or its files copied, first.
//
// Kept exactly: every znode's path, data, ACL, ctime, mtime, version,
// cversion (child creates and deletes, as ZooKeeper shows it), the count of
// child creates (sequential names continue where ZooKeeper left off),
// aversion and ephemeralOwner; persistent, sequential, container and TTL
// nodes (TTLs keep counting from their mtime); the sessions in ZooKeeper's
// session table, with their timeouts, and their ephemerals with their
// owners. ZooKeeper's quota nodes under /zookeeper/quota are kept, and
// Paddock applies the quotas they define as ZooKeeper does; the
// zookeeper_stats nodes (ZooKeeper updates them in memory without logging
// the change) are recomputed from the imported tree, as ZooKeeper does
// when it loads a snapshot.
//
// Not kept: /zookeeper/config, which Paddock manages itself (it starts empty,
// or with the cluster's membership); watches and connections (they are not
// in ZooKeeper's files); ephemerals whose session is not in the session
// table, which ZooKeeper deletes when it loads the same files; sessions
// with a negative id (handed out by ZooKeeper servers with myid 128 to 254),
// which Paddock cannot represent: they are dropped with their ephemerals, as
// if expired. Each is listed in Report.Warnings. The tree digest ZooKeeper
// 3.6+ appends to snapshots and log entries is read past, not checked.
//
// Zxids are re-based. Paddock's zxid is the Raft log index, so ZooKeeper's
// epoch<<32|counter values cannot be kept. The importer collects every
// distinct positive zxid among the imported nodes' czxid, mzxid and pzxid
// together with ZooKeeper's last zxid, sorts them, and replaces each by its
// rank: the smallest becomes 1, the next 2, and so on; 0 (the built-in
// nodes) stays 0. ZooKeeper's last zxid is the largest, so the imported
// state's zxid — the index of the Raft snapshot that seeds the data dir — is
// the number of distinct values (at least 1). The mapping preserves order
// and equality: for any two zxids a, b of the tree, a < b in ZooKeeper if
// and only if their images are in that order in Paddock, and every write
// after the import gets a higher zxid than any imported one.
//
// Clients start over. A session's password is derived from its id in
// ZooKeeper and from a cluster secret in Paddock, so no client can resume a
// ZooKeeper session; and a client that has seen a ZooKeeper zxid is refused
// by Paddock as being ahead of it. Restart clients (new ZooKeeper handles)
// after the switch. The imported sessions then expire one session timeout
// after Paddock starts, deleting their ephemerals exactly as ZooKeeper would
// have when those clients went away.
//
// The parsers read untrusted files: every length is checked against a limit
// (Options.MaxField) and its bytes are read in bounded chunks, so a length
// the file does not back fails without being allocated; any malformed input
// is an error wrapping ErrFormat, never a panic.
package zkimport
