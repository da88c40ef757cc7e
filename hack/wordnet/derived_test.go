package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunDerived checks the table of derived forms on a small dictionary in WordNet's format: a derivation
// pointer relates its two words, listed once under the first; a pertainym pointer does too; a pair Snowball stems
// alike, a multi-word lemma and a semantic pointer (between whole synsets, "0000") give nothing.
func TestRunDerived(t *testing.T) {
	files := map[string]string{
		"data.noun": "  1 licence header line\n" +
			"00000100 04 n 01 pregnancy 0 001 + 00000100 a 0101 | the state of being pregnant  \n" +
			"00000200 04 n 02 decision 0 determination 0 001 + 00000200 v 0101 | a position reached  \n" +
			"00000300 04 n 01 booking 0 001 + 00000300 v 0101 | a reservation  \n" +
			"00000400 04 n 01 hyperemesis_gravidarum 0 001 + 00000100 a 0101 | sickness  \n",
		"data.verb": "00000200 31 v 01 decide 0 002 + 00000200 n 0101 @ 00000300 v 0000 | make up one's mind  \n" +
			"00000300 31 v 01 book 0 001 + 00000300 n 0101 | reserve  \n",
		"data.adj": "00000100 00 a 01 pregnant 0 001 + 00000100 n 0101 | carrying offspring  \n" +
			"00000200 01 s 01 yearly 0 000 | every year  \n",
		"data.adv": "00000100 02 r 01 annually 0 001 \\ 00000200 s 0101 | every year  \n",
	}
	got := generateTable(t, files, runDerived)
	want := []string{"annually yearly", "decide decision", "pregnancy pregnant"}
	if !slices.Equal(got, want) {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseSynsetErrors(t *testing.T) {
	for _, line := range []string{
		"00000100 04 n",
		"00000100 04 n zz pregnancy 0 000",
		"00000100 04 n 02 pregnancy 0",
		"00000100 04 n 01 pregnancy 0 002 + 00000100 a 0101",
	} {
		if _, err := parseSynset(strings.Fields(line)); err == nil {
			t.Errorf("parseSynset(%q) succeeded, want an error", line)
		}
	}
}

// generateTable writes files, a small dictionary in WordNet's format, runs the generator run on it and returns
// the lines of the table it wrote, without its comments.
func generateTable(t *testing.T, files map[string]string, run func(dict, out string) error) []string {
	t.Helper()
	dict := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dict, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "table.txt")
	if err := run(dict, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for line := range strings.Lines(string(data)) {
		if !strings.HasPrefix(line, "#") {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	return lines
}
