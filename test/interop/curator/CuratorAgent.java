// CuratorAgent -- Apache Curator 5 driven by test/interop's Go tests.
//
// Usage: java -cp CLASSPATH CuratorAgent HOSTS
//
// One agent is one CuratorFramework (one ZooKeeper session). It reads
// commands from stdin, one a line: "TAG CMD ARGS...", runs each on its own
// thread and answers "TAG ok RESULT..." or "TAG err EXCEPTION". Events
// (connection states, leadership, cache and watcher events) are lines
// "ev WORDS...". Data is UTF-8 text without spaces; "-" is empty data.
// Stdin's end closes the client and exits 0.
//
//   create PATH DATA            create().creatingParentsIfNeeded(): ok PATH
//   protect PATH DATA           ... withProtection() EPHEMERAL_SEQUENTIAL: ok PATH
//   get PATH                    ok DATA VERSION
//   set PATH DATA VERSION       ok NEWVERSION
//   exists PATH                 ok none | ok VERSION NUMCHILDREN EPHEMERAL(0/1)
//   children PATH               ok NAME,NAME... (sorted; "-" if none)
//   delete PATH VERSION         ok
//   rmr PATH                    delete().deletingChildrenIfNeeded(): ok
//   txn OP...                   transaction().forOperations, OP one of
//                               create:P:D delete:P:V set:P:D:V check:P:V;
//                               ok committed TYPE:PATH... | ok failed CODE...
//                               (one error code per op)
//   acl PATH                    getACL: ok SCHEME:ID:PERMS,...
//   config                      getConfig().forEnsemble(): ok DATA (lines
//                               joined with "|", "-" if empty)
//   connstr                     ok the current connection string
//   session                     ok SESSIONID (decimal)
//   hold NAME KIND PATH         acquire KIND (mutex, read, write, sem:N: an
//                               InterProcessSemaphoreV2 lease, dbar:N: enter
//                               a DistributedDoubleBarrier of N, release
//                               leaves) on a thread of its own: ok held
//   release NAME                that thread releases: ok released
//   try KIND PATH               acquire(0): ok acquired (and releases) | ok busy
//   participants KIND PATH      ok NAME,NAME... in Curator's order
//   counter KIND LOCK CTR T N   T threads, each with its own lock, N times:
//                               lock, get CTR, set CTR+1 unversioned: ok done
//   latch NAME PATH ID          LeaderLatch started: ok; ev NAME leader|notleader
//   latchinfo NAME              ok LEADERID HASLEADERSHIP
//   latchclose NAME             ok
//   cache NAME PATH             CuratorCache started: ok; ev NAME create|change|
//                               delete PATH DATA, ev NAME initialized
//   cachedump NAME              ok PATH=DATA,... (sorted; "-" if none)
//   pwatch NAME PATH            recursive PersistentWatcher, ok once registered;
//                               ev NAME TYPE PATH (node events only), and
//                               ev NAME registered whenever Curator (re)adds
//                               the watch
//   close NAME                  close a latch, cache or watcher: ok
//   shared PATH T N             T threads, each its own SharedCount, N times
//                               trySetCount(v+1) until it succeeds: ok done
//   dal PATH T N                the same with DistributedAtomicLong.increment
//
// Connection states are reported as "ev state STATE".

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.recipes.watch.PersistentWatcher;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

public class CuratorAgent {
    static CuratorFramework client;
    static final Map<String, AutoCloseable> closers = new ConcurrentHashMap<>();
    static final Map<String, SynchronousQueue<String>> holders = new ConcurrentHashMap<>();

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static byte[] data(String s) {
        return s.equals("-") ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] b) {
        return b == null || b.length == 0 ? "-" : new String(b, StandardCharsets.UTF_8);
    }

    static String join(Collection<String> items) {
        return items.isEmpty() ? "-" : String.join(",", items);
    }

    // Paths containing "/secure" get CREATOR_ALL_ACL (the agent's digest
    // identity), all others OPEN_ACL_UNSAFE.
    static final ACLProvider acls = new ACLProvider() {
        public List<ACL> getDefaultAcl() {
            return ZooDefs.Ids.OPEN_ACL_UNSAFE;
        }

        public List<ACL> getAclForPath(String path) {
            return path.contains("/secure") ? ZooDefs.Ids.CREATOR_ALL_ACL : ZooDefs.Ids.OPEN_ACL_UNSAFE;
        }
    };

    public static void main(String[] args) throws Exception {
        RetryPolicy retry = new ExponentialBackoffRetry(50, 10, 1000);
        client = CuratorFrameworkFactory.builder()
            .connectString(args[0])
            .sessionTimeoutMs(10000)
            .connectionTimeoutMs(10000)
            .retryPolicy(retry)
            .aclProvider(acls)
            .authorization("digest", "curator:secret".getBytes(StandardCharsets.UTF_8))
            .build();
        client.getConnectionStateListenable().addListener((c, state) -> say("ev state " + state));
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not connected to " + args[0]);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split("\\s+");
            if (w.length < 2) {
                continue;
            }
            Thread t = new Thread(() -> {
                String reply;
                try {
                    String r = run(w);
                    reply = r == null ? null : "ok" + r; // null: answered elsewhere
                } catch (Throwable e) {
                    reply = "err " + e.toString().replace('\n', ' ');
                }
                if (reply != null) {
                    say(w[0] + " " + reply);
                }
            });
            t.setDaemon(true);
            t.start();
        }
        for (AutoCloseable c : closers.values()) {
            c.close();
        }
        client.close();
        System.exit(0);
    }

    // run executes one command and returns the text after "ok".
    static String run(String[] w) throws Exception {
        String cmd = w[1];
        switch (cmd) {
            case "create":
                return " " + client.create().creatingParentsIfNeeded().forPath(w[2], data(w[3]));
            case "protect":
                return " " + client.create().creatingParentsIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(w[2], data(w[3]));
            case "get": {
                Stat st = new Stat();
                byte[] b = client.getData().storingStatIn(st).forPath(w[2]);
                return " " + text(b) + " " + st.getVersion();
            }
            case "set":
                return " " + client.setData().withVersion(Integer.parseInt(w[4])).forPath(w[2], data(w[3])).getVersion();
            case "exists": {
                Stat st = client.checkExists().forPath(w[2]);
                if (st == null) {
                    return " none";
                }
                return " " + st.getVersion() + " " + st.getNumChildren() + " " + (st.getEphemeralOwner() != 0 ? 1 : 0);
            }
            case "children": {
                List<String> kids = new ArrayList<>(client.getChildren().forPath(w[2]));
                Collections.sort(kids);
                return " " + join(kids);
            }
            case "delete":
                client.delete().withVersion(Integer.parseInt(w[3])).forPath(w[2]);
                return "";
            case "rmr":
                client.delete().deletingChildrenIfNeeded().forPath(w[2]);
                return "";
            case "txn":
                return txn(w);
            case "acl": {
                List<String> out = new ArrayList<>();
                for (ACL a : client.getACL().forPath(w[2])) {
                    out.add(a.getId().getScheme() + ":" + a.getId().getId() + ":" + a.getPerms());
                }
                return " " + join(out);
            }
            case "config": {
                String cfg = text(client.getConfig().forEnsemble()).trim();
                return " " + (cfg.isEmpty() ? "-" : cfg.replace("\n", "|"));
            }
            case "connstr":
                return " " + client.getZookeeperClient().getCurrentConnectionString();
            case "session":
                return " " + client.getZookeeperClient().getZooKeeper().getSessionId();
            case "hold":
                hold(w);
                return null;
            case "release": {
                SynchronousQueue<String> q = holders.remove(w[2]);
                if (q == null) {
                    throw new IllegalStateException("no holder " + w[2]);
                }
                q.put(w[0]);
                return null; // the holder answers
            }
            case "try": {
                InterProcessLock m = locker(w[2], w[3]);
                if (!m.acquire(0, TimeUnit.MILLISECONDS)) {
                    return " busy";
                }
                m.release();
                return " acquired";
            }
            case "participants": {
                List<String> out = new ArrayList<>();
                for (String p : lock(w[2], w[3]).getParticipantNodes()) {
                    out.add(ZKPaths.getNodeFromPath(p));
                }
                return " " + join(out);
            }
            case "counter":
                counter(w[2], w[3], w[4], Integer.parseInt(w[5]), Integer.parseInt(w[6]));
                return " done";
            case "latch":
                latch(w[2], w[3], w[4]);
                return "";
            case "latchinfo": {
                LeaderLatch l = (LeaderLatch) closers.get(w[2]);
                return " " + l.getLeader().getId() + " " + l.hasLeadership();
            }
            case "cache":
                cache(w[2], w[3]);
                return "";
            case "cachedump": {
                List<String> out = new ArrayList<>();
                ((CuratorCache) closers.get(w[2])).stream().forEach(d -> out.add(d.getPath() + "=" + text(d.getData())));
                Collections.sort(out);
                return " " + join(out);
            }
            case "pwatch": {
                String name = w[2];
                PersistentWatcher pw = new PersistentWatcher(client, w[3], true);
                pw.getListenable().addListener(e -> {
                    if (e.getType() != Watcher.Event.EventType.None) { // not connection states
                        say("ev " + name + " " + e.getType() + " " + e.getPath());
                    }
                });
                CountDownLatch registered = new CountDownLatch(1);
                pw.getResetListenable().addListener(() -> {
                    say("ev " + name + " registered");
                    registered.countDown();
                });
                closers.put(name, pw);
                pw.start(); // registers the watch in the background
                if (!registered.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("persistent watch on " + w[3] + " not registered");
                }
                return "";
            }
            case "close":
            case "latchclose":
                closers.remove(w[2]).close();
                return "";
            case "shared":
                concurrently(Integer.parseInt(w[3]), () -> shared(w[2], Integer.parseInt(w[4])));
                return " done";
            case "dal":
                concurrently(Integer.parseInt(w[3]), () -> dal(w[2], Integer.parseInt(w[4])));
                return " done";
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    static String txn(String[] w) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        for (int i = 2; i < w.length; i++) {
            String[] f = w[i].split(":");
            switch (f[0]) {
                case "create":
                    ops.add(client.transactionOp().create().forPath(f[1], data(f[2])));
                    break;
                case "delete":
                    ops.add(client.transactionOp().delete().withVersion(Integer.parseInt(f[2])).forPath(f[1]));
                    break;
                case "set":
                    ops.add(client.transactionOp().setData().withVersion(Integer.parseInt(f[3])).forPath(f[1], data(f[2])));
                    break;
                case "check":
                    ops.add(client.transactionOp().check().withVersion(Integer.parseInt(f[2])).forPath(f[1]));
                    break;
                default:
                    throw new IllegalArgumentException("unknown op " + w[i]);
            }
        }
        try {
            StringBuilder sb = new StringBuilder(" committed");
            for (CuratorTransactionResult r : client.transaction().forOperations(ops)) {
                sb.append(' ').append(r.getType()).append(':').append(r.getResultPath() != null ? r.getResultPath() : r.getForPath());
            }
            return sb.toString();
        } catch (KeeperException e) {
            StringBuilder sb = new StringBuilder(" failed " + e.code());
            List<OpResult> results = e.getResults();
            if (results != null) {
                for (OpResult r : results) {
                    sb.append(' ').append(r instanceof OpResult.ErrorResult ? ((OpResult.ErrorResult) r).getErr() : 0);
                }
            }
            return sb.toString();
        }
    }

    static InterProcessMutex lock(String kind, String path) {
        switch (kind) {
            case "mutex":
                return new InterProcessMutex(client, path);
            case "read":
                return new InterProcessReadWriteLock(client, path).readLock();
            case "write":
                return new InterProcessReadWriteLock(client, path).writeLock();
            default:
                throw new IllegalArgumentException("unknown lock kind " + kind);
        }
    }

    // locker returns a lock of kind mutex, read, write or sem:N (an
    // InterProcessSemaphoreV2 of N leases, one taken per acquire).
    static InterProcessLock locker(String kind, String path) {
        if (kind.startsWith("dbar:")) {
            return barrier(path, Integer.parseInt(kind.substring(5)));
        }
        if (!kind.startsWith("sem:")) {
            return lock(kind, path);
        }
        InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, path, Integer.parseInt(kind.substring(4)));
        return new InterProcessLock() {
            Lease lease;

            public void acquire() throws Exception {
                lease = sem.acquire();
            }

            public boolean acquire(long time, TimeUnit unit) throws Exception {
                lease = sem.acquire(time, unit);
                return lease != null;
            }

            public void release() throws Exception {
                lease.close();
                lease = null;
            }

            public boolean isAcquiredInThisProcess() {
                return lease != null;
            }
        };
    }

    // barrier is a DistributedDoubleBarrier of n members: acquire enters,
    // release leaves.
    static InterProcessLock barrier(String path, int n) {
        DistributedDoubleBarrier b = new DistributedDoubleBarrier(client, path, n);
        return new InterProcessLock() {
            boolean in;

            public void acquire() throws Exception {
                in = b.enter(1, TimeUnit.DAYS);
            }

            public boolean acquire(long time, TimeUnit unit) throws Exception {
                return in = b.enter(time, unit);
            }

            public void release() throws Exception {
                if (!b.leave(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("leave timed out");
                }
                in = false;
            }

            public boolean isAcquiredInThisProcess() {
                return in;
            }
        };
    }

    // hold acquires on a thread of its own (Curator's locks are held by a
    // thread), answers, and releases on the same thread when told to.
    static void hold(String[] w) {
        String tag = w[0], name = w[2];
        SynchronousQueue<String> q = new SynchronousQueue<>();
        holders.put(name, q);
        InterProcessLock m = locker(w[3], w[4]);
        try {
            m.acquire();
            say(tag + " ok held");
        } catch (Exception e) {
            holders.remove(name);
            say(tag + " err " + e);
            return;
        }
        String relTag;
        try {
            relTag = q.take();
        } catch (InterruptedException e) {
            return;
        }
        try {
            m.release();
            say(relTag + " ok released");
        } catch (Exception e) {
            say(relTag + " err " + e);
        }
    }

    interface Work {
        void run() throws Exception;
    }

    static void concurrently(int threads, Work work) throws Exception {
        List<Thread> ts = new ArrayList<>();
        List<Exception> errors = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    work.run();
                } catch (Exception e) {
                    errors.add(e);
                }
            });
            ts.add(t);
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        if (!errors.isEmpty()) {
            throw errors.get(0);
        }
    }

    static void counter(String kind, String lockPath, String counterPath, int threads, int n) throws Exception {
        concurrently(threads, () -> {
            InterProcessMutex m = lock(kind, lockPath);
            for (int i = 0; i < n; i++) {
                m.acquire();
                try {
                    String v = text(client.getData().forPath(counterPath));
                    int cur = v.equals("-") ? 0 : Integer.parseInt(v);
                    client.setData().forPath(counterPath, Integer.toString(cur + 1).getBytes(StandardCharsets.UTF_8));
                } finally {
                    m.release();
                }
            }
        });
    }

    static void latch(String name, String path, String id) throws Exception {
        LeaderLatch l = new LeaderLatch(client, path, id);
        l.addListener(new LeaderLatchListener() {
            public void isLeader() {
                say("ev " + name + " leader");
            }

            public void notLeader() {
                say("ev " + name + " notleader");
            }
        });
        closers.put(name, l);
        l.start();
    }

    static void cache(String name, String path) {
        CuratorCache c = CuratorCache.build(client, path);
        c.listenable().addListener(CuratorCacheListener.builder()
            .forCreates(n -> say("ev " + name + " create " + n.getPath() + " " + text(n.getData())))
            .forChanges((o, n) -> say("ev " + name + " change " + n.getPath() + " " + text(n.getData())))
            .forDeletes(o -> say("ev " + name + " delete " + o.getPath() + " " + text(o.getData())))
            .forInitialized(() -> say("ev " + name + " initialized"))
            .build());
        closers.put(name, c);
        c.start();
    }

    static void shared(String path, int n) throws Exception {
        try (SharedCount sc = new SharedCount(client, path, 0)) {
            sc.start();
            for (int i = 0; i < n; ) {
                VersionedValue<Integer> v = sc.getVersionedValue();
                if (sc.trySetCount(v, v.getValue() + 1)) {
                    i++;
                }
            }
        }
    }

    static void dal(String path, int n) throws Exception {
        DistributedAtomicLong d = new DistributedAtomicLong(client, path, new ExponentialBackoffRetry(5, 30, 100));
        for (int i = 0; i < n; ) {
            AtomicValue<Long> v = d.increment();
            if (v.succeeded()) {
                i++;
            }
        }
    }
}
