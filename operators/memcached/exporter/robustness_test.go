// The exporter against a memcached that misbehaves: each test states what must hold (review 6 of
// 77ea29c found each one broken). Run by go-test.test.ts (npm test), or: go test -v .
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeMemcached listens on loopback and hands each connection to serve.
func fakeMemcached(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer conn.Close(); serve(conn) }()
		}
	}()
	return ln.Addr().String()
}

func readCommand(conn net.Conn) bool {
	_, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil
}

// Label values use the text exposition format's escaping (backslash, double quote and line feed
// only, every other character as is, in UTF-8): the Prometheus parser refuses any other escape, so
// Go's %q (\t, \x01, \xff) on an odd byte in memcached's `version` would fail the whole scrape,
// memcached_up with it.
func TestLabelValuesUsePrometheusEscaping(t *testing.T) {
	for _, version := range []string{"1.6.45\tdebian", "1.6.45-\x01", "1.6.45-\xff"} {
		var out bytes.Buffer
		writeMetrics(&out, map[string]string{"version": version}, true)
		line := regexp.MustCompile(`(?m)^memcached_version\{version="(.*)"\} 1$`).FindStringSubmatch(out.String())
		if line == nil {
			t.Fatalf("no memcached_version line in:\n%s", out.String())
		}
		if bad := regexp.MustCompile(`\\[^\\"n]`).FindString(line[1]); bad != "" {
			t.Errorf("version %q written as %q: escape %q is not valid in the text exposition format", version, line[1], bad)
		}
	}
}

// An answer is read up to 1 MiB: a process on the port that answers with one endless line (a bug,
// a wrong address) must not make the sidecar buffer it past its 32Mi memory limit.
func TestHugeStatsReplyIsBounded(t *testing.T) {
	const offered = 48 << 20 // more than the sidecar's 32Mi memory limit
	var mu sync.Mutex
	accepted := 0
	done := make(chan struct{})
	address := fakeMemcached(t, func(conn net.Conn) {
		defer close(done)
		if !readCommand(conn) {
			return
		}
		conn.SetWriteDeadline(time.Now().Add(3 * time.Second))
		chunk := append([]byte("STAT x "), bytes.Repeat([]byte("a"), 64<<10)...)
		for sent := 0; sent < offered; sent += len(chunk) {
			n, err := conn.Write(chunk)
			mu.Lock()
			accepted += n
			mu.Unlock()
			if err != nil {
				return
			}
			chunk = chunk[:64<<10]
		}
		time.Sleep(3 * time.Second) // never the newline
	})
	source := &statsSource{address: address, timeout: 2 * time.Second}
	if _, err := source.read(); err == nil {
		t.Fatal("an endless line was taken as an answer")
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	// Kernel socket buffers hold a few MB at most; the rest was read into the exporter's memory.
	if accepted > 8<<20 {
		t.Errorf("the exporter read %d MiB of a single stats line before giving up (its memory limit is 32Mi)", accepted>>20)
	}
}

// Same bound, other shape: millions of distinct STAT lines are refused, not kept (memcached's
// answer is about a hundred lines).
func TestManyStatLinesAreBounded(t *testing.T) {
	address := fakeMemcached(t, func(conn net.Conn) {
		if !readCommand(conn) {
			return
		}
		w := bufio.NewWriterSize(conn, 1<<20)
		for i := 0; i < 2_000_000; i++ {
			fmt.Fprintf(w, "STAT k%d 1\r\n", i)
		}
		w.WriteString("END\r\n")
		w.Flush()
		time.Sleep(time.Second)
	})
	source := &statsSource{address: address, timeout: 5 * time.Second}
	stats, err := source.read()
	if err == nil && len(stats) > 10_000 {
		t.Errorf("kept %d stats fields from one answer: the answer's size is unbounded", len(stats))
	}
}

// Scrapes take turns on the one connection, but the wait counts against each one's timeout: with a
// memcached that accepts and stalls, concurrent scrapes all answer within about the timeout
// instead of queueing behind each other (before, the last took scrapes x timeout).
func TestConcurrentScrapesAnswerWithinTheTimeout(t *testing.T) {
	address := fakeMemcached(t, func(conn net.Conn) {
		readCommand(conn)
		time.Sleep(10 * time.Second) // accepts, never answers
	})
	const timeout = 300 * time.Millisecond
	source := &statsSource{address: address, timeout: timeout}
	const scrapes = 10
	var wg sync.WaitGroup
	latencies := make([]time.Duration, scrapes)
	for i := range scrapes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			source.read()
			latencies[i] = time.Since(start)
		}()
	}
	wg.Wait()
	slowest := time.Duration(0)
	for _, l := range latencies {
		slowest = max(slowest, l)
	}
	if slowest > 4*timeout { // taking turns, the last took scrapes x timeout
		t.Errorf("with %d concurrent scrapes the slowest took %v (timeout %v): %v", scrapes, slowest, timeout, latencies)
	}
}

// A kept connection that died while idle (memcached restarted) is redialled once within the same
// scrape: the first scrape after a restart says memcached_up 1, not a down that is already over.
func TestReusedConnectionClosedByMemcachedIsRedialled(t *testing.T) {
	address := fakeMemcached(t, func(conn net.Conn) {
		// Each connection answers once, then memcached "restarts" (the connection is closed).
		if readCommand(conn) {
			conn.Write([]byte("STAT pid 1\r\nSTAT uptime 5\r\nEND\r\n"))
		}
	})
	source := &statsSource{address: address, timeout: time.Second}
	if _, err := source.read(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the FIN has arrived
	if _, err := source.read(); err != nil {
		var out strings.Builder
		writeMetrics(&out, nil, false)
		t.Errorf("memcached answers, yet the scrape after its restart failed (%v) and says:\n%s", err, out.String())
	}
}
