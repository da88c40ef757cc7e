//go:build integration

package e2e

import (
	"database/sql"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "modernc.org/sqlite"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// TestDeletedMerchantsDataIsErased: the conversations a merchant's visitors had are erased by the runtime once the
// Merchant is deleted and the retention has passed (none here: deletedMerchantRetention is 0s), another
// merchant's stay, and the deleted merchant's ID stays refused to another namespace, before and after erasure.
func TestDeletedMerchantsDataIsErased(t *testing.T) {
	createPlan(t, "e2e-erase", 50)
	goneKey := tenant(t, "e2e-erase", "e2e-erase")
	keptKey := tenant(t, "e2e-erase-kept", "e2e-erase")
	for _, key := range []string{goneKey, keptKey} {
		eventually(t, 30*time.Second, func() error {
			if r := chat(t, key, "hello"); r.Status != http.StatusOK {
				return fmt.Errorf("chat answered %d: %s", r.Status, r.Body)
			}
			return nil
		})
	}
	const gone, kept = "e2e-erase-shop", "e2e-erase-kept-shop" // the IDs derived from namespace and name
	if n := storedRows(t, gone); n == 0 {
		t.Fatal("the runtime stored nothing for the merchant")
	}

	m := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "e2e-erase"}}
	if err := cluster.client.Delete(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	// The runtime sweeps every minute.
	eventually(t, 90*time.Second, func() error {
		if n := storedRows(t, gone); n != 0 {
			return fmt.Errorf("%d rows of the deleted merchant are still stored", n)
		}
		return nil
	})
	if n := storedRows(t, kept); n == 0 {
		t.Error("another merchant's conversations were erased")
	}

	claimNS := "e2e-erase-claim"
	claimant := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: claimNS},
		Spec: chatv1alpha1.MerchantSpec{DisplayName: "claim", MerchantID: gone,
			PlanRef: chatv1alpha1.LocalObjectReference{Name: "e2e-erase"}}}
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: claimNS}}, claimant} {
		if err := cluster.client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, func() error {
		if err := cluster.client.Get(t.Context(), client.ObjectKeyFromObject(claimant), claimant); err != nil {
			return err
		}
		c := meta.FindStatusCondition(claimant.Status.Conditions, chatv1alpha1.ConditionReady)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != chatv1alpha1.ReasonMerchantIDConflict {
			return fmt.Errorf("the claimant of an erased merchant's ID is %+v", c)
		}
		return nil
	})
}

// storedRows counts the rows of a merchant's conversations, messages and monthly counts in the runtime's database.
func storedRows(t *testing.T, merchantID string) int {
	t.Helper()
	return countRows(t, `SELECT
		(SELECT COUNT(*) FROM conversations WHERE merchant_id = ?1) +
		(SELECT COUNT(*) FROM messages WHERE merchant_id = ?1) +
		(SELECT COUNT(*) FROM monthly_conversations WHERE merchant_id = ?1)`, merchantID)
}

// countRows runs a count query on the runtime's database, read-only beside the runtime.
func countRows(t *testing.T, query string, args ...any) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+cluster.sqlitePath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var n int
	if err := db.QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
