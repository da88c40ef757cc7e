package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun checks the table on a small thesaurus in MyThes format: each group of synonyms is written once, lower
// case and in order, whichever headword lists it; notes are dropped; broader terms and phrases are left out, and
// so are groups left with one word or with more than maxGroup.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	big := make([]string, maxGroup+1)
	for i := range big {
		big[i] = "wort" + string(rune('a'+i))
	}
	in := "UTF-8\n" +
		"aufzug|1\n" +
		"-|Aufzug|Fahrstuhl|Lift (ugs.)|Transportmittel (Oberbegriff)\n" +
		"fahrstuhl|2\n" +
		"-|Fahrstuhl|Aufzug|Lift (ugs.)|Transportmittel (Oberbegriff)\n" +
		"-|Fahrstuhl|auf und ab\n" +
		"kalt|1\n" +
		"-|kalt|kühl (geh.)|Kälte (Oberbegriff)\n" +
		"viel|1\n" +
		"-|" + strings.Join(big, "|") + "\n"
	src, out := filepath.Join(dir, "th.dat"), filepath.Join(dir, "thesaurus.txt")
	if err := os.WriteFile(src, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(src, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := header + "aufzug fahrstuhl lift\nkalt kühl\n"; string(data) != want {
		t.Errorf("table =\n%s\nwant\n%s", data, want)
	}
}

func TestRunMissingInput(t *testing.T) {
	if err := run(filepath.Join(t.TempDir(), "none.dat"), filepath.Join(t.TempDir(), "out.txt")); err == nil {
		t.Error("run with a missing thesaurus succeeded")
	}
}
