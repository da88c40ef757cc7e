package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, slog.LevelWarn, "json").Info("dropped")
	New(&buf, slog.LevelWarn, "json").Warn("kept", "merchant", "acme")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("want one JSON record at warn, got %q: %v", buf.String(), err)
	}
	if rec["msg"] != "kept" || rec["merchant"] != "acme" {
		t.Errorf("record %v", rec)
	}
	buf.Reset()
	New(&buf, slog.LevelInfo, "text").Info("hello", "merchant", "acme")
	if got := buf.String(); !strings.Contains(got, "msg=hello merchant=acme") {
		t.Errorf("text record %q", got)
	}
}
