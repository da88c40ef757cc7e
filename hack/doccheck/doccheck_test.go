package doccheck

import (
	"bytes"
	"os"
	"slices"
	"testing"
	"testing/fstest"
)

// repoRoot is the repository's root as seen from this package's directory, where go test runs.
const repoRoot = "../.."

// readmeMaxLines keeps README to what Parley is, how to try and install it, and where to read on; the rest has a
// page of its own under docs/.
const readmeMaxLines = 250

// TestRepositoryLinks checks every link of README.md and docs/ against the repository as it is.
func TestRepositoryLinks(t *testing.T) {
	fsys := os.DirFS(repoRoot)
	docs, err := Markdown(fsys, "docs")
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{"README.md"}, docs...)
	broken, err := Check(fsys, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Errorf("broken link: %s", b)
	}
}

func TestREADMEIsShort(t *testing.T) {
	src, err := os.ReadFile(repoRoot + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte("\n")); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to the page of docs/ for its audience", n, readmeMaxLines)
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Install with Helm", "install-with-helm"},
		{"Tenants and grants (for platform teams)", "tenants-and-grants-for-platform-teams"},
		{"`make bench-operator`", "make-bench-operator"},
		{"Keys, limits & errors", "keys-limits--errors"},
		{"What's measured: top-1", "whats-measured-top-1"},
		{"snake_case stays", "snake_case-stays"},
		{"Über Öffnungszeiten", "über-öffnungszeiten"},
		{"Version 1.2", "version-12"},
	} {
		if got := Slug(plainText(tc.heading)); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("# Parley\n\n" +
			"See [the API](docs/api.md#errors), [keys](docs/api.md#keys-limits--errors), [home](#parley),\n" +
			"[a dead page](docs/gone.md), [a dead anchor](docs/api.md#nowhere), [repeat](docs/api.md#usage-1),\n" +
			"[the spec](runtime/api/openapi.yaml), [a line](runtime/api/openapi.yaml#L12),\n" +
			"[not a line](runtime/api/openapi.yaml#chat), [up](../outside.md), [web](https://example.com/x#y),\n" +
			"[`code` in text](docs/), [root](/docs/api.md), [spaced](<docs/api.md>), [titled](docs/api.md \"API\").\n" +
			"`[not a link](nowhere.md)`\n\n" +
			"```sh\n[in a fence](nowhere.md)\n```\n\n" +
			"[ref]: docs/missing.md\n")},
		"docs/api.md": {Data: []byte("# The API\n\n## Errors\n\n## Keys, limits & errors\n\n## Usage\n\n## Usage\n\n" +
			"<a id=\"custom\"></a>\n[back](../README.md#parley) [custom](#custom) [self](api.md#errors)\n")},
		"runtime/api/openapi.yaml": {Data: []byte("openapi: 3.1.0\n")},
	}
	broken, err := Check(fsys, []string{"README.md", "docs/api.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range broken {
		got = append(got, b.Target)
	}
	want := []string{"docs/gone.md", "docs/api.md#nowhere", "runtime/api/openapi.yaml#chat", "../outside.md", "docs/missing.md"}
	if !slices.Equal(got, want) {
		t.Errorf("broken links %q, want %q", got, want)
	}
	if len(broken) > 0 && broken[0].Line != 4 {
		t.Errorf("%s: reported on line %d, want 4", broken[0], broken[0].Line)
	}
}
