// Package api holds the runtime's OpenAPI document, the source of truth for the /api/v1 interface.
package api

import (
	_ "embed"
	"fmt"

	"sigs.k8s.io/yaml"
)

//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIJSON returns the OpenAPI document as JSON, as served at /api/v1/openapi.json.
func OpenAPIJSON() ([]byte, error) {
	data, err := yaml.YAMLToJSON(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("converting the OpenAPI document to JSON: %w", err)
	}
	return data, nil
}
