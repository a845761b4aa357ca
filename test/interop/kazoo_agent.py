#!/usr/bin/env python3
"""kazoo_agent.py -- kazoo's lock recipes, driven by test/interop's Go tests.

Usage: kazoo_agent.py HOSTS MODE ARGS...

  counter  PATH COUNTER THREADS N  each of THREADS threads (own Lock) does N
                                   times: with Lock(PATH): get COUNTER, set
                                   COUNTER+1 (no version check); prints "done"
  wcounter PATH COUNTER THREADS N  the same with WriteLock(PATH)
  try      KIND PATH               acquire(blocking=False); prints "acquired"
                                   or "busy" (and releases)
  hold     KIND PATH ID            acquire (blocking); prints "held", waits
                                   for a line (or EOF) on stdin, releases,
                                   prints "released"
  contenders KIND PATH             prints the contenders, one per line, then
                                   "end"

KIND is lock, read, write or election (for hold: runs Election(PATH, ID)
and prints "held" once leader). Every line is flushed. Exit status 0; 3 on
error (with the traceback on stderr); 2 if kazoo is not importable.
"""

import sys
import threading

try:
    from kazoo.client import KazooClient
except ImportError:
    sys.stderr.write("kazoo is not importable\n")
    sys.exit(2)


def say(*words):
    print(*words, flush=True)


def client(hosts):
    zk = KazooClient(hosts=hosts, timeout=10.0)
    zk.start(timeout=15)
    return zk


def make_lock(zk, kind, path, ident=None):
    if kind == "lock":
        return zk.Lock(path, ident)
    if kind == "read":
        return zk.ReadLock(path, ident)
    if kind == "write":
        return zk.WriteLock(path, ident)
    raise ValueError("unknown kind %r" % kind)


def counter(zk, kind, path, counter_path, threads, n):
    errors = []

    def work():
        try:
            lock = make_lock(zk, kind, path)
            for _ in range(n):
                with lock:
                    data, _ = zk.get(counter_path)
                    zk.set(counter_path, str(int(data or b"0") + 1).encode())
        except Exception as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]
    say("done")


def try_lock(zk, kind, path):
    lock = make_lock(zk, kind, path)
    if lock.acquire(blocking=False):
        say("acquired")
        lock.release()
    else:
        say("busy")


def hold(zk, kind, path, ident):
    if kind == "election":
        election = zk.Election(path, ident)

        def lead():
            say("held")
            sys.stdin.readline()

        election.run(lead)
        say("released")
        return
    lock = make_lock(zk, kind, path, ident)
    lock.acquire()
    say("held")
    sys.stdin.readline()
    lock.release()
    say("released")


def contenders(zk, kind, path):
    if kind == "election":
        names = zk.Election(path).contenders()
    else:
        names = make_lock(zk, kind, path).contenders()
    for name in names:
        say(name)
    say("end")


def main(argv):
    hosts, mode, args = argv[1], argv[2], argv[3:]
    zk = client(hosts)
    try:
        if mode in ("counter", "wcounter"):
            kind = "lock" if mode == "counter" else "write"
            counter(zk, kind, args[0], args[1], int(args[2]), int(args[3]))
        elif mode == "try":
            try_lock(zk, args[0], args[1])
        elif mode == "hold":
            hold(zk, args[0], args[1], args[2])
        elif mode == "contenders":
            contenders(zk, args[0], args[1])
        else:
            raise ValueError("unknown mode %r" % mode)
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    try:
        main(sys.argv)
    except Exception:
        import traceback

        traceback.print_exc()
        sys.exit(3)
