package dashboard_test

import (
	"net/http"
	"testing"
)

// TestWrongMethodIsRefused checks that a dashboard path asked with GET or POST, whichever it does not take,
// answers 405 with the method it takes, and a path that does not exist 404, signed in or not. (The runtime
// answers the other methods itself, before the dashboard.)
func TestWrongMethodIsRefused(t *testing.T) {
	e := newEnv(t)
	anonymous := newClient(t, e.url)
	signedIn := newClient(t, e.url)
	signedIn.signIn("alpha@owners.example")
	for _, c := range []*client{anonymous, signedIn} {
		for _, tc := range []struct {
			method, path string
			status       int
			allow        string
		}{
			{http.MethodPost, "/dashboard/leads", http.StatusMethodNotAllowed, "GET"},
			{http.MethodPost, "/dashboard/", http.StatusMethodNotAllowed, "GET"},
			{http.MethodGet, "/dashboard/logout", http.StatusMethodNotAllowed, "POST"},
			{http.MethodGet, "/dashboard/knowledge/kn_alpha_0/delete", http.StatusMethodNotAllowed, "POST"},
			{http.MethodGet, "/dashboard/nothing-here", http.StatusNotFound, ""},
			{http.MethodPost, "/dashboard/nothing-here", http.StatusNotFound, ""},
		} {
			res := c.do(tc.method, e.url+tc.path, nil, nil)
			if res.StatusCode != tc.status || res.Header.Get("Allow") != tc.allow {
				t.Errorf("%s %s: %d, Allow %q; want %d, Allow %q", tc.method, tc.path, res.StatusCode, res.Header.Get("Allow"), tc.status, tc.allow)
			}
		}
	}
}
