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
		{args: []string{"--kube-api-qps=-1"}, wantErr: "must not be negative"},
		{args: []string{"--kube-api-burst=10"}, wantErr: "needs --kube-api-qps"},
		{args: []string{"--kube-api-qps=50", "--kube-api-burst=10"}, wantErr: "at least --kube-api-qps"},
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

// TestClientRate: without a QPS the operator throttles nothing itself, as controller-runtime's default; with one,
// the burst defaults to twice it.
func TestClientRate(t *testing.T) {
	for _, tc := range []struct {
		qps       float64
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		{0, 0, -1, 0},
		{50, 0, 50, 100},
		{50, 80, 50, 80},
		{0.2, 0, 0.2, 1},
	} {
		qps, burst, err := clientRate(tc.qps, tc.burst)
		if err != nil || qps != tc.wantQPS || burst != tc.wantBurst {
			t.Errorf("clientRate(%g, %d) = %g, %d, %v; want %g, %d", tc.qps, tc.burst, qps, burst, err, tc.wantQPS, tc.wantBurst)
		}
	}
}
