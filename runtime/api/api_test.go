package api

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	data, err := OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	for _, path := range []string{"/chat", "/conversations", "/conversations/{id}", "/knowledge", "/knowledge/{id}", "/analytics/overview"} {
		if doc.Paths.Find(path) == nil {
			t.Errorf("the spec's endpoint %s is missing", path)
		}
	}
	codes := doc.Components.Schemas["ErrorCode"].Value.Enum
	for _, want := range []string{"invalid_request", "unauthorized", "conversation_quota_exceeded", "rate_limited"} {
		if !slices.Contains(codes, any(want)) {
			t.Errorf("error code %s is not documented", want)
		}
	}
}
