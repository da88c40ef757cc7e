package server

import (
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/runtime/input"
)

// query parses the request's query string strictly (input.Query, the dashboard's rule too): a malformed escape or
// a parameter that is not storable text is refused with 400 rather than dropped.
func query(r *http.Request) (url.Values, error) {
	q, err := input.Query(r.URL.RawQuery)
	if err != nil {
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "%s", err.Error())
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
		if !input.Storable(v.String()) {
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
