package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns their paths and a pool trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "parley test"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// serve runs Serve in the background and returns its address and a channel with its result.
func serve(ctx context.Context, t *testing.T, h http.Handler, certFile, keyFile string) (string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h, certFile, keyFile, slog.New(slog.DiscardHandler)) }()
	return ln.Addr().String(), done
}

func TestServeTLS13Only(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	addr, _ := serve(t.Context(), t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), certFile, keyFile)
	get := func(maxVersion uint16) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: maxVersion}}}
		resp, err := c.Get("https://" + addr + "/")
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	if err := get(tls.VersionTLS13); err != nil {
		t.Errorf("TLS 1.3 client: %v", err)
	}
	if err := get(tls.VersionTLS12); err == nil {
		t.Error("a TLS 1.2 client was served")
	}
}

// Headers past maxHeaderBytes are refused with 431 before any handler runs; headers of a real caller's size pass.
func TestServeBoundsHeaders(t *testing.T) {
	addr, _ := serve(t.Context(), t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), "", "")
	for _, tt := range []struct {
		size int
		want int
	}{{4 << 10, http.StatusOK}, {maxHeaderBytes + 8<<10, http.StatusRequestHeaderFieldsTooLarge}} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Cookie", "c="+strings.Repeat("x", tt.size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("a %d-byte header: %d, want %d", tt.size, resp.StatusCode, tt.want)
		}
	}
}

// On shutdown the server stops accepting connections and lets the request in flight finish.
func TestServeGracefulShutdown(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	addr, done := serve(ctx, t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "finished")
	}), "", "")
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			got <- err.Error()
			return
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		got <- string(body)
	}()
	<-started
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for { // new connections are refused once shutdown has begun
		conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break
		}
		_ = conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections 5s after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if body := <-got; body != "finished" {
		t.Errorf("the request in flight got %q", body)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
