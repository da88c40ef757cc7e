//go:build integration

package memory

import (
	"bufio"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestConversationExportStaysWithinTheMemoryRequest downloads a merchant's 100,000 conversations of four
// messages each, twice at once (as many exports as one merchant may run at once), once as JSON Lines and once as
// CSV, checks that both are whole and that the runtime's peak memory stays within its default memory request.
func TestConversationExportStaysWithinTheMemoryRequest(t *testing.T) {
	const conversations = 100_000
	dbPath := filepath.Join(t.TempDir(), "parley.db")
	b := &tenant.Bundle{MerchantID: "shop", DisplayName: "shop", Plan: ownerPlan(), Owners: []tenant.Owner{{Email: "owner@shop.example"}}}
	start := time.Now()
	fillConversations(t, dbPath, b.MerchantID, conversations)
	t.Logf("stored %d conversations of 4 messages in %s", conversations, time.Since(start).Round(time.Second))
	r := startDashboardRuntime(t, dbPath, b)
	o := signIn(t, r.URL, "owner@shop.example")

	var wg sync.WaitGroup
	for _, tc := range []struct {
		format string
		lines  int
	}{{"jsonl", conversations}, {"csv", 4*conversations + 1}} {
		wg.Go(func() {
			began := time.Now()
			res, err := o.send(http.MethodGet, r.URL+"/dashboard/conversations."+tc.format, nil, "")
			if err != nil {
				t.Error(err)
				return
			}
			defer func() { _ = res.Body.Close() }()
			lines, bytes := 0, 0
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				lines++
				bytes += len(sc.Bytes()) + 1
			}
			if res.StatusCode != http.StatusOK || sc.Err() != nil || lines != tc.lines {
				t.Errorf("the %s export: %d, %d lines, %v; want %d lines", tc.format, res.StatusCode, lines, sc.Err(), tc.lines)
			}
			t.Logf("the %s export: %.1f MiB in %s", tc.format, float64(bytes)/(1<<20), time.Since(began).Round(time.Millisecond))
		})
	}
	wg.Wait()
	r.checkPeak(t, fmt.Sprintf("two exports of %d conversations at once", conversations))
}

// fillConversations stores n conversations of the merchant, each of two questions and two answers of a common
// size.
func fillConversations(t *testing.T, path, merchantID string, n int) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	now := time.Now().UTC().Add(-time.Hour)
	question := "Do you deliver to the Netherlands, and how long does it take to get a parcel there in winter?"
	answer := strings.Repeat("We ship to the Netherlands with DHL; parcels usually arrive within three working days. ", 3)
	const batch = 5000
	for first := 0; first < n; first += batch {
		err := st.Write(t.Context(), func(tx store.Tx) error {
			for i := first; i < min(first+batch, n); i++ {
				at := now.Add(-time.Duration(i) * time.Second)
				for turn := range 2 {
					ex := store.Exchange{MerchantID: merchantID, ConversationID: fmt.Sprintf("conv_%06d", i),
						VisitorID: fmt.Sprintf("visitor_%06d", i), NewConversation: turn == 0, ConversationExists: turn == 1,
						Question: store.Message{ID: fmt.Sprintf("q_%06d_%d", i, turn), Role: store.RoleVisitor, Text: question,
							CreatedAt: at.Add(time.Duration(turn) * time.Millisecond)},
						Answer: store.Message{ID: fmt.Sprintf("a_%06d_%d", i, turn), Role: store.RoleAssistant, Text: answer,
							CreatedAt: at.Add(time.Duration(turn) * time.Millisecond), Answered: true}}
					if _, err := tx.UpsertConversation(t.Context(), ex); err != nil {
						return err
					}
					if err := tx.InsertMessages(t.Context(), ex); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
