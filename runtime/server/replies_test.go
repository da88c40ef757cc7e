package server

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The reply counters serve the series the CounterVecs they replace served: a replies series per merchant and
// answer once there is one, both token series once the merchant has any reply, each merchant's own counts.
func TestReplyCounters(t *testing.T) {
	c := newReplyCounters()
	c.count("alpha", true, 0, 0)
	c.count("alpha", true, 0, 0)
	c.count("alpha", false, 120, 30)
	c.count("beta", true, 0, 0)
	want := `
# HELP parley_runtime_chat_model_tokens_total Model tokens the merchants' answers took, by merchant and kind (prompt, completion).
# TYPE parley_runtime_chat_model_tokens_total counter
parley_runtime_chat_model_tokens_total{kind="completion",merchant="alpha"} 30
parley_runtime_chat_model_tokens_total{kind="completion",merchant="beta"} 0
parley_runtime_chat_model_tokens_total{kind="prompt",merchant="alpha"} 120
parley_runtime_chat_model_tokens_total{kind="prompt",merchant="beta"} 0
# HELP parley_runtime_chat_replies_total Replies to visitors by merchant and whether the knowledge base could answer.
# TYPE parley_runtime_chat_replies_total counter
parley_runtime_chat_replies_total{answered="false",merchant="alpha"} 1
parley_runtime_chat_replies_total{answered="true",merchant="alpha"} 2
parley_runtime_chat_replies_total{answered="true",merchant="beta"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// BenchmarkReplyCounters10000 reports the heap the reply counters of 10,000 merchants keep, each with replies
// (heap-bytes/merchant), as a runtime of as many merchants keeps them for its life.
func BenchmarkReplyCounters10000(b *testing.B) {
	ids := make([]string, 10_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("shop%05d", i)
	}
	var grown uint64
	for b.Loop() {
		before := heapAlloc()
		c := newReplyCounters()
		for _, id := range ids {
			c.count(id, true, 0, 0)
			c.count(id, false, 0, 0)
		}
		grown = heapAlloc() - before
		runtime.KeepAlive(c)
	}
	b.ReportMetric(float64(grown)/float64(len(ids)), "heap-bytes/merchant")
}

// heapAlloc is the bytes of live heap objects after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
