package interop_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/test/oracle"
	"github.com/paddockzk/paddock/test/zktest"
)

// The Curator tests drive Apache Curator 5 (Debian's libcurator-recipes-java)
// through test/interop/curator/CuratorAgent.java, compiled once per package
// run. An agent is one JVM with one CuratorFramework (one session), reused
// for every step of a test. ParseConfig.java, compiled with it, shows how
// Java reads a /zookeeper/config.

// curatorJarDir holds Debian's jars; their manifests' Class-Path entries
// bring in guava, slf4j-api and the rest.
const curatorJarDir = "/usr/share/java"

var curatorJars = []string{"curator-recipes.jar", "curator-framework.jar", "curator-client.jar", "zookeeper.jar", "zookeeper-jute.jar"}

const curatorInstall = "apt-get install -y libcurator-recipes-java default-jdk-headless"

var (
	curatorOnce    sync.Once
	curatorClasses string // compiled agent, removed by TestMain
	curatorSkip    string // why the Curator tests cannot run
	curatorErr     error  // the agent does not compile
)

func TestMain(m *testing.M) {
	code := m.Run()
	if curatorClasses != "" {
		_ = os.RemoveAll(curatorClasses)
	}
	os.Exit(code)
}

func curatorClasspath(extra ...string) string {
	parts := append([]string(nil), extra...)
	for _, j := range curatorJars {
		parts = append(parts, filepath.Join(curatorJarDir, j))
	}
	return strings.Join(parts, string(os.PathListSeparator))
}

// compileCurator compiles the agent, or skips the test when javac, java
// or the Curator jars are missing.
func compileCurator(t *testing.T) {
	t.Helper()
	curatorOnce.Do(func() {
		for _, tool := range []string{"javac", "java"} {
			if _, err := exec.LookPath(tool); err != nil {
				curatorSkip = fmt.Sprintf("no %s (%s): Curator interoperability not tested", tool, curatorInstall)
				return
			}
		}
		for _, j := range curatorJars {
			if _, err := os.Stat(filepath.Join(curatorJarDir, j)); err != nil {
				curatorSkip = fmt.Sprintf("no %s (%s): Curator interoperability not tested", filepath.Join(curatorJarDir, j), curatorInstall)
				return
			}
		}
		dir, err := os.MkdirTemp("", "curator-agent-")
		if err != nil {
			curatorErr = err
			return
		}
		curatorClasses = dir
		out, err := exec.Command("javac", "-nowarn", "-Xlint:-path", "-implicit:none", "-d", dir,
			"-cp", curatorClasspath(), filepath.Join("curator", "CuratorAgent.java"), filepath.Join("curator", "ParseConfig.java")).CombinedOutput()
		if err != nil {
			curatorErr = fmt.Errorf("javac CuratorAgent.java ParseConfig.java: %v\n%s", err, out)
		}
	})
	if curatorSkip != "" {
		t.Skip(curatorSkip)
	}
	if curatorErr != nil {
		t.Fatal(curatorErr)
	}
}

// curatorPaddock starts the in-process Paddock server of a Curator test.
// The agent asks for a 10 s session, which zktest's default bounds (20
// ticks of 100 ms) would cut to 2 s: shorter than the Java client can take
// to reconnect (1 s after its last try of every host, plus up to 1 s).
func curatorPaddock(t *testing.T) *target {
	compileCurator(t)
	return targetOn(t, "", zktest.WithSessionTimeouts(200*time.Millisecond, 40*time.Second))
}

// forEachServer runs f against an in-process Paddock server and, when
// ZK_ORACLE is set, against Apache ZooKeeper too, as subtests.
func forEachServer(t *testing.T, f func(t *testing.T, tg *target)) {
	compileCurator(t)
	t.Run("paddock", func(t *testing.T) { f(t, curatorPaddock(t)) })
	if addr := os.Getenv(oracle.Env); addr != "" {
		t.Run("zookeeper", func(t *testing.T) { f(t, targetOn(t, addr)) })
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// curatorAgent is a running CuratorAgent: one Curator client.
type curatorAgent struct {
	t      *testing.T
	name   string
	stdin  io.WriteCloser
	stderr syncBuffer
	exited chan struct{}

	mu      sync.Mutex
	seq     int
	replies map[string]chan string
	events  map[string]chan string
}

// curator starts an agent connected to the target's server.
func (tg *target) curator(name string) *curatorAgent {
	tg.t.Helper()
	a := &curatorAgent{t: tg.t, name: name, exited: make(chan struct{}),
		replies: map[string]chan string{}, events: map[string]chan string{}}
	args := []string{"-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}
	cp := curatorClasspath(curatorClasses)
	// CURATOR_AGENT_LOG=debug (or info...) logs Curator and ZooKeeper to
	// the agent's stderr, shown when a test fails (Debian's slf4j-simple).
	if level := os.Getenv("CURATOR_AGENT_LOG"); level != "" {
		cp += string(os.PathListSeparator) + filepath.Join(curatorJarDir, "slf4j-simple.jar")
		args = append(args, "-Dorg.slf4j.simpleLogger.defaultLogLevel="+level, "-Dorg.slf4j.simpleLogger.showDateTime=true")
	}
	cmd := exec.Command("java", append(args, "-cp", cp, "CuratorAgent", tg.hosts)...)
	cmd.Stderr = &a.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tg.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tg.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tg.t.Fatal(err)
	}
	a.stdin = stdin
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			a.dispatch(sc.Text())
		}
		_ = cmd.Wait()
		close(a.exited)
	}()
	tg.t.Cleanup(func() {
		_ = a.stdin.Close()
		select {
		case <-a.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-a.exited
		}
	})
	return a
}

// dispatch routes a line to the reply channel of its tag, or to the event
// channel of its source ("ev SOURCE WORDS...").
func (a *curatorAgent) dispatch(line string) {
	tag, rest, _ := strings.Cut(line, " ")
	if tag == "ev" {
		src, _, _ := strings.Cut(rest, " ")
		a.eventsOf(src) <- rest
		return
	}
	a.mu.Lock()
	ch := a.replies[tag]
	delete(a.replies, tag)
	a.mu.Unlock()
	if ch != nil {
		ch <- rest
	}
}

func (a *curatorAgent) eventsOf(src string) chan string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch := a.events[src]
	if ch == nil {
		ch = make(chan string, 1000)
		a.events[src] = ch
	}
	return ch
}

// pending is a command sent and not yet answered.
type pending struct {
	a     *curatorAgent
	cmd   string
	reply chan string
}

// send sends a command without waiting for its answer.
func (a *curatorAgent) send(words ...any) *pending {
	a.t.Helper()
	a.mu.Lock()
	a.seq++
	tag := fmt.Sprint("c", a.seq)
	p := &pending{a: a, cmd: fmt.Sprintln(words...), reply: make(chan string, 1)}
	a.replies[tag] = p.reply
	a.mu.Unlock()
	if _, err := io.WriteString(a.stdin, tag+" "+p.cmd); err != nil {
		a.t.Fatalf("curator agent %s: %v; stderr:\n%s", a.name, err, a.stderr.String())
	}
	return p
}

// result waits for the answer: the text after "ok", or an error.
func (p *pending) result() (string, error) {
	p.a.t.Helper()
	select {
	case r := <-p.reply:
		if ok, found := strings.CutPrefix(r, "ok"); found {
			return strings.TrimPrefix(ok, " "), nil
		}
		return "", fmt.Errorf("curator agent %s: %s-> %s", p.a.name, p.cmd, r)
	case <-p.a.exited:
		p.a.t.Fatalf("curator agent %s exited during %q; stderr:\n%s", p.a.name, p.cmd, p.a.stderr.String())
	case <-time.After(waitTimeout):
		p.a.t.Fatalf("curator agent %s: no answer to %q in %v; stderr:\n%s", p.a.name, p.cmd, waitTimeout, p.a.stderr.String())
	}
	return "", nil
}

// wait waits for a successful answer.
func (p *pending) wait() string {
	p.a.t.Helper()
	r, err := p.result()
	if err != nil {
		p.a.t.Fatal(err)
	}
	return r
}

// answered reports whether the answer has come (without consuming it).
func (p *pending) answered() bool { return len(p.reply) > 0 }

// do sends a command and returns its successful answer.
func (a *curatorAgent) do(words ...any) string {
	a.t.Helper()
	return a.send(words...).wait()
}

// expect sends a command and checks its answer.
func (a *curatorAgent) expect(want string, words ...any) {
	a.t.Helper()
	if got := a.do(words...); got != want {
		a.t.Fatalf("curator agent %s: %v -> %q, want %q; stderr:\n%s", a.name, words, got, want, a.stderr.String())
	}
}

// event returns the next event of source src ("state", or a name given
// to a latch, cache or watcher), without the source.
func (a *curatorAgent) event(src string) string {
	a.t.Helper()
	select {
	case e := <-a.eventsOf(src):
		return strings.TrimPrefix(e, src+" ")
	case <-time.After(waitTimeout):
		a.t.Fatalf("curator agent %s: no %s event in %v; stderr:\n%s", a.name, src, waitTimeout, a.stderr.String())
	}
	return ""
}

// expectEvent checks the next event of src.
func (a *curatorAgent) expectEvent(src, want string) {
	a.t.Helper()
	if got := a.event(src); got != want {
		a.t.Fatalf("curator agent %s: %s event %q, want %q; stderr:\n%s", a.name, src, got, want, a.stderr.String())
	}
}

// someEvents returns the next n events of src, sorted: for events whose order
// is not defined.
func (a *curatorAgent) someEvents(src string, n int) []string {
	a.t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = a.event(src)
	}
	sort.Strings(out)
	return out
}

// noEvent checks that src reports nothing for d.
func (a *curatorAgent) noEvent(src string, d time.Duration) {
	a.t.Helper()
	select {
	case e := <-a.eventsOf(src):
		a.t.Fatalf("curator agent %s: unexpected %s event %q", a.name, src, e)
	case <-time.After(d):
	}
}
