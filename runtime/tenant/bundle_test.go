package tenant

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func validBundle() *Bundle {
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Bundle{
		APIVersion:     APIVersion,
		MerchantID:     "acme",
		UID:            "6f1c2b0e-5d1a-4f3e-9a57-0c9b1d2e3f40",
		DisplayName:    "Acme Outdoor",
		Source:         "acme/acme",
		Plan:           Plan{Name: "enterprise", RequestsPerSecond: 10, Burst: 20, MonthlyConversations: 100, APIAccess: true, Webhooks: true},
		AllowedOrigins: []string{"https://acme.example", "http://localhost:3000", "http://[::1]:8080"},
		Owners:         []Owner{{Email: "owner@acme.example"}, {Subject: "1234"}},
		Widget:         Widget{Title: "Acme", Color: "#0f766e"},
		Assistant:      Assistant{Provider: "large", Model: "llama3.1:70b", APIKey: "sk-own-key"},
		APIKeys: []APIKey{
			{ID: "k1", Type: KeyPublishable, SHA256: strings.Repeat("ab", 32)},
			{ID: "k2", Type: KeySecret, SHA256: strings.Repeat("cd", 32), ExpiresAt: &exp},
		},
		Webhooks: []Webhook{{
			ID: "crm", URL: "https://crm.acme.example/hooks", Events: []Event{EventLeadCreated},
			SigningSecrets: []string{"whsec_" + strings.Repeat("A", 43)},
		}},
		Sources: []Source{
			{ID: "help-centre", Generation: 2, Type: SourceWebsite, URL: "https://acme.example/help/", Include: []string{"/help/*"},
				Exclude: []string{"/help/internal/*"}, MaxPages: 300, SyncIntervalSeconds: 86400},
			{ID: "docs.v2", Generation: 1, Type: SourceGit, URL: "https://git.acme.example/docs.git", Ref: "main"},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	want := validBundle()
	data, err := Marshal(want)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	gotJSON, _ := json.Marshal(got)
	if string(gotJSON) != string(data) {
		t.Errorf("round trip changed the bundle:\n got %s\nwant %s", gotJSON, data)
	}
}

func TestValidateRejects(t *testing.T) {
	secret := "whsec_" + strings.Repeat("S", 43)
	cases := []struct {
		name   string
		mutate func(*Bundle)
		want   string
	}{
		{"version", func(b *Bundle) { b.APIVersion = "v0" }, "apiVersion"},
		{"merchant id", func(b *Bundle) { b.MerchantID = "Acme_1" }, "merchantID"},
		{"merchant id too long", func(b *Bundle) { b.MerchantID = strings.Repeat("a", 64) }, "merchantID"},
		{"uid with a space", func(b *Bundle) { b.UID = "6f1c2b0e 5d1a" }, "uid"},
		{"uid with a line break", func(b *Bundle) { b.UID = "a\nlevel=ERROR" }, "uid"},
		{"uid too long", func(b *Bundle) { b.UID = strings.Repeat("a", 129) }, "uid"},
		{"rate", func(b *Bundle) { b.Plan.RequestsPerSecond = 0 }, "requestsPerSecond"},
		{"burst", func(b *Bundle) { b.Plan.Burst = 0 }, "burst"},
		{"negative ceiling", func(b *Bundle) { b.Plan.MonthlyConversations = -1 }, "ceilings"},
		{"negative import items", func(b *Bundle) { b.Plan.ImportItems = -1 }, "import bounds"},
		{"negative import bytes", func(b *Bundle) { b.Plan.ImportBytes = -1 }, "import bounds"},
		{"origin with path", func(b *Bundle) { b.AllowedOrigins = []string{"https://a.example/x"} }, "allowed origin"},
		{"wildcard origin", func(b *Bundle) { b.AllowedOrigins = []string{"*"} }, "allowed origin"},
		{"owner with both", func(b *Bundle) { b.Owners = []Owner{{Email: "a@b", Subject: "s"}} }, "owners[0]"},
		{"owner with none", func(b *Bundle) { b.Owners = []Owner{{}} }, "owners[0]"},
		{"key without id", func(b *Bundle) { b.APIKeys[0].ID = "" }, "apiKeys[0].id"},
		{"duplicate key id", func(b *Bundle) { b.APIKeys[1].ID = "k1" }, "duplicated"},
		{"key type", func(b *Bundle) { b.APIKeys[0].Type = "admin" }, "apiKeys[0].type"},
		{"key hash", func(b *Bundle) { b.APIKeys[0].SHA256 = "pk_plaintext" }, "sha256"},
		{"provider", func(b *Bundle) { b.Assistant.Provider = "Large_1" }, "assistant.provider"},
		{"model without provider", func(b *Bundle) { b.Assistant.Provider = "" }, "assistant.provider"},
		{"webhook url", func(b *Bundle) { b.Webhooks[0].URL = "ftp://x" }, "url"},
		{"webhook no events", func(b *Bundle) { b.Webhooks[0].Events = nil }, "no event"},
		{"webhook unknown event", func(b *Bundle) { b.Webhooks[0].Events = []Event{"order.paid"} }, "unknown event"},
		{"webhook no secret", func(b *Bundle) { b.Webhooks[0].SigningSecrets = nil }, "signing secrets"},
		{"webhook three secrets", func(b *Bundle) { b.Webhooks[0].SigningSecrets = []string{secret, secret, secret} }, "signing secrets"},
		{"source id", func(b *Bundle) { b.Sources[0].ID = "src_1" }, "sources[0].id"},
		{"duplicate source id", func(b *Bundle) { b.Sources[1].ID = "help-centre" }, "duplicated"},
		{"source type", func(b *Bundle) { b.Sources[0].Type = "ftp" }, "sources[0].type"},
		{"source url", func(b *Bundle) { b.Sources[0].URL = "file:///etc/passwd" }, "sources[0].url"},
		{"source generation", func(b *Bundle) { b.Sources[0].Generation = 0 }, "generation"},
		{"source pages", func(b *Bundle) { b.Sources[0].MaxPages = -1 }, "maxPages"},
		{"too many sources", func(b *Bundle) {
			b.Sources = make([]Source, MaxSources+1)
			for i := range b.Sources {
				b.Sources[i] = Source{ID: fmt.Sprintf("s%d", i), Generation: 1, Type: SourceWebsite, URL: "https://a.example/"}
			}
		}, "more than"},
		{"webhook bad secret", func(b *Bundle) { b.Webhooks[0].SigningSecrets = []string{"hunter2-plaintext"} }, "signing secret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := validBundle()
			tc.mutate(b)
			err := b.Validate()
			if err == nil {
				t.Fatalf("Validate accepted a bad bundle")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error reveals a signing secret: %q", err)
			}
		})
	}
}

// A plan's import bounds: its own, the defaults when it sets none, and never past the most any plan may set.
func TestImportLimits(t *testing.T) {
	for _, tc := range []struct {
		plan         Plan
		items, bytes int
	}{
		{Plan{}, DefaultImportItems, DefaultImportBytes},
		{Plan{ImportItems: 50, ImportBytes: 64 << 10}, 50, 64 << 10},
		{Plan{ImportItems: MaxImportItems + 1, ImportBytes: MaxImportBytes + 1}, MaxImportItems, MaxImportBytes},
	} {
		if items, bytes := tc.plan.ImportItemsLimit(), tc.plan.ImportBytesLimit(); items != tc.items || bytes != tc.bytes {
			t.Errorf("%+v: %d items and %d bytes, want %d and %d", tc.plan, items, bytes, tc.items, tc.bytes)
		}
	}
}

func TestParseRejects(t *testing.T) {
	good, err := Marshal(validBundle())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"not json":        "{",
		"unknown version": `{"apiVersion":"tenant.chat.parley.dev/v2"}`,
		"unknown field":   strings.Replace(string(good), `"merchantID"`, `"surprise":1,"merchantID"`, 1),
		"trailing data":   string(good) + "{}",
		"wrong type":      strings.Replace(string(good), `"burst":20`, `"burst":"20"`, 1),
		"invalid content": strings.Replace(string(good), `"merchantID":"acme"`, `"merchantID":""`, 1),
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(doc)); err == nil {
				t.Errorf("Parse accepted %s", doc)
			}
		})
	}
}

// FuzzParse checks that Parse never panics and that whatever it accepts survives a round trip unchanged.
func FuzzParse(f *testing.F) {
	good, err := Marshal(validBundle())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"apiVersion":"tenant.chat.parley.dev/v1"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse(data)
		if err != nil {
			return
		}
		again, err := Marshal(b)
		if err != nil {
			t.Fatalf("a parsed bundle does not marshal: %v", err)
		}
		b2, err := Parse(again)
		if err != nil {
			t.Fatalf("a marshalled bundle does not parse: %v", err)
		}
		third, _ := json.Marshal(b2)
		if string(third) != string(again) {
			t.Fatalf("round trip is not stable:\n%s\n%s", again, third)
		}
	})
}
