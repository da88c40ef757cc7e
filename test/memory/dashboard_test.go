//go:build integration

package memory

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/dev/devidp"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

// audience is the dashboard's OIDC client ID in these tests.
const audience = "parley-memory-test"

// dashboardRuntime is `parley runtime` as the operator runs it for a ChatRuntime with the default resources (its
// index cache and its memory limit), with the dashboard on and a dev issuer to sign in at.
type dashboardRuntime struct {
	*runtimeproc.Process
	// request is the runtime container's default memory request.
	request resource.Quantity
}

// startDashboardRuntime writes the merchants' bundles and starts the runtime on the SQLite file dbPath.
func startDashboardRuntime(t *testing.T, dbPath string, merchants ...*tenant.Bundle) *dashboardRuntime {
	t.Helper()
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "parley-system"}}
	resources := render.RuntimeDeployment(rt, "parley:test").Spec.Template.Spec.Containers[0].Resources
	request, limit := (*resources.Requests)[corev1.ResourceMemory], (*resources.Limits)[corev1.ResourceMemory]
	if request.IsZero() || limit.IsZero() {
		t.Fatal("the operator renders no default memory request or limit for the runtime")
	}

	dir := filepath.Join(t.TempDir(), "tenants")
	if err := os.MkdirAll(dir, 0o700); err != nil { // the runtime reads it even with no merchant
		t.Fatal(err)
	}
	for _, b := range merchants {
		b.APIVersion = tenant.APIVersion
		bundletest.WriteFile(t, filepath.Join(dir, b.MerchantID+".json"), b)
	}

	idpServer := httptest.NewUnstartedServer(nil)
	idp, err := devidp.New("http://" + idpServer.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	idpServer.Config.Handler = idp.Handler()
	idpServer.Start()
	t.Cleanup(idpServer.Close)

	addr := runtimeproc.FreeAddress(t)
	p := runtimeproc.StartOn(t, addr, runtimeproc.Build(t),
		[]string{contract.EnvMemoryLimit + "=" + strconv.FormatInt(limit.Value(), 10)},
		"--tenants-dir="+dir, "--sqlite-path="+dbPath, "--log-level=warn",
		contract.Arg(contract.FlagIndexCacheBytes, strconv.FormatInt(render.IndexCacheBytes(rt), 10)),
		contract.Arg(contract.FlagPublicURL, "http://"+addr),
		contract.Arg(contract.FlagOIDCIssuer, idp.URL()), contract.Arg(contract.FlagOIDCAudience, audience))
	return &dashboardRuntime{Process: p, request: request}
}

// checkPeak fails t when the runtime's peak RSS is past its default memory request.
func (r *dashboardRuntime) checkPeak(t *testing.T, what string) {
	t.Helper()
	peak := r.PeakRSS(t)
	t.Logf("%s: peak RSS %.1f MiB, memory request %s", what, float64(peak)/(1<<20), r.request.String())
	if peak > r.request.Value() {
		t.Errorf("%s: peak RSS %.1f MiB is past the default memory request %s", what, float64(peak)/(1<<20), r.request.String())
	}
}

// ownerPlan is a plan whose request rate does not get in the way of the tests.
func ownerPlan() tenant.Plan {
	return tenant.Plan{Name: "pro", RequestsPerSecond: 1000, Burst: 1000, APIAccess: true, KnowledgeItems: 1000,
		KnowledgeCharacters: 2_000_000}
}

// owner is a browser signed in to the dashboard.
type owner struct {
	t    *testing.T
	http *http.Client
	base string
}

// signIn signs email in through the dev issuer's code flow.
func signIn(t *testing.T, base, email string) *owner {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	o := &owner{t: t, base: base, http: &http.Client{Jar: jar, Timeout: 2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	res := o.do(http.MethodGet, base+"/dashboard/", nil, "")
	for range 3 { // the dashboard, its login, the issuer's page
		if res.status != http.StatusSeeOther {
			break
		}
		res = o.do(http.MethodGet, res.next, nil, "")
	}
	if res.status != http.StatusOK || !strings.Contains(res.url.Path, "/authorize") {
		t.Fatalf("expected the issuer's sign-in page, got %d at %s", res.status, res.url)
	}
	form := res.url.Query()
	form.Set("email", email)
	u := *res.url
	u.RawQuery = ""
	res = o.do(http.MethodPost, u.String(), strings.NewReader(form.Encode()), "application/x-www-form-urlencoded")
	for res.status == http.StatusSeeOther && !strings.HasSuffix(res.next, "/dashboard/") {
		res = o.do(http.MethodGet, res.next, nil, "")
	}
	if res.status != http.StatusSeeOther {
		t.Fatalf("signing in ended with %d at %s", res.status, res.url)
	}
	return o
}

// reply is an answer, read whole.
type reply struct {
	status int
	// url is the request's; next is where a redirect sends the browser.
	url  *url.URL
	next string
	body string
}

// do sends a request from the dashboard's own pages and reads the answer whole.
func (o *owner) do(method, u string, body io.Reader, contentType string) reply {
	o.t.Helper()
	res, err := o.send(method, u, body, contentType)
	if err != nil {
		o.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		o.t.Fatal(err)
	}
	r := reply{status: res.StatusCode, url: res.Request.URL, body: string(data)}
	if loc := res.Header.Get("Location"); loc != "" {
		next, err := res.Request.URL.Parse(loc)
		if err != nil {
			o.t.Fatal(err)
		}
		r.next = next.String()
	}
	return r
}

// send sends a request as the dashboard's own pages do.
func (o *owner) send(method, u string, body io.Reader, contentType string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(o.t.Context(), method, u, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Origin", o.base)
	}
	return o.http.Do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// upload imports file through the knowledge page's form and returns the answer's status and page.
func (o *owner) upload(name string, file []byte) (int, string) {
	o.t.Helper()
	page := o.do(http.MethodGet, o.base+"/dashboard/knowledge", nil, "")
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		o.t.Fatalf("no CSRF token on the knowledge page: %d", page.status)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("csrf", m[1])
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(file)
	_ = mw.Close()
	res := o.do(http.MethodPost, o.base+"/dashboard/knowledge/import", &form, mw.FormDataContentType())
	return res.status, res.body
}

// TestImportOfEmptyRowsStaysWithinTheMemoryRequest uploads, on a plan with the largest import bounds a Plan may
// set, a 4 MiB CSV file of empty rows, which once made the runtime validate and render two million problems, and
// a 4 MiB file of as many bad rows as the plan lets through, and checks that each is refused with a short page
// and that the runtime's peak memory stays within its default memory request.
func TestImportOfEmptyRowsStaysWithinTheMemoryRequest(t *testing.T) {
	plan := ownerPlan()
	plan.ImportItems, plan.ImportBytes = tenant.MaxImportItems, tenant.MaxImportBytes
	r := startDashboardRuntime(t, filepath.Join(t.TempDir(), "parley.db"), &tenant.Bundle{MerchantID: "shop", DisplayName: "Shop",
		Plan: plan, Owners: []tenant.Owner{{Email: "owner@shop.example"}}})
	o := signIn(t, r.URL, "owner@shop.example")

	// A little under 4 MiB, so that the form around it fits what the dashboard reads of a post before this change.
	header := "title,content\n"
	empty := header + strings.Repeat(",\n", (tenant.MaxImportBytes-1024-len(header))/2)
	row := "," + strings.Repeat("c", 400) + "\n" // no title
	bad := header + strings.Repeat(row, min(tenant.MaxImportItems, (tenant.MaxImportBytes-len(header))/len(row)))
	for _, tc := range []struct {
		name, file, want string
	}{
		{"empty rows", empty, fmt.Sprintf("At most %d items can be imported at once.", tenant.MaxImportItems)},
		{"bad rows", bad, "more rows have problems."},
	} {
		status, page := o.upload("knowledge.csv", []byte(tc.file))
		t.Logf("%s: a %.1f MiB file, answered %d with a page of %d KiB", tc.name, float64(len(tc.file))/(1<<20), status, len(page)>>10)
		if status != http.StatusUnprocessableEntity || !strings.Contains(page, tc.want) {
			t.Errorf("%s: %d, want 422 with %q", tc.name, status, tc.want)
		}
		if len(page) > 64<<10 {
			t.Errorf("%s: a page of %d KiB, want a short one", tc.name, len(page)>>10)
		}
	}
	r.checkPeak(t, "two 4 MiB imports of bad rows")
}

// TestConcurrentLeadExportsStayWithinTheMemoryRequest downloads, twenty at once, the lead exports of ten
// merchants with 50,000 leads each (two exports of each merchant, as many as one merchant may run at once), and
// checks that every export is whole and that the runtime's peak memory stays within its default memory request.
func TestConcurrentLeadExportsStayWithinTheMemoryRequest(t *testing.T) {
	const (
		merchants = 10
		leads     = 50_000
	)
	dbPath := filepath.Join(t.TempDir(), "parley.db")
	bundles := make([]*tenant.Bundle, merchants)
	for i := range bundles {
		id := fmt.Sprintf("shop%02d", i)
		bundles[i] = &tenant.Bundle{MerchantID: id, DisplayName: id, Plan: ownerPlan(), Owners: []tenant.Owner{{Email: "owner@" + id + ".example"}}}
	}
	fillLeads(t, dbPath, bundles, leads)
	r := startDashboardRuntime(t, dbPath, bundles...)

	var wg sync.WaitGroup
	for _, b := range bundles {
		o := signIn(t, r.URL, "owner@"+b.MerchantID+".example")
		for range 2 {
			wg.Go(func() {
				res, err := o.send(http.MethodGet, r.URL+"/dashboard/leads.csv", nil, "")
				if err != nil {
					t.Error(err)
					return
				}
				defer func() { _ = res.Body.Close() }()
				rows := 0
				cr := csv.NewReader(res.Body)
				cr.ReuseRecord = true
				for {
					if _, err = cr.Read(); err != nil {
						break
					}
					rows++
				}
				if res.StatusCode != http.StatusOK || !errors.Is(err, io.EOF) || rows != leads+1 {
					t.Errorf("%s's export: %d, %d rows, %v", b.MerchantID, res.StatusCode, rows, err)
				}
			})
		}
	}
	wg.Wait()
	r.checkPeak(t, fmt.Sprintf("%d exports of %d leads at once", 2*merchants, leads))
}

// fillLeads stores n leads of each merchant, with contact details of a common size.
func fillLeads(t *testing.T, path string, merchants []*tenant.Bundle, n int) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	now := time.Now().UTC().Add(-time.Hour)
	for _, b := range merchants {
		err := st.Write(t.Context(), func(tx store.Tx) error {
			for i := range n {
				at := now.Add(-time.Duration(i) * time.Second)
				l := store.Lead{MerchantID: b.MerchantID, ID: fmt.Sprintf("lead_%s_%06d", b.MerchantID, i),
					ConversationID: fmt.Sprintf("conv_%06d", i), VisitorID: fmt.Sprintf("visitor_%06d", i),
					Contact: store.Contact{Name: fmt.Sprintf("Visitor %d", i), Email: fmt.Sprintf("visitor%d@customer.example", i),
						Phone: "+49 30 1234567", Message: "Please call me back about the delivery of my order to the new address.",
						Consent: true}, Source: store.LeadFromForm, CreatedAt: at, UpdatedAt: at}
				if err := tx.InsertLead(t.Context(), l); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
