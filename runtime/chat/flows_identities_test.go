package chat_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// identities: a merchant ID's data is the data of one Merchant, known by its UID. The first Merchant admitted
// adopts what the ID holds (an install from before UIDs keeps its data); the same UID again changes nothing, even
// after a restart; a new UID under the same ID (a Merchant deleted and created again, also while the runtime was
// down) finds its predecessor's data erased, counted and logged without content; another merchant's data stays.
func (h harness) identities(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	seed := func(merchantID string) {
		t.Helper()
		ex := withContact(storetest.Exchange(merchantID, "c1", storetest.Base, "mail me at ana@example.com", "sure"),
			store.Contact{Email: "ana@example.com"})
		ex.MonthlyLimit = 10
		record(t, s, ex)
		mustCreateKnowledge(t, s, storetest.Item(merchantID, "k1", storetest.Base), 0)
	}
	seed("shop")
	seed("other")
	wantOther := snapshot(t, s, "other", "")
	held := snapshot(t, s, "shop", "")
	if held.conversations != 1 || held.leads != 1 || held.knowledge != 1 {
		t.Fatalf("seeded %+v", held)
	}

	var logs bytes.Buffer
	reg := prometheus.NewPedanticRegistry()
	open := func(reg prometheus.Registerer) *chat.Identities {
		t.Helper()
		ids, err := chat.NewIdentities(ctx, chat.IdentitiesConfig{Store: s, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
			Registry: reg, Now: func() time.Time { return storetest.Base }})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	ids := open(reg)
	admit := func(ids *chat.Identities, merchantID, uid string) {
		t.Helper()
		if err := ids.Admit(ctx, merchantID, uid); err != nil {
			t.Fatal(err)
		}
	}
	uids := func() map[string]string {
		t.Helper()
		got, err := s.MerchantUIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	admit(ids, "shop", "")
	if got := uids(); len(got) != 0 {
		t.Errorf("a bundle without a UID recorded %v", got)
	}
	admit(ids, "shop", "uid-1") // an upgrade: the data has no UID yet and is adopted
	admit(ids, "other", "uid-other")
	if got := snapshot(t, s, "shop", ""); got != held {
		t.Errorf("adopting changed the data: %+v, want %+v", got, held)
	}
	if got := uids(); got["shop"] != "uid-1" || got["other"] != "uid-other" || len(got) != 2 {
		t.Errorf("recorded UIDs %v", got)
	}
	admit(open(nil), "shop", "uid-1") // a restart, the same Merchant
	if got := snapshot(t, s, "shop", ""); got != held {
		t.Errorf("admitting the same UID after a restart changed the data: %+v, want %+v", got, held)
	}

	admit(open(nil), "shop", "uid-2") // created again while this runtime was down: another process's Identities
	if got := snapshot(t, s, "shop", ""); got != (merchantData{}) {
		t.Errorf("the new Merchant under the ID holds %+v of its predecessor's", got)
	}
	if got := uids()["shop"]; got != "uid-2" {
		t.Errorf("the ID's UID is %q, want uid-2", got)
	}
	if got := snapshot(t, s, "other", ""); got != wantOther {
		t.Errorf("another merchant's data changed: %+v, want %+v", got, wantOther)
	}

	seed("shop")
	admit(ids, "shop", "uid-3") // the running process, whose memory still says uid-1
	if got := snapshot(t, s, "shop", ""); got != (merchantData{}) {
		t.Errorf("the third Merchant under the ID holds %+v of its predecessor's", got)
	}
	if n := counterValue(t, reg, "parley_runtime_merchants_replaced_total"); n != 1 {
		t.Errorf("replaced merchants counted %v, want 1 (this process replaced one)", n)
	}
	if n := counterValue(t, reg, "parley_runtime_replaced_rows_total"); n < 4 {
		t.Errorf("replaced rows counted %v, want at least 4", n)
	}
	if strings.Contains(logs.String(), "ana@example.com") || !strings.Contains(logs.String(), `"previous_uid":"uid-2"`) {
		t.Errorf("the log is %s", logs.String())
	}

	if _, err := chat.EraseMerchant(ctx, s, "shop"); err != nil {
		t.Fatal(err)
	}
	if got := uids(); got["shop"] != "" {
		t.Errorf("erasing the merchant kept its UID %q", got["shop"])
	}
}
