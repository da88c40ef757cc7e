//go:build integration

package postgres_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// TestExchangeRoundTrips counts the round trips an exchange takes, through a proxy between the store and the
// server: the conversation's upsert, then the messages, tokens, citations and the claim of the month's slot with
// the COMMIT; a refused one, whose claim fails, then the ROLLBACK. A conversation the runtime has just named needs
// no upsert: its insert goes with the rest.
func TestExchangeRoundTrips(t *testing.T) {
	ctx := t.Context()
	p := startProxy(t, server.Database(t))
	s := open(t, p.url)
	k := store.Knowledge{ID: "k1", MerchantID: "m1", Title: "Shipping", Content: "Two days.", CreatedAt: at, UpdatedAt: at}
	if err := storetest.WriteKnowledge(ctx, s, k); err != nil {
		t.Fatal(err)
	}
	ex := func(conversationID string) store.Exchange {
		ex := exchange("m1", conversationID, "How long is shipping?", 4)
		ex.Tokens = 10
		ex.Answer.Sources = []store.Source{{KnowledgeID: "k1", Title: "Shipping"}}
		return ex
	}
	// The first exchanges prepare the statements on the connection.
	named := ex("c0")
	named.NewConversation = true
	for _, e := range []store.Exchange{ex("c1"), named} {
		if _, err := storetest.WriteExchange(ctx, s, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		ex    store.Exchange
		err   error
		trips int
	}{
		{"new conversation", ex("c2"), nil, 2},
		{"new conversation named by the runtime", func() store.Exchange { e := ex("c4"); e.NewConversation = true; return e }(), nil, 1},
		{"existing conversation", func() store.Exchange { e := ex("c1"); e.Question.ID, e.Answer.ID = "q3", "a3"; return e }(), nil, 2},
		{"refused conversation", ex("c3"), store.ErrQuotaExceeded, 3},
	} {
		p.reset()
		_, err := storetest.WriteExchange(ctx, s, c.ex)
		if !errors.Is(err, c.err) {
			t.Fatalf("%s: error %v, want %v", c.name, err, c.err)
		}
		if n := p.roundTrips(); n != c.trips {
			t.Errorf("%s: %d round trips, want %d", c.name, n, c.trips)
		}
	}
}

// proxy forwards TCP connections to a PostgreSQL server and counts round trips: each time a client sends after
// the server answered, or sends first. The pool's liveness check of a connection idle for over a second (pgconn's
// Ping, a simple query "-- ping") is not the store's and is not counted, so that a stalled test machine does not
// fail the count.
type proxy struct {
	url string

	mu     sync.Mutex
	trips  int
	client map[net.Conn]bool // whether the client spoke last on the connection
}

// startProxy starts a proxy to the server of dbURL and returns it with url, dbURL through it.
func startProxy(t *testing.T, dbURL string) *proxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	target := u.Host
	u.Host = ln.Addr().String()
	p := &proxy{url: u.String(), client: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
			go p.copy(s, c, c, true)
			go p.copy(c, s, c, false)
		}
	}()
	return p
}

// copy forwards src to dst, noting on the connection of client c which side spoke.
func (p *proxy) copy(dst, src, c net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if fromClient && !p.client[c] && !bytes.Contains(buf[:n], []byte("-- ping")) {
				p.trips++
			}
			p.client[c] = fromClient
			p.mu.Unlock()
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				_ = dst.Close()
			}
			return
		}
	}
}

func (p *proxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trips = 0
}

func (p *proxy) roundTrips() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trips
}
