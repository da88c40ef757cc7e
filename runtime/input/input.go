// Package input holds the rules for the text callers send in a request's address, which the API and the
// dashboard apply alike: what both stores can keep, and a query string read strictly. A query or path parameter
// that breaks them is refused as the caller's mistake, never passed on to a store to fail there (PostgreSQL refuses
// NUL and invalid UTF-8 in text) nor silently dropped (a malformed escape).
package input

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Storable reports whether s is text both stores keep as it is: valid UTF-8 without NUL, which PostgreSQL
// refuses in text and SQLite would keep, so that both stores answer bad input alike.
func Storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// QueryError is a query string that breaks the rules; its message names what is wrong, never a value.
type QueryError struct{ msg string }

func (e *QueryError) Error() string { return e.msg }

// Query parses a raw query string strictly: a malformed escape, or a parameter name or value that is not
// storable text, is a *QueryError rather than dropped, so that a filter the caller meant is never silently
// ignored.
func Query(raw string) (url.Values, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, &QueryError{msg: fmt.Sprintf("the query string is malformed: %v", err)}
	}
	for name, values := range q {
		if !Storable(name) {
			return nil, &QueryError{msg: "a query parameter's name is not text"}
		}
		for _, v := range values {
			if !Storable(v) {
				return nil, &QueryError{msg: fmt.Sprintf("query parameter %s must be UTF-8 text without NUL characters", name)}
			}
		}
	}
	return q, nil
}
