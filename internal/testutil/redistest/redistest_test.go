//go:build integration

package redistest

import (
	"net"
	"testing"
)

func TestStartStopRestart(t *testing.T) {
	s := Start(t, Options{Password: "s3cret"})
	if _, port, _ := net.SplitHostPort(s.Addr); port == "6379" {
		t.Fatalf("the test server must not use the system Redis port: %s", s.Addr)
	}
	if err := ping(s.Addr, "s3cret"); err != nil {
		t.Fatalf("PING with the password: %v", err)
	}
	if err := ping(s.Addr, ""); err == nil {
		t.Fatal("PING without the password was answered")
	}
	s.Stop()
	if err := ping(s.Addr, "s3cret"); err == nil {
		t.Fatal("the server still answers after Stop")
	}
	s.Restart(t)
	if err := ping(s.Addr, "s3cret"); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
}
