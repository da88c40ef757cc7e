package server

import (
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// storable reports whether s is text both stores keep as it is: valid UTF-8 without NUL, which PostgreSQL
// refuses in text and SQLite would keep, so that both stores answer bad input alike.
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// query parses the request's query string strictly: a malformed escape or a parameter that is not storable text
// is refused with 400 rather than dropped, so that a filter the caller meant is never silently ignored.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "the query string is malformed: %v", err)
	}
	for name, values := range q {
		if !storable(name) {
			return nil, newError(http.StatusBadRequest, codeInvalidRequest, "a query parameter's name is not text")
		}
		for _, v := range values {
			if !storable(v) {
				return nil, newError(http.StatusBadRequest, codeInvalidRequest, "query parameter %s must be UTF-8 text without NUL characters", name)
			}
		}
	}
	return q, nil
}

// unstorableField names the first string of a decoded request body that is not storable text, or "" when all
// are; the name is the JSON field's (tags[2] for an element of an array).
func unstorableField(v reflect.Value, name string) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return unstorableField(v.Elem(), name)
	case reflect.String:
		if !storable(v.String()) {
			return name
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if f := unstorableField(v.Index(i), name+"["+strconv.Itoa(i)+"]"); f != "" {
				return f
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			if f := unstorableField(v.Field(i), jsonName(t.Field(i))); f != "" {
				return f
			}
		}
	}
	return ""
}

// jsonName is the name a struct field has in JSON.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}
