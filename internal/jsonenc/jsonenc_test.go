package jsonenc

import (
	"encoding/json"
	"math"
	"testing"
)

// AppendString writes valid JSON that reads back as s, each byte of invalid UTF-8 as U+FFFD.
func FuzzAppendString(f *testing.F) {
	for _, seed := range []string{"", "plain", `q"uote\`, "<a href='x'>&amp;</a>", "tab\tnl\ncr\rbs\bff\f\x00\x1f\x7f",
		"é – ü 漢字 🙂", "\u2028\u2029", "\xff\xfe bad \xc3", "\xe2\x80", "end\xe2\x80\xa8"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString([]byte("x"), s)
		var back string
		if err := json.Unmarshal(got[1:], &back); err != nil || string(got[:1]) != "x" {
			t.Fatalf("%q: wrote %s: %v", s, got, err)
		}
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q: wrote %s, which reads back as %q, want %q", s, got[1:], back, want)
		}
	})
}

func FuzzAppendFloat(f *testing.F) {
	for _, seed := range []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.123, -3e-300,
		math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		want, wantErr := json.Marshal(v)
		got, err := AppendFloat(nil, v)
		if (err != nil) != (wantErr != nil) || err == nil && string(got) != string(want) {
			t.Fatalf("%v: got %s %v, want %s %v", v, got, err, want, wantErr)
		}
	})
}

func TestAppendFloatRefusesWhatJSONCannotHold(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AppendFloat(nil, v); err == nil {
			t.Errorf("%v: no error", v)
		}
	}
}
