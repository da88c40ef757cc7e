package chat_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// addLeads stores n form leads of the merchant.
func addLeads(t *testing.T, f *fixture, merchantID string, n int) {
	t.Helper()
	err := f.store.Write(t.Context(), func(tx store.Tx) error {
		for i := range n {
			at := f.now.Add(-time.Duration(i) * time.Millisecond)
			if err := tx.InsertLead(t.Context(), store.Lead{MerchantID: merchantID, ID: fmt.Sprintf("lead-%s-%05d", merchantID, i),
				Contact: store.Contact{Email: fmt.Sprintf("v%d@example.com", i)}, Source: store.LeadFromForm, CreatedAt: at, UpdatedAt: at}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An export gives every lead of the merchant, newest first, and none of another's.
func TestExportLeads(t *testing.T) {
	f := newFixture(t)
	addLeads(t, f, "acme", 1234)
	addLeads(t, f, "other", 3)
	var ids []string
	err := f.svc.ExportLeads(t.Context(), merchant(0), func(l store.Lead) error {
		if l.MerchantID != "acme" {
			t.Fatalf("acme's export holds a lead of %s", l.MerchantID)
		}
		ids = append(ids, l.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1234 || ids[0] != "lead-acme-00000" || ids[1233] != "lead-acme-01233" {
		t.Errorf("%d leads exported, from %v", len(ids), ids[:min(len(ids), 3)])
	}
}

// At most MaxExportsPerMerchant exports of one merchant run at once: one more, of leads or knowledge, is refused
// at once, another merchant's runs, and once one ends the merchant may export again.
func TestExportsPerMerchantAreBounded(t *testing.T) {
	f := newFixture(t)
	addLeads(t, f, "acme", 3)
	addLeads(t, f, "other", 3)
	acme, other := merchant(0), &tenant.Bundle{MerchantID: "other"}
	started := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error)
	for range chat.MaxExportsPerMerchant {
		go func() {
			first := true
			done <- f.svc.ExportLeads(t.Context(), acme, func(store.Lead) error {
				if first {
					first = false
					started <- struct{}{}
					<-release // a client that reads slowly
				}
				return nil
			})
		}()
		<-started
	}
	export := func(m *tenant.Bundle) error {
		return f.svc.ExportLeads(t.Context(), m, func(store.Lead) error { return nil })
	}
	if err := export(acme); !errors.Is(err, chat.ErrTooManyExports) {
		t.Errorf("an export past the bound: %v", err)
	}
	if err := f.svc.ExportKnowledge(t.Context(), acme, func([]store.Knowledge) error { return nil }); !errors.Is(err, chat.ErrTooManyExports) {
		t.Errorf("a knowledge export past the bound: %v", err)
	}
	if err := export(other); err != nil {
		t.Errorf("another merchant's export: %v", err)
	}
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := export(acme); err != nil {
		t.Errorf("an export once one ended: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
