package target

import (
	"net/netip"
	"testing"
)

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.215.14": true, "2606:2800:21f:cb07:6820:80da:af6b:8b2c": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fd00::1": false, "100.64.0.1": false, "0.0.0.0": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "224.0.0.1": false, "255.255.255.255": false,
		// IPv6 ranges that embed an IPv4 address or are deprecated local scopes.
		"::7f00:1": false, "::a00:1": false, "64:ff9b::a00:1": false, "64:ff9b:1::a00:1": false,
		"2002:7f00:1::1": false, "2002:a00:1::1": false, "2001:0:4136:e378:8000:63bf:3fff:fdd2": false, "fec0::1": false,
		"2001:4860:4860::8888": true,
	} {
		if got := Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}
