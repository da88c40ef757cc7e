package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
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

// awaitStop waits for the command whose run reports on done to end after its context was cancelled, and fails the
// test if it ends with an error or not within 30 seconds.
func awaitStop(t *testing.T, done <-chan error, command string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", command, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop", command)
	}
}
