//go:build integration

package memory

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/tenant"
)

// TestSlowAnonymousUploadsStayWithinTheMemoryRequest opens 250 connections that each post a 4 MiB import to the
// dashboard without a session, send all of it but the last kilobyte, and wait: what the runtime holds for
// requests nobody signed must stay within its default memory request.
func TestSlowAnonymousUploadsStayWithinTheMemoryRequest(t *testing.T) {
	r := startDashboardRuntime(t, filepath.Join(t.TempDir(), "parley.db"), &tenant.Bundle{MerchantID: "shop", DisplayName: "Shop",
		Plan: ownerPlan(), Owners: []tenant.Owner{{Email: "owner@shop.example"}}})
	const uploads = 250
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("csrf", "guessed")
	fw, _ := mw.CreateFormFile("file", "knowledge.csv")
	_, _ = fw.Write([]byte("title,content\n" + strings.Repeat("A,"+strings.Repeat("a", 1000)+"\n", (4<<20)/1003)))
	_ = mw.Close()
	host := strings.TrimPrefix(r.URL, "http://")
	head := fmt.Sprintf("POST /dashboard/knowledge/import HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		host, r.URL, mw.FormDataContentType(), form.Len())
	sent := form.Bytes()[:form.Len()-1024]

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
		cut   int // connections the runtime closed before taking the whole prefix
	)
	for range uploads {
		wg.Go(func() {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			_ = conn.SetWriteDeadline(time.Now().Add(2 * time.Minute))
			if _, err := conn.Write(append([]byte(head), sent...)); err != nil {
				mu.Lock()
				cut++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d of %d uploads were cut short by the runtime", cut, uploads)
	r.checkPeak(t, fmt.Sprintf("%d slow anonymous 4 MiB uploads", uploads))
	for _, c := range conns {
		_ = c.Close()
	}
}
