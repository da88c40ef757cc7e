package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/live"
	"github.com/parley-dev/parley/runtime/tenant"
)

// liveEnv is an env whose streams the hub wakes, with room for many streams, and a conversation handed to the
// team whose stream the benchmarks open with the secret key.
func liveEnv(b *testing.B) (e *env, conversation string) {
	hub := live.NewHub(100000, 100000)
	e = newEnv(b, func(c *envConfig) { c.chat.Published, c.server.Live = hub.Publish, hub })
	e.addMerchant("acme", func(m *tenant.Bundle) { m.Plan.RequestsPerSecond, m.Plan.Burst = 1e6, 1e6 })
	e.validate = false
	r := e.chat(e.keys["acme-sk"], `{"message": "Can I talk to a person?"}`)
	return e, r.json(b)["conversation_id"].(string)
}

// dialStream opens a stream of the conversation on a bare connection, after the events written so far, and reads
// its answer's status line.
func dialStream(b *testing.B, e *env, conversation string) (net.Conn, *bufio.Reader) {
	head, err := e.store.StreamHead(b.Context(), "acme")
	if err != nil {
		b.Fatal(err)
	}
	addr := strings.TrimPrefix(e.url, "http://")
	c, err := (&net.Dialer{}).DialContext(b.Context(), "tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(c, "GET /api/v1/conversations/%s/events HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nLast-Event-ID: %d\r\n\r\n",
		conversation, addr, e.keys["acme-sk"], head)
	br := bufio.NewReaderSize(c, 512)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		b.Fatalf("opening a stream: %q %v", line, err)
	}
	return c, br
}

// BenchmarkIdleStreams opens 2,000 idle streams and reports the memory (heap and goroutine stacks, the clients'
// bare connections included) each one holds.
func BenchmarkIdleStreams(b *testing.B) {
	const streams = 2000
	e, conversation := liveEnv(b)
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		conns := make([]net.Conn, streams)
		for i := range conns {
			conns[i], _ = dialStream(b, e, conversation)
		}
		time.Sleep(200 * time.Millisecond) // every stream has sent its first bytes and waits
		runtime.GC()
		runtime.ReadMemStats(&after)
		used := float64(after.HeapInuse+after.StackInuse) - float64(before.HeapInuse+before.StackInuse)
		b.ReportMetric(used/streams, "bytes/stream")
		for _, c := range conns {
			_ = c.Close()
		}
	}
}

// BenchmarkStreamFanout holds 500 streams of one conversation open and, each iteration, posts a team message and
// waits until every stream has received it: the latency from the post to each stream's event, p50 and p99.
func BenchmarkStreamFanout(b *testing.B) {
	const streams = 500
	e, conversation := liveEnv(b)
	arrived := make(chan time.Time, streams)
	for range streams {
		c, br := dialStream(b, e, conversation)
		b.Cleanup(func() { _ = c.Close() })
		go func() {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if strings.HasPrefix(line, "event: message") {
					arrived <- time.Now()
				}
			}
		}()
	}
	owner := map[string]string{"X-API-Key": e.keys["acme-sk"]}
	var latencies []time.Duration
	for b.Loop() {
		sent := time.Now()
		if r := e.do(http.MethodPost, "/api/v1/conversations/"+conversation+"/messages", owner, `{"text": "Hello"}`); r.status != http.StatusCreated {
			b.Fatalf("posting: %d %s", r.status, r.body)
		}
		for range streams {
			latencies = append(latencies, (<-arrived).Sub(sent))
		}
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
}
