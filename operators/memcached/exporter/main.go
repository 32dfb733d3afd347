// memcached-exporter: the sidecar that serves one memcached's statistics as Prometheus metrics
// (ADR 0402). Each scrape asks memcached for `stats` over one kept-open text-protocol connection
// and writes the answer in the text exposition format; the metric names are the ones the widely
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
	flag.Parse()

	source := &statsSource{address: *address, timeout: *timeout}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		stats, err := source.read()
		if err != nil {
			// memcached being down is what `memcached_up 0` reports; failing the scrape would
			// hide it behind the exporter's own `up` series.
			log.Printf("memcached %s: %v", *address, err)
		}
		writeMetrics(w, stats, err == nil)
	})
	// The exporter's liveness only: memcached's own probes say whether memcached serves.
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })

	server := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
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
// Prometheis scrape at once, memcached sees one client (its connection limit is the users').
type statsSource struct {
	address string
	timeout time.Duration
	mu      sync.Mutex
	conn    net.Conn
	reader  *bufio.Reader
}

// read returns memcached's `stats` answer as name → value, reconnecting when the last one broke.
func (s *statsSource) read() (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		conn, err := net.DialTimeout("tcp", s.address, s.timeout)
		if err != nil {
			return nil, err
		}
		s.conn, s.reader = conn, bufio.NewReader(conn)
	}
	stats, err := s.exchange()
	if err != nil {
		// A half-read answer would desynchronise the next one: start over on a new connection.
		s.conn.Close()
		s.conn, s.reader = nil, nil
	}
	return stats, err
}

func (s *statsSource) exchange() (map[string]string, error) {
	if err := s.conn.SetDeadline(time.Now().Add(s.timeout)); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(s.conn, "stats\r\n"); err != nil {
		return nil, err
	}
	stats := make(map[string]string, 96)
	for {
		line, err := s.reader.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			return stats, nil
		}
		fields := strings.SplitN(line, " ", 3)
		if len(fields) != 3 || fields[0] != "STAT" {
			return nil, fmt.Errorf("unexpected answer to stats: %q", line)
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
		out = append(out, sample{labels: fmt.Sprintf(`command=%q,status=%q`, c[0], c[1]), stat: c[2]})
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
		fmt.Fprintf(b, "# HELP memcached_version The version of memcached, as a label.\n# TYPE memcached_version gauge\nmemcached_version{version=%q} 1\n", version)
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
