package lang

import (
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"Isn't it GREAT? Yes…", []string{"isnt", "it", "great", "yes"}},
		{"Größe 42 – Ünïcode", []string{"größe", "42", "ünïcode"}},
		{"free over $75; €10 or £5", []string{"free", "over", "dollar", "75", "euro", "10", "or", "pound", "5"}},
		{"tune-up & e-mail", []string{"tune", "up", "e", "mail"}},
		{"the customers' bags", []string{"the", "customers", "bags"}},
		{"O'Neil's tent", []string{"oneil", "tent"}},
		{"We'd like a room, we're two; I'M late, it’s ok", []string{"we", "like", "a", "room", "we", "two", "i", "late", "it", "ok"}},
		{"don't rock'n'roll", []string{"dont", "rocknroll"}},
		{"a\xffb ok'\xff", []string{"a", "b", "ok"}}, // an invalid byte separates words, as U+FFFD does
		{"", nil},
		{"?!.", nil},
	}
	for _, tt := range tests {
		if got := Tokenize(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three?", []string{"One.", "Two!", "Three?"}},
		{"It filters to 0.1 micron. It costs $39.", []string{"It filters to 0.1 micron.", "It costs $39."}},
		{"Bring gear, e.g. tents. Done", []string{"Bring gear, e.g. tents.", "Done"}},
		{"Limit -7 °C. It weighs 1.1 kg.", []string{"Limit -7 °C.", "It weighs 1.1 kg."}},
		{"Line one\nLine two", []string{"Line one", "Line two"}},
		{"  ", nil},
	}
	for _, tt := range tests {
		if got := SplitSentences(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SplitSentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCompounds(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Why we take X-rays", []string{"xrays"}},
		{"wi-fi and e‑bikes, check-in/out", []string{"wifi", "ebikes", "checkinout"}},
		{"out-of-hours care", []string{"outofhours"}},
		{"a long-winded-and-odd phrase", nil}, // four words are a phrase
		{"24-hour desk, 2-day shipping, and/or", []string{"andor"}},
		{"a - b, c-, -d, e--f", nil},
		{"no compounds here", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := AppendCompounds(nil, tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("AppendCompounds(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
