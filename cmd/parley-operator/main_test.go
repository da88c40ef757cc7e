package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunOperatorFlags(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
	}{
		{args: []string{"--no-such-flag"}, wantErr: "flag provided but not defined"},
		{args: []string{"stray"}, wantErr: "unexpected arguments"},
		{args: []string{"--log-level=loud"}, wantErr: "invalid value"},
		{args: []string{"--help"}, wantErr: "help requested"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			err := runOperator(t.Context(), tc.args, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error %q, got %v", tc.wantErr, err)
			}
		})
	}
}
