package contract

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		wantCode   int
		wantStderr string
	}{
		{"success", nil, 0, ""},
		{"failure", errors.New("no cluster"), 2, "parley-operator: no cluster\n"},
		{"help", fmt.Errorf("parsing flags: %w", flag.ErrHelp), 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := exitCode("parley-operator", func(ctx context.Context) error {
				if ctx.Err() != nil {
					t.Error("the command's context is cancelled before a signal")
				}
				return tc.err
			}, &stderr)
			if code != tc.wantCode || stderr.String() != tc.wantStderr {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tc.wantCode, tc.wantStderr)
			}
		})
	}
}
