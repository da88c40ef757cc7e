package server

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// replyCounters counts each merchant's replies and the model tokens they took, and serves them as
// parley_runtime_chat_replies_total{merchant,answered} and parley_runtime_chat_model_tokens_total{merchant,kind}.
// A runtime serves thousands of merchants: it keeps four numbers a merchant, where a CounterVec child per merchant
// and label value took about half a kilobyte each. Its series are those the CounterVecs it replaces had: a
// replies series once the merchant has such a reply, and both token series once it has any.
type replyCounters struct {
	replies, tokens *prometheus.Desc

	mu         sync.RWMutex
	byMerchant map[string]*replyCount
}

// replyCount is one merchant's counts.
type replyCount struct {
	answered, unanswered, prompt, completion atomic.Uint64
}

func newReplyCounters() *replyCounters {
	return &replyCounters{
		replies: prometheus.NewDesc("parley_runtime_chat_replies_total",
			"Replies to visitors by merchant and whether the knowledge base could answer.", []string{"merchant", "answered"}, nil),
		tokens: prometheus.NewDesc("parley_runtime_chat_model_tokens_total",
			"Model tokens the merchants' answers took, by merchant and kind (prompt, completion).", []string{"merchant", "kind"}, nil),
		byMerchant: map[string]*replyCount{},
	}
}

// count counts a reply of the merchant that took prompt and completion model tokens.
func (c *replyCounters) count(merchantID string, answered bool, prompt, completion int64) {
	c.mu.RLock()
	n, ok := c.byMerchant[merchantID]
	c.mu.RUnlock()
	if !ok {
		c.mu.Lock()
		if n, ok = c.byMerchant[merchantID]; !ok {
			n = new(replyCount)
			c.byMerchant[merchantID] = n
		}
		c.mu.Unlock()
	}
	if answered {
		n.answered.Add(1)
	} else {
		n.unanswered.Add(1)
	}
	n.prompt.Add(uint64(max(prompt, 0)))
	n.completion.Add(uint64(max(completion, 0)))
}

// Describe implements prometheus.Collector.
func (c *replyCounters) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.replies
	ch <- c.tokens
}

// Collect implements prometheus.Collector.
func (c *replyCounters) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for id, n := range c.byMerchant {
		if v := n.answered.Load(); v > 0 {
			ch <- prometheus.MustNewConstMetric(c.replies, prometheus.CounterValue, float64(v), id, "true")
		}
		if v := n.unanswered.Load(); v > 0 {
			ch <- prometheus.MustNewConstMetric(c.replies, prometheus.CounterValue, float64(v), id, "false")
		}
		ch <- prometheus.MustNewConstMetric(c.tokens, prometheus.CounterValue, float64(n.prompt.Load()), id, "prompt")
		ch <- prometheus.MustNewConstMetric(c.tokens, prometheus.CounterValue, float64(n.completion.Load()), id, "completion")
	}
}
