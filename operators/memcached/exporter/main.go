// memcached-exporter: the sidecar that serves one memcached's statistics as Prometheus metrics
// (ADR 0402). Each scrape asks memcached for `stats` over one kept-open text-protocol connection
// (binary protocol after SASL PLAIN when memcached requires SASL, ADR 0403) and writes the answer
// in the text exposition format; the metric names are the ones the widely
// used memcached_exporter publishes, so existing dashboards and alerts read them unchanged.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	address := flag.String("memcached.address", "127.0.0.1:11211", "memcached to read statistics from (host:port)")
	listen := flag.String("web.listen-address", ":9150", "address to serve /metrics and /healthz on")
	timeout := flag.Duration("memcached.timeout", time.Second, "how long one scrape may wait on memcached")
	usernameFile := flag.String("memcached.sasl-username-file", "", "file with the SASL user (memcached -S); needs --memcached.sasl-password-file")
	passwordFile := flag.String("memcached.sasl-password-file", "", "file with the SASL password, read at each connection")
	flag.Parse()

	source := &statsSource{address: *address, timeout: *timeout}
	if (*usernameFile == "") != (*passwordFile == "") {
		log.Fatal("--memcached.sasl-username-file and --memcached.sasl-password-file go together")
	}
	if *usernameFile != "" {
		source.sasl = &saslCredentials{usernameFile: *usernameFile, passwordFile: *passwordFile}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		stats, err := source.readContext(r.Context())
		if err != nil {
			// memcached being down is what `memcached_up 0` reports; failing the scrape would
			// hide it behind the exporter's own `up` series.
			log.Printf("memcached %s: %v", *address, err)
		}
		writeMetrics(w, stats, err == nil)
	})
	// The exporter's liveness only: memcached's own probes say whether memcached serves.
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })

	// A scrape answers within the memcached timeout; the write timeout only bounds a client that
	// stops reading.
	server := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: *timeout + 5*time.Second}
	stop, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	go func() {
		<-stop.Done()
		shutdown, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		server.Shutdown(shutdown)
	}()
	log.Printf("serving memcached %s statistics on %s/metrics", *address, *listen)
	if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// statsSource holds at most one connection to memcached: scrapes take turns on it, so however many
// Prometheis scrape at once, memcached sees one client (its connection limit is the users'). A
// scrape's wait for its turn counts against its timeout, so concurrent scrapes of a stalled
// memcached all answer `memcached_up 0` within the timeout instead of queueing behind each other.
type statsSource struct {
	address string
	timeout time.Duration
	sasl    *saslCredentials // set: authenticate, then speak the binary protocol
	turn    chan struct{}    // one token: whoever holds it may use conn
	once    sync.Once
	conn    net.Conn
}

// memcached's `stats` answer is about a hundred short lines; an answer beyond these bounds is not
// memcached's (a wrong process on the port, a bug) and is refused before it costs memory.
const (
	maxAnswerBytes = 1 << 20
	maxStats       = 4096
)

// read is readContext without a caller to give up early.
func (s *statsSource) read() (map[string]string, error) {
	return s.readContext(context.Background())
}

// readContext returns memcached's `stats` answer as name → value, reconnecting when the last
// connection broke, and giving up at the timeout (its wait for a turn included) or when ctx ends.
func (s *statsSource) readContext(ctx context.Context) (map[string]string, error) {
	s.once.Do(func() { s.turn = make(chan struct{}, 1); s.turn <- struct{}{} })
	deadline := time.Now().Add(s.timeout)
	wait := time.NewTimer(s.timeout)
	defer wait.Stop()
	select {
	case <-s.turn:
	case <-wait.C:
		return nil, errors.New("another scrape held the connection for the whole timeout")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { s.turn <- struct{}{} }()
	reused := s.conn != nil
	stats, read, err := s.attempt(deadline)
	if err != nil && reused && read == 0 && time.Now().Before(deadline) {
		// The kept connection died while idle (memcached restarted): one more try on a new one.
		stats, _, err = s.attempt(deadline)
	}
	return stats, err
}

// attempt runs one exchange (dialling first when no connection is kept); on failure the connection
// is dropped, since a half-read answer would desynchronise the next one. It reports how many bytes
// of the answer it read.
func (s *statsSource) attempt(deadline time.Time) (map[string]string, int64, error) {
	if s.conn == nil {
		conn, err := net.DialTimeout("tcp", s.address, time.Until(deadline))
		if err != nil {
			return nil, 0, err
		}
		if s.sasl != nil {
			// A failed authentication says nothing about the kept connection: none was kept.
			err = conn.SetDeadline(deadline)
			if err == nil {
				err = authenticate(conn, s.sasl)
			}
			if err != nil {
				conn.Close()
				return nil, 0, err
			}
		}
		s.conn = conn
	}
	stats, read, err := s.exchange(deadline)
	if err != nil {
		s.conn.Close()
		s.conn = nil
	}
	return stats, read, err
}

func (s *statsSource) exchange(deadline time.Time) (map[string]string, int64, error) {
	if err := s.conn.SetDeadline(deadline); err != nil {
		return nil, 0, err
	}
	if s.sasl != nil {
		return binaryStats(s.conn)
	}
	if _, err := io.WriteString(s.conn, "stats\r\n"); err != nil {
		return nil, 0, err
	}
	limited := &io.LimitedReader{R: s.conn, N: maxAnswerBytes}
	reader := bufio.NewReader(limited)
	read := func() int64 { return maxAnswerBytes - limited.N - int64(reader.Buffered()) }
	stats := make(map[string]string, 96)
	for {
		line, err := reader.ReadString('\n')
		if err != nil {
			if limited.N == 0 {
				err = fmt.Errorf("answer to stats longer than %d bytes", maxAnswerBytes)
			}
			return nil, read(), err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			if reader.Buffered() > 0 {
				return nil, read(), errors.New("bytes after the end of the stats answer")
			}
			return stats, read(), nil
		}
		fields := strings.SplitN(line, " ", 3)
		if len(fields) != 3 || fields[0] != "STAT" {
			return nil, read(), fmt.Errorf("unexpected answer to stats: %q", line)
		}
		if len(stats) >= maxStats {
			return nil, read(), fmt.Errorf("more than %d fields in the answer to stats", maxStats)
		}
		stats[fields[1]] = fields[2]
	}
}

// metric is one exported family: its name, type, help, and the `stats` fields it is made of.
type metric struct {
	name, kind, help string
	samples          []sample
}

// sample is one series: its labels (already formatted) and the stats field that holds its value.
type sample struct{ labels, stat string }

func one(stat string) []sample { return []sample{{stat: stat}} }

// commandSamples maps memcached's per-command counters to {command, status} series.
func commandSamples() []sample {
	counters := [][3]string{
		{"get", "hit", "get_hits"}, {"get", "miss", "get_misses"},
		{"get", "expired", "get_expired"}, {"get", "flushed", "get_flushed"},
		{"set", "hit", "cmd_set"},
		{"delete", "hit", "delete_hits"}, {"delete", "miss", "delete_misses"},
		{"incr", "hit", "incr_hits"}, {"incr", "miss", "incr_misses"},
		{"decr", "hit", "decr_hits"}, {"decr", "miss", "decr_misses"},
		{"cas", "hit", "cas_hits"}, {"cas", "miss", "cas_misses"}, {"cas", "badval", "cas_badval"},
		{"touch", "hit", "touch_hits"}, {"touch", "miss", "touch_misses"},
		{"flush", "hit", "cmd_flush"},
	}
	out := make([]sample, 0, len(counters))
	for _, c := range counters {
		out = append(out, sample{labels: `command="` + labelValue(c[0]) + `",status="` + labelValue(c[1]) + `"`, stat: c[2]})
	}
	return out
}

// families lists every metric with a value from `stats`, in the order they are written.
var families = []metric{
	{"memcached_uptime_seconds", "counter", "Seconds since memcached started.", one("uptime")},
	{"memcached_time_seconds", "gauge", "memcached's clock, in seconds since the epoch.", one("time")},
	{"memcached_commands_total", "counter", "Commands served, by command and outcome (set counts every set as a hit).",
		commandSamples()},
	{"memcached_items_evicted_total", "counter", "Items evicted to make room for new ones while still valid.", one("evictions")},
	{"memcached_items_reclaimed_total", "counter", "Expired items whose memory was reused for new ones.", one("reclaimed")},
	{"memcached_items_total", "counter", "Items stored since memcached started.", one("total_items")},
	{"memcached_current_items", "gauge", "Items stored now.", one("curr_items")},
	{"memcached_current_bytes", "gauge", "Bytes used by the items stored now.", one("bytes")},
	{"memcached_limit_bytes", "gauge", "Bytes memcached may use for items (-m).", one("limit_maxbytes")},
	{"memcached_current_connections", "gauge", "Client connections open now.", one("curr_connections")},
	{"memcached_connections_total", "counter", "Client connections accepted since memcached started.", one("total_connections")},
	{"memcached_max_connections", "gauge", "Client connections memcached accepts at most (-c).", one("max_connections")},
	{"memcached_connections_rejected_total", "counter", "Connections refused because max_connections was reached.", one("rejected_connections")},
	{"memcached_connections_listener_disabled_total", "counter", "Times memcached stopped accepting because it reached max_connections.", one("listen_disabled_num")},
	{"memcached_read_bytes_total", "counter", "Bytes read from clients.", one("bytes_read")},
	{"memcached_written_bytes_total", "counter", "Bytes written to clients.", one("bytes_written")},
	{"memcached_current_threads", "gauge", "Worker threads (-t).", one("threads")},
	{"memcached_process_user_cpu_seconds_total", "counter", "User CPU time memcached has used.", one("rusage_user")},
	{"memcached_process_system_cpu_seconds_total", "counter", "System CPU time memcached has used.", one("rusage_system")},
}

// labelValue escapes a label value as the text exposition format wants it: backslash, double
// quote and line feed escaped, every other character as is, in UTF-8 (Go's %q escapes more, and
// Prometheus refuses any other escape).
func labelValue(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// writeMetrics writes the exposition: `memcached_up` always, the rest only when memcached answered.
func writeMetrics(w io.Writer, stats map[string]string, up bool) {
	b := bufio.NewWriter(w)
	defer b.Flush()
	fmt.Fprint(b, "# HELP memcached_up Whether the last scrape reached memcached (1) or not (0).\n# TYPE memcached_up gauge\n")
	if !up {
		fmt.Fprint(b, "memcached_up 0\n")
		return
	}
	fmt.Fprint(b, "memcached_up 1\n")
	if version, ok := stats["version"]; ok {
		fmt.Fprintf(b, "# HELP memcached_version The version of memcached, as a label.\n# TYPE memcached_version gauge\nmemcached_version{version=\"%s\"} 1\n", labelValue(version))
	}
	for _, m := range families {
		wrote := false
		for _, s := range m.samples {
			raw, ok := stats[s.stat]
			if !ok {
				// An older or newer memcached may lack a field: leave the series out, never invent a zero.
				continue
			}
			value, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				continue
			}
			if !wrote {
				fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", m.name, m.help, m.name, m.kind)
				wrote = true
			}
			if s.labels == "" {
				fmt.Fprintf(b, "%s %s\n", m.name, strconv.FormatFloat(value, 'f', -1, 64))
			} else {
				fmt.Fprintf(b, "%s{%s} %s\n", m.name, s.labels, strconv.FormatFloat(value, 'f', -1, 64))
			}
		}
	}
}
