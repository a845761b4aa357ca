#!/usr/bin/env python3
"""kazoo_smoke.py HOST:PORT[,HOST:PORT...] -- kazoo compatibility smoke test.

Exercises a ZooKeeper-compatible server with the kazoo Python client: plain
CRUD, multi transactions, watches and kazoo's recipes (Lock, ReadLock /
WriteLock, Election, Counter, Barrier, DoubleBarrier, Semaphore, Party).

Every check runs independently (in its own thread, with its own clients, under
its own subtree of a unique root /kazoo-smoke-<uuid>) and is bounded in time,
so one failing or hanging check does not stop the others (only if `connect`
cannot reach the server at all are the rest reported as not run). Output: one line
per check, `PASS name` or `FAIL name: reason`, then `N passed, M failed`.
Exit status: 0 if all passed, 1 if any failed, 2 if kazoo is not importable,
64 on bad usage.

Environment:
  KAZOO_SMOKE_CHECK_TIMEOUT  seconds allowed per check (default 60)
  KAZOO_SMOKE_ONLY           comma-separated check names to run (default all)
  KAZOO_SMOKE_VERBOSE=1      show kazoo's log and tracebacks of failures

Requires kazoo (Debian: apt-get install -y python3-kazoo; elsewhere: pip
install kazoo). Debian's package is only visible to /usr/bin/python3; if the
python3 running this script cannot import kazoo but /usr/bin/python3 can, the
script re-executes itself with /usr/bin/python3.
"""

import os
import subprocess
import sys


def _import_kazoo_or_exit():
    try:
        import kazoo  # noqa: F401
        return
    except ImportError:
        pass
    system_python = "/usr/bin/python3"
    if (
        os.environ.get("KAZOO_SMOKE_REEXEC") != "1"
        and os.access(system_python, os.X_OK)
        and os.path.realpath(system_python) != os.path.realpath(sys.executable)
    ):
        probe = subprocess.run(
            [system_python, "-c", "import kazoo"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if probe.returncode == 0:
            os.environ["KAZOO_SMOKE_REEXEC"] = "1"
            sys.stdout.flush()
            os.execv(system_python, [system_python] + sys.argv)
    print(
        "kazoo_smoke: the kazoo Python package is not importable by %s "
        "(Debian: apt-get install -y python3-kazoo, then run with /usr/bin/python3; "
        "or: pip install kazoo)" % sys.executable,
        file=sys.stderr,
    )
    sys.exit(2)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1] or sys.argv[1].startswith("-"):
        print("usage: %s HOST:PORT[,HOST:PORT...]" % sys.argv[0], file=sys.stderr)
        sys.exit(64)
    _import_kazoo_or_exit()

import logging  # noqa: E402
import struct  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import uuid  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import (  # noqa: E402
    BadVersionError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    RuntimeInconsistency,
)
from kazoo.protocol.states import EventType  # noqa: E402

WAIT = 10.0  # bound for every individual wait
CHECK_TIMEOUT = float(os.environ.get("KAZOO_SMOKE_CHECK_TIMEOUT", "60"))
VERBOSE = os.environ.get("KAZOO_SMOKE_VERBOSE") == "1"


class CheckFailed(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise CheckFailed(msg)


def eq(got, want, what):
    if got != want:
        raise CheckFailed("%s: got %r, want %r" % (what, got, want))


def wait_for(fn, what, timeout=WAIT, interval=0.02):
    """Poll fn() until it returns a truthy value; return that value."""
    deadline = time.monotonic() + timeout
    last_exc = None
    while True:
        try:
            v = fn()
            if v:
                return v
        except (NoNodeError, CheckFailed) as e:
            last_exc = e
        if time.monotonic() >= deadline:
            extra = " (last error: %r)" % (last_exc,) if last_exc else ""
            raise CheckFailed("timed out after %.0fs waiting for %s%s" % (timeout, what, extra))
        time.sleep(interval)


def stays(fn, what, duration=0.5, interval=0.02):
    """Assert fn() stays truthy for `duration` seconds."""
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        expect(fn(), "%s stopped holding" % what)
        time.sleep(interval)


class Bg(object):
    """Run fn in a daemon thread, remembering its result or exception."""

    def __init__(self, fn, *args, **kwargs):
        self.result = None
        self.exc = None
        self.done = threading.Event()

        def run():
            try:
                self.result = fn(*args, **kwargs)
            except BaseException as e:  # noqa: B902
                self.exc = e
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def wait(self, what, timeout=WAIT):
        if not self.done.wait(timeout):
            raise CheckFailed("timed out after %.0fs waiting for %s" % (timeout, what))
        if self.exc is not None:
            raise CheckFailed("%s raised %r" % (what, self.exc))
        return self.result


class Ctx(object):
    """Per-check context: clients and a private subtree."""

    def __init__(self, hosts, base):
        self.hosts = hosts
        self.base = base
        self.clients = []

    def client(self):
        c = KazooClient(
            hosts=self.hosts,
            timeout=10.0,
            connection_retry=dict(max_tries=-1, delay=0.1, backoff=1.5, max_delay=1.0),
            command_retry=dict(max_tries=-1, delay=0.01, backoff=1.5, max_delay=0.25, deadline=WAIT),
        )
        self.clients.append(c)
        c.start(timeout=WAIT)
        return c

    def path(self, *parts):
        return "/".join((self.base,) + parts)

    def close(self):
        for c in self.clients:
            try:
                c.stop()
                c.close()
            except Exception:
                pass


CHECKS = []


def check(name):
    def register(fn):
        CHECKS.append((name, fn))
        return fn

    return register


# --------------------------------------------------------------------------
# Basic operations


@check("connect")
def check_connect(ctx):
    c = ctx.client()
    expect(c.connected, "client not connected after start()")
    session_id, passwd = c.client_id
    expect(session_id != 0, "session id is 0")
    eq(len(passwd), 16, "session password length")
    expect(c.exists("/") is not None, "exists('/') returned None")
    c.ensure_path(ctx.base)
    expect(c.exists(ctx.base) is not None, "root of this run not created")


@check("crud")
def check_crud(ctx):
    c = ctx.client()
    now = time.time()
    deep = ctx.path("a", "b", "c")
    c.ensure_path(deep)
    expect(c.exists(deep) is not None, "ensure_path did not create %s" % deep)
    expect(c.ensure_path(deep) is True or c.exists(deep), "ensure_path on existing path failed")

    p = ctx.path("node")
    eq(c.create(p, b"v1"), p, "create() return value")
    data, st = c.get(p)
    eq(data, b"v1", "data after create")
    eq(st.version, 0, "version after create")
    eq(st.cversion, 0, "cversion after create")
    eq(st.aversion, 0, "aversion after create")
    eq(st.dataLength, 2, "dataLength")
    eq(st.numChildren, 0, "numChildren of new node")
    eq(st.ephemeralOwner, 0, "ephemeralOwner of persistent node")
    expect(st.czxid > 0, "czxid %d not > 0" % st.czxid)
    eq(st.mzxid, st.czxid, "mzxid of new node")
    eq(st.pzxid, st.czxid, "pzxid of new node")
    eq(st.mtime, st.ctime, "mtime of new node")
    expect(abs(st.ctime / 1000.0 - now) < 300, "ctime %d far from now" % st.ctime)

    st2 = c.set(p, b"v2")
    eq(st2.version, 1, "version after set")
    expect(st2.mzxid > st.mzxid, "mzxid did not grow on set")
    eq(st2.czxid, st.czxid, "czxid changed on set")
    expect(st2.mtime >= st.ctime, "mtime < ctime")
    eq(c.get(p)[0], b"v2", "data after set")
    try:
        c.set(p, b"v3", version=0)
        raise CheckFailed("set with stale version succeeded")
    except BadVersionError:
        pass
    eq(c.set(p, b"v3", version=1).version, 2, "version after versioned set")
    eq(c.set(p, b"").dataLength, 0, "dataLength of empty data")

    try:
        c.create(p, b"dup")
        raise CheckFailed("create of an existing node succeeded")
    except NodeExistsError:
        pass
    try:
        c.create(ctx.path("missing", "child"))
        raise CheckFailed("create without parent succeeded")
    except NoNodeError:
        pass
    eq(c.create(ctx.path("mp", "x", "y"), b"z", makepath=True), ctx.path("mp", "x", "y"), "create makepath")

    for kid in ("k2", "k1", "k3"):
        c.create(p + "/" + kid, kid.encode())
    eq(sorted(c.get_children(p)), ["k1", "k2", "k3"], "get_children")
    kids, pst = c.get_children(p, include_data=True)
    eq(pst.numChildren, 3, "numChildren")
    eq(pst.cversion, 3, "cversion after 3 child creates")
    eq(c.exists(p).numChildren, 3, "exists().numChildren")
    expect(c.exists(ctx.path("nope")) is None, "exists() of missing node is not None")
    try:
        c.get(ctx.path("nope"))
        raise CheckFailed("get of missing node succeeded")
    except NoNodeError:
        pass

    try:
        c.delete(p)
        raise CheckFailed("delete of non-empty node succeeded")
    except NotEmptyError:
        pass
    try:
        c.delete(p + "/k1", version=5)
        raise CheckFailed("delete with wrong version succeeded")
    except BadVersionError:
        pass
    c.delete(p + "/k1", version=0)
    pst = c.exists(p)
    eq(pst.numChildren, 2, "numChildren after delete")
    eq(pst.cversion, 4, "cversion after child delete")
    c.delete(p, recursive=True)
    expect(c.exists(p) is None, "node still exists after recursive delete")
    try:
        c.delete(p)
        raise CheckFailed("delete of missing node succeeded")
    except NoNodeError:
        pass


@check("sequence")
def check_sequence(ctx):
    c = ctx.client()
    parent = ctx.path("seq")
    c.ensure_path(parent)
    made = [c.create(parent + "/n-", b"", sequence=True) for _ in range(3)]
    eq(made, [parent + "/n-%010d" % i for i in range(3)], "sequential names")
    # The suffix comes from the parent's cversion, so plain creates count too.
    c.create(parent + "/plain")
    eq(c.create(parent + "/n-", sequence=True), parent + "/n-0000000004", "after a plain create")
    # Deletes bump Stat.cversion, but Apache ZooKeeper 3.8 hands out 0000000005
    # here (not 6): only require a fresh, larger, 10-digit suffix.
    c.delete(parent + "/plain")
    last = c.create(parent + "/", sequence=True)
    suffix = last[len(parent) + 1:]
    expect(len(suffix) == 10 and suffix.isdigit() and int(suffix) > 4,
           "sequential name after a delete, empty prefix: %r" % last)
    eq(sorted(c.get_children(parent)),
       sorted([suffix, "n-0000000000", "n-0000000001", "n-0000000002", "n-0000000004"]),
       "children")


@check("ephemeral")
def check_ephemeral(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    c1.ensure_path(ctx.base)
    p = ctx.path("eph")
    c1.create(p, b"e", ephemeral=True)
    st = c1.exists(p)
    eq(st.ephemeralOwner, c1.client_id[0], "ephemeralOwner vs client session id")
    expect(st.ephemeralOwner != c2.client_id[0], "sessions of two clients are equal")
    st2 = wait_for(lambda: c2.exists(p), "the other client to see the ephemeral")
    eq(st2.ephemeralOwner, c1.client_id[0], "ephemeralOwner seen by another client")
    try:
        c1.create(p + "/child")
        raise CheckFailed("created a child of an ephemeral node")
    except NoChildrenForEphemeralsError:
        pass
    sp = c1.create(ctx.path("es-"), ephemeral=True, sequence=True)
    expect(sp.startswith(ctx.path("es-")) and len(sp) == len(ctx.path("es-")) + 10,
           "ephemeral sequential name %r" % sp)
    eq(c1.exists(sp).ephemeralOwner, c1.client_id[0], "ephemeralOwner of ephemeral sequential")
    c1.stop()
    wait_for(lambda: c2.exists(p) is None and c2.exists(sp) is None,
             "ephemerals to vanish after their session closed")


@check("acl-digest")
def check_acl_digest(ctx):
    from kazoo.exceptions import NoAuthError
    from kazoo.security import make_digest_acl, make_acl
    owner = ctx.client()
    owner.ensure_path(ctx.base)
    owner.add_auth("digest", "alice:secret")
    p = ctx.path("private")
    owner.create(p, b"s", acl=[make_digest_acl("alice", "secret", all=True),
                               make_acl("world", "anyone", read=True)])
    acls, _ = owner.get_acls(p)
    eq(len(acls), 2, "ACL entries")
    other = ctx.client()
    data, _ = other.get(p)
    eq(data, b"s", "world-readable data")
    try:
        other.set(p, b"x")
        raise CheckFailed("an unauthenticated client wrote a digest-protected node")
    except NoAuthError:
        pass
    owner.set(p, b"by alice")
    other.add_auth("digest", "alice:secret")
    other.set(p, b"now allowed")
    eq(owner.get(p)[0], b"now allowed", "data after an authenticated write")


@check("transaction-commit")
def check_transaction_commit(ctx):
    c = ctx.client()
    c.ensure_path(ctx.base)
    x, y, z = ctx.path("x"), ctx.path("y"), ctx.path("z")
    c.create(x, b"old")
    c.create(y)
    c.create(z)
    t = c.transaction()
    t.create(ctx.path("a"), b"1")
    t.create(ctx.path("a", "b"), b"2")
    t.set_data(x, b"new", version=0)
    t.check(y, 0)
    t.delete(z)
    res = t.commit()
    eq(len(res), 5, "number of results")
    eq(res[0], ctx.path("a"), "result of create")
    eq(res[1], ctx.path("a", "b"), "result of nested create")
    expect(getattr(res[2], "version", None) == 1, "result of set_data: %r" % (res[2],))
    eq(res[3], True, "result of check")
    eq(res[4], True, "result of delete")
    eq(c.get(ctx.path("a", "b"))[0], b"2", "data created in transaction")
    eq(c.get(x)[0], b"new", "data set in transaction")
    expect(c.exists(z) is None, "node deleted in transaction still exists")
    # All ops of one multi share a zxid.
    eq(c.exists(ctx.path("a")).czxid, c.exists(x).mzxid, "zxid of ops in one transaction")

    with c.transaction() as t2:
        t2.create(ctx.path("ctx-mgr"))
    expect(c.exists(ctx.path("ctx-mgr")) is not None, "transaction as context manager")


@check("transaction-rollback")
def check_transaction_rollback(ctx):
    c = ctx.client()
    c.ensure_path(ctx.base)
    x = ctx.path("x")
    c.create(x, b"keep")
    before = c.exists(x)
    t = c.transaction()
    t.create(ctx.path("new1"), b"1")
    t.set_data(x, b"changed")
    t.check(x, 99)  # fails
    t.create(ctx.path("new2"))
    res = t.commit()
    eq(len(res), 4, "number of results")
    eq([type(r) for r in res],
       [RolledBackError, RolledBackError, BadVersionError, RuntimeInconsistency],
       "result types of a failed transaction")
    expect(c.exists(ctx.path("new1")) is None, "create before the failing op was applied")
    expect(c.exists(ctx.path("new2")) is None, "create after the failing op was applied")
    data, st = c.get(x)
    eq(data, b"keep", "data set in failed transaction")
    eq(st.version, before.version, "version after failed transaction")

    t = c.transaction()
    t.create(ctx.path("new3"))
    t.create(x)  # exists
    res = t.commit()
    eq([type(r) for r in res], [RolledBackError, NodeExistsError], "create-existing in transaction")
    expect(c.exists(ctx.path("new3")) is None, "first create of failed transaction was applied")


# --------------------------------------------------------------------------
# Watches


@check("data-watch")
def check_data_watch(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    c1.ensure_path(ctx.base)
    p = ctx.path("dw")
    c1.create(p, b"a")
    seen = []

    @c1.DataWatch(p)
    def _watch(data, stat):
        seen.append((data, stat.version if stat else None))

    wait_for(lambda: seen and seen[-1] == (b"a", 0), "initial DataWatch call")
    c2.set(p, b"b")
    wait_for(lambda: seen[-1] == (b"b", 1), "DataWatch after set (seen %r)" % seen)
    c2.delete(p)
    wait_for(lambda: seen[-1] == (None, None), "DataWatch after delete (seen %r)" % seen)
    c2.create(p, b"c")
    wait_for(lambda: seen[-1] == (b"c", 0), "DataWatch after re-create (seen %r)" % seen)


@check("children-watch")
def check_children_watch(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("cw")
    c1.ensure_path(p)
    seen = []

    @c1.ChildrenWatch(p)
    def _watch(children):
        seen.append(sorted(children))

    wait_for(lambda: seen and seen[-1] == [], "initial ChildrenWatch call")
    c2.create(p + "/x")
    wait_for(lambda: seen[-1] == ["x"], "ChildrenWatch after create (seen %r)" % seen)
    c2.create(p + "/y", ephemeral=True)
    wait_for(lambda: seen[-1] == ["x", "y"], "ChildrenWatch after 2nd create (seen %r)" % seen)
    c2.delete(p + "/x")
    wait_for(lambda: seen[-1] == ["y"], "ChildrenWatch after delete (seen %r)" % seen)
    c2.stop()
    wait_for(lambda: seen[-1] == [], "ChildrenWatch after ephemeral owner left (seen %r)" % seen)


@check("one-shot-watch")
def check_one_shot_watch(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    c1.ensure_path(ctx.base)
    p = ctx.path("w")
    c1.create(p, b"0")

    got = []
    c1.get(p, watch=got.append)
    c2.set(p, b"1")
    wait_for(lambda: got, "get() watch to fire")
    eq(got[0].type, EventType.CHANGED, "event type")
    eq(got[0].path, p, "event path")
    c2.set(p, b"2")
    # Once c1 reads the new data, any notification for it has been delivered.
    wait_for(lambda: c1.get(p)[0] == b"2", "c1 to see the second set")
    time.sleep(0.3)
    eq(len(got), 1, "number of events from one get() watch")

    q = ctx.path("q")
    created, deleted, child = [], [], []
    expect(c1.exists(q, watch=created.append) is None, "q exists before creation")
    c2.create(q)
    wait_for(lambda: created, "exists() watch to fire on create")
    eq(created[0].type, EventType.CREATED, "exists watch event type")
    c1.get_children(q, watch=child.append)
    c1.get(q, watch=deleted.append)
    c2.create(q + "/kid")
    wait_for(lambda: child, "get_children() watch to fire")
    eq(child[0].type, EventType.CHILD, "get_children watch event type")
    c2.delete(q + "/kid")
    c2.delete(q)
    wait_for(lambda: deleted, "get() watch to fire on delete")
    eq(deleted[0].type, EventType.DELETED, "get watch event type on delete")
    time.sleep(0.3)
    eq((len(created), len(child), len(deleted)), (1, 1, 1), "events per one-shot watch")


# --------------------------------------------------------------------------
# Recipes


@check("lock")
def check_lock(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("lock")
    l1 = c1.Lock(p, "c1")
    l2 = c2.Lock(p, "c2")
    expect(l1.acquire(timeout=WAIT), "first client could not acquire the lock")
    expect(not l2.acquire(blocking=False), "non-blocking acquire succeeded while lock held")
    l2 = c2.Lock(p, "c2")
    bg = Bg(l2.acquire, timeout=WAIT)
    wait_for(lambda: l1.contenders() == ["c1", "c2"], "contenders [c1, c2]")
    stays(lambda: not bg.done.is_set(), "second client blocked while lock held")
    l1.release()
    expect(bg.wait("second client to acquire after release"), "second acquire returned False")
    eq(l2.contenders(), ["c2"], "contenders after release")
    l2.release()

    # Mutual exclusion under contention.
    state = {"inside": 0, "max": 0, "count": 0}
    mu = threading.Lock()

    def worker(client, ident):
        for _ in range(5):
            lk = client.Lock(p, ident)
            if not lk.acquire(timeout=WAIT):
                raise CheckFailed("%s: acquire returned False" % ident)
            with mu:
                state["inside"] += 1
                state["max"] = max(state["max"], state["inside"])
            time.sleep(0.02)
            with mu:
                state["inside"] -= 1
                state["count"] += 1
            lk.release()

    b1 = Bg(worker, c1, "w1")
    b2 = Bg(worker, c2, "w2")
    b1.wait("worker 1", timeout=3 * WAIT)
    b2.wait("worker 2", timeout=3 * WAIT)
    eq(state["count"], 10, "critical sections run")
    eq(state["max"], 1, "max holders at once")


@check("rwlock")
def check_rwlock(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("rw")
    r1 = c1.ReadLock(p, "r1")
    r2 = c2.ReadLock(p, "r2")
    expect(r1.acquire(timeout=WAIT), "reader 1 could not acquire")
    expect(r2.acquire(timeout=WAIT), "reader 2 could not acquire while reader 1 holds")
    expect(not c1.WriteLock(p, "w0").acquire(blocking=False),
           "non-blocking write lock acquired while readers hold")
    w = c2.WriteLock(p, "w")
    bg = Bg(w.acquire, timeout=WAIT)
    wait_for(lambda: sorted(r1.contenders()) == ["r1", "r2", "w"], "contenders r1, r2, w")
    stays(lambda: not bg.done.is_set(), "writer blocked while two readers hold")
    r1.release()
    stays(lambda: not bg.done.is_set(), "writer blocked while one reader holds", duration=0.3)
    r2.release()
    expect(bg.wait("writer to acquire after readers released"), "writer acquire returned False")
    expect(not c1.ReadLock(p, "r3").acquire(blocking=False),
           "non-blocking read lock acquired while writer holds")
    w.release()
    r4 = c1.ReadLock(p, "r4")
    expect(r4.acquire(timeout=WAIT), "reader could not acquire after writer released")
    r4.release()


@check("election")
def check_election(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("election")
    leaders = []
    stop = {"c1": threading.Event(), "c2": threading.Event(), "c3": threading.Event()}

    def lead(ident):
        leaders.append(ident)
        stop[ident].wait(3 * WAIT)

    e1 = c1.Election(p, "c1")
    e2 = c2.Election(p, "c2")
    t1 = Bg(e1.run, lead, "c1")
    wait_for(lambda: leaders == ["c1"], "c1 to become leader")
    t2 = Bg(e2.run, lead, "c2")
    wait_for(lambda: e1.contenders() == ["c1", "c2"], "contenders [c1, c2] (got %r)" % e1.contenders())
    stays(lambda: leaders == ["c1"], "c1 sole leader")

    # A waiting contender that cancels never leads.
    e3 = c1.Election(p, "c3")
    t3 = Bg(e3.run, lead, "c3")
    wait_for(lambda: e1.contenders() == ["c1", "c2", "c3"], "contenders [c1, c2, c3]")
    e3.cancel()
    t3.wait("cancelled contender's run() to return")
    wait_for(lambda: e1.contenders() == ["c1", "c2"], "cancelled contender to leave")

    # The leader cancels and gives up leadership; c2 takes over.
    e1.cancel()
    stop["c1"].set()
    t1.wait("c1's run() to return")
    wait_for(lambda: leaders == ["c1", "c2"], "c2 to take over (leaders %r)" % leaders)
    eq(e2.contenders(), ["c2"], "contenders after c1 left")
    stop["c2"].set()
    t2.wait("c2's run() to return")
    eq(leaders, ["c1", "c2"], "leadership history")


@check("counter")
def check_counter(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("counter")
    ctr = c1.Counter(p)
    eq(ctr.value, 0, "initial value")
    ctr += 1
    ctr += 5
    ctr -= 2
    eq(ctr.value, 4, "value after +1 +5 -2")
    eq((ctr.pre_value, ctr.post_value), (6, 4), "pre/post value of last change")
    wait_for(lambda: c2.Counter(p).value == 4, "value 4 seen by another client")

    def bump(client, n):
        k = client.Counter(p)
        for _ in range(n):
            k += 1

    b1 = Bg(bump, c1, 25)
    b2 = Bg(bump, c2, 25)
    b1.wait("concurrent increments on client 1", timeout=3 * WAIT)
    b2.wait("concurrent increments on client 2", timeout=3 * WAIT)
    eq(c1.Counter(p).value, 54, "value after 2x25 concurrent increments")
    eq(c1.get(p)[0], b"54", "stored representation")

    f = c1.Counter(ctx.path("float"), default=0.0)
    f += 0.5
    f += 1.25
    eq(f.value, 1.75, "float counter")

    cc = c1.Counter(ctx.path("curator"), support_curator=True)
    cc += 7
    eq(c1.get(ctx.path("curator"))[0], struct.pack(">i", 7), "curator-compatible encoding")


@check("barrier")
def check_barrier(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("barrier")
    expect(c2.Barrier(p).wait(timeout=1), "wait() on an absent barrier did not pass")
    b1 = c1.Barrier(p)
    b1.create()
    wait_for(lambda: c2.exists(p), "barrier node visible to the other client")
    waiter = Bg(c2.Barrier(p).wait, timeout=WAIT)
    stays(lambda: not waiter.done.is_set(), "waiter blocked while barrier is up")
    expect(b1.remove(), "remove() returned False")
    expect(waiter.wait("waiter to pass after remove"), "wait() returned False after remove")
    expect(not b1.remove(), "second remove() returned True")


@check("double-barrier")
def check_double_barrier(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("dbarrier")
    d1 = c1.DoubleBarrier(p, 2, "m1")
    d2 = c2.DoubleBarrier(p, 2, "m2")
    e1 = Bg(d1.enter)
    wait_for(lambda: len(c2.get_children(p)) == 1, "first member to register")
    stays(lambda: not e1.done.is_set(), "first member blocked until second enters")
    e2 = Bg(d2.enter)
    e1.wait("first member to enter")
    e2.wait("second member to enter")
    expect(d1.participating and d2.participating, "members not participating after enter()")
    l1 = Bg(d1.leave)
    l2 = Bg(d2.leave)
    l1.wait("first member to leave")
    l2.wait("second member to leave")
    expect(not d1.participating and not d2.participating, "members still participating after leave()")
    wait_for(lambda: c1.get_children(p) == [], "barrier to be empty after both left")


@check("semaphore")
def check_semaphore(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("sem")
    s1 = c1.Semaphore(p, "s1", max_leases=2)
    s2 = c2.Semaphore(p, "s2", max_leases=2)
    expect(s1.acquire(timeout=WAIT), "first lease not acquired")
    expect(s2.acquire(timeout=WAIT), "second lease not acquired")
    eq(sorted(s1.lease_holders()), ["s1", "s2"], "lease holders")
    expect(not c1.Semaphore(p, "s3", max_leases=2).acquire(blocking=False),
           "third lease acquired non-blocking with max_leases=2")
    s3 = c2.Semaphore(p, "s3", max_leases=2)
    bg = Bg(s3.acquire, timeout=WAIT)
    stays(lambda: not bg.done.is_set(), "third acquirer blocked")
    s1.release()
    expect(bg.wait("third acquirer to get a lease after a release"), "third acquire returned False")
    wait_for(lambda: sorted(s1.lease_holders()) == ["s2", "s3"], "lease holders s2, s3")
    s2.release()
    s3.release()
    wait_for(lambda: s1.lease_holders() == [], "no lease holders after releases")
    try:
        c1.Semaphore(p, "bad", max_leases=3).acquire(blocking=False)
        raise CheckFailed("acquire with inconsistent max_leases succeeded")
    except ValueError:
        pass


@check("party")
def check_party(ctx):
    c1 = ctx.client()
    c2 = ctx.client()
    p = ctx.path("party")
    p1 = c1.Party(p, "a")
    p2 = c2.Party(p, "b")
    eq(len(p1), 0, "len of empty party")
    p1.join()
    p2.join()
    wait_for(lambda: len(p1) == 2, "len(party) == 2")
    eq(sorted(p1), ["a", "b"], "members")
    p2.leave()
    wait_for(lambda: len(p1) == 1, "len(party) == 1 after leave")
    eq(list(p1), ["a"], "members after leave")
    p2.join()
    wait_for(lambda: len(p1) == 2, "len(party) == 2 after re-join")
    c2.stop()
    wait_for(lambda: len(p1) == 1, "member removed when its session closed")
    sp = c1.ShallowParty(ctx.path("shallow"), "x")
    sp.join()
    eq((len(sp), list(sp)), (1, ["x"]), "ShallowParty")
    p1.leave()
    eq(len(p1), 0, "len after everyone left")


# --------------------------------------------------------------------------


def run_check(name, fn, hosts, root):
    ctx = Ctx(hosts, root + "/" + name)
    box = {}

    def target():
        try:
            fn(ctx)
        except BaseException as e:  # noqa: B902
            box["exc"] = e
            box["tb"] = traceback.format_exc()

    t = threading.Thread(target=target, name="check-" + name, daemon=True)
    t.start()
    t.join(CHECK_TIMEOUT)
    if t.is_alive():
        ctx.close()  # may unblock it; either way we move on
        return "check did not finish within %gs" % CHECK_TIMEOUT
    ctx.close()
    exc = box.get("exc")
    if exc is None:
        return None
    if VERBOSE:
        sys.stderr.write(box["tb"])
    if isinstance(exc, CheckFailed):
        return str(exc)
    return "%s: %s" % (type(exc).__name__, exc)


def cleanup(hosts, root):
    c = KazooClient(hosts=hosts, timeout=10.0)
    try:
        c.start(timeout=WAIT)
        if c.exists(root):
            c.delete(root, recursive=True)
        expect(c.exists(root) is None, "%s still exists after recursive delete" % root)
    finally:
        try:
            c.stop()
            c.close()
        except Exception:
            pass


def main():
    hosts = sys.argv[1]
    logging.basicConfig(
        level=logging.INFO if VERBOSE else logging.CRITICAL,
        format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s",
    )
    root = "/kazoo-smoke-" + uuid.uuid4().hex
    only = [s for s in os.environ.get("KAZOO_SMOKE_ONLY", "").split(",") if s]
    unknown = set(only) - {n for n, _ in CHECKS}
    if unknown:
        print("unknown check(s): %s; known: %s" % (", ".join(sorted(unknown)),
              ", ".join(n for n, _ in CHECKS)), file=sys.stderr)
        return 64
    if VERBOSE:
        print("# root %s on %s" % (root, hosts), file=sys.stderr)

    passed = failed = 0
    unreachable = None
    for name, fn in CHECKS:
        if only and name not in only:
            continue
        if unreachable:
            # Do not spend a connect timeout on every remaining check.
            reason = "not run: %s" % unreachable
        else:
            reason = run_check(name, fn, hosts, root)
            if name == "connect" and reason and "KazooTimeoutError" in reason:
                unreachable = "server unreachable (connect failed)"
        if reason is None:
            print("PASS %s" % name, flush=True)
            passed += 1
        else:
            print("FAIL %s: %s" % (name, reason.replace("\n", " ")), flush=True)
            failed += 1
    try:
        if unreachable:
            raise CheckFailed("not run: %s" % unreachable)
        cleanup(hosts, root)
        print("PASS cleanup", flush=True)
        passed += 1
    except CheckFailed as e:
        print("FAIL cleanup: %s" % e, flush=True)
        failed += 1
    except BaseException as e:  # noqa: B902
        print("FAIL cleanup: %s: %s" % (type(e).__name__, e), flush=True)
        failed += 1
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Checks that timed out may have left non-daemon kazoo threads behind.
    os._exit(rc)
