//go:build integration

package e2e

import (
	"database/sql"
	"fmt"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/testutil/apiclient"
)

// TestRecreatedMerchantStartsEmpty: a Merchant deleted and created again at once under the same namespace and
// name (so the same merchant ID, but a new UID) sees none of its predecessor's conversations, leads or knowledge,
// although the deleted merchant's retention never passed (the runtime had no erasure due: the ID is served again
// before a sweep finds it retired, as when the runtime was down meanwhile).
func TestRecreatedMerchantStartsEmpty(t *testing.T) {
	const ns, id = "e2e-succession", "e2e-succession-shop" // the ID derived from namespace and name
	ctx := t.Context()
	createPlan(t, ns, 50)
	key := tenant(t, ns, ns)
	eventually(t, 30*time.Second, func() error {
		if r := chat(t, key, "hello"); r.Status != http.StatusOK {
			return fmt.Errorf("chat answered %d: %s", r.Status, r.Body)
		}
		return nil
	})
	lead, err := apiclient.Post(ctx, cluster.runtimeURL+"/api/v1/leads", map[string]string{"X-API-Key": key},
		`{"name": "Ada Old", "email": "ada@old.example", "consent": true, "conversation_id": "e2e"}`)
	if err != nil || lead.Status != http.StatusCreated {
		t.Fatalf("creating a lead: %v %d %s", err, lead.Status, lead.Body)
	}
	db, err := sql.Open("sqlite", "file:"+cluster.sqlitePath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	// Knowledge needs an owner's ID token to be written through the API; the test writes it as the store does.
	if _, err := db.ExecContext(ctx, `INSERT INTO knowledge (merchant_id, id, title, content, created_at, updated_at)
		VALUES (?, 'old-returns', 'Returns', 'The old shop took returns for 14 days', 0, 0)`, id); err != nil {
		t.Fatal(err)
	}
	if got := heldRows(t, db, id); got.conversations != 1 || got.messages != 2 || got.leads != 1 || got.knowledge != 1 {
		t.Fatalf("the first Merchant's data is %+v", got)
	}

	old := &chatv1alpha1.Merchant{}
	if err := cluster.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, old); err != nil {
		t.Fatal(err)
	}
	if err := cluster.client.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if err := cluster.client.Get(ctx, client.ObjectKeyFromObject(old), &chatv1alpha1.Merchant{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Merchant is still there: %w", err)
		}
		return nil
	})
	successor := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: chatv1alpha1.MerchantSpec{DisplayName: ns, PlanRef: chatv1alpha1.LocalObjectReference{Name: ns}}}
	if err := cluster.client.Create(ctx, successor); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		if err := cluster.client.Get(ctx, client.ObjectKeyFromObject(successor), successor); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(successor.Status.Conditions, chatv1alpha1.ConditionReady) {
			return fmt.Errorf("the new Merchant is not Ready: %+v", successor.Status.Conditions)
		}
		return nil
	})
	if successor.Status.MerchantID != id || successor.UID == old.UID {
		t.Fatalf("the new Merchant has ID %q and UID %s (the old one's: %s)", successor.Status.MerchantID, successor.UID, old.UID)
	}
	// The key, kept in the namespace, now serves the new Merchant: once it is served, its data is its own.
	eventually(t, 30*time.Second, func() error {
		if r := chat(t, key, "hello again"); r.Status != http.StatusOK {
			return fmt.Errorf("chat answered %d: %s", r.Status, r.Body)
		}
		return nil
	})
	if got := heldRows(t, db, id); got.conversations != 1 || got.messages != 2 || got.leads != 0 || got.knowledge != 0 {
		t.Errorf("the new Merchant holds %+v: the old one's data was not erased before it was served", got)
	}
	var uid string
	if err := db.QueryRowContext(ctx, `SELECT uid FROM merchant_uids WHERE merchant_id = ?`, id).Scan(&uid); err != nil || uid != string(successor.UID) {
		t.Errorf("the store records UID %q (%v) for the merchant ID, want %s", uid, err, successor.UID)
	}
}

// held counts a merchant's rows in the tables a tenant sees.
type held struct{ conversations, messages, leads, knowledge int }

func heldRows(t *testing.T, db *sql.DB, merchantID string) held {
	t.Helper()
	var h held
	if err := db.QueryRowContext(t.Context(), `SELECT
		(SELECT COUNT(*) FROM conversations WHERE merchant_id = ?1),
		(SELECT COUNT(*) FROM messages WHERE merchant_id = ?1),
		(SELECT COUNT(*) FROM leads WHERE merchant_id = ?1),
		(SELECT COUNT(*) FROM knowledge WHERE merchant_id = ?1)`, merchantID).Scan(&h.conversations, &h.messages, &h.leads, &h.knowledge); err != nil {
		t.Fatal(err)
	}
	return h
}
