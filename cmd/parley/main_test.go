package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
		wantOut string
	}{
		{args: nil, wantErr: "a command is required"},
		{args: []string{"--help"}, wantOut: "Commands:"},
		{args: []string{"version"}, wantOut: version},
		{args: []string{"bogus"}, wantErr: `unknown command "bogus"`},
		{args: []string{"operator"}, wantErr: "parley-operator"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tc.args, &stdout, &stderr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout.String(), tc.wantOut) {
				t.Errorf("stdout %q lacks %q", stdout.String(), tc.wantOut)
			}
		})
	}
}
