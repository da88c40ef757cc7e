// Package jsonenc appends JSON values to a byte slice, for the few hot encodings (a chat reply, a message's
// sources) where encoding/json's reflection and allocations show in profiles.
package jsonenc

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// AppendString appends s as a JSON string. Bytes of invalid UTF-8, which JSON cannot hold, become U+FFFD, as
// encoding/json writes them.
func AppendString(dst []byte, s string) []byte {
	dst, _ = jsontext.AppendQuote(dst, s) // its only error is invalid UTF-8, already replaced
	return dst
}

// AppendFloat appends f as a JSON number, formatted as encoding/json formats a float64; JSON has no form for
// NaN and the infinities, which are an error.
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json writes it
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}
