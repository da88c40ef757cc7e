//go:build integration

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/dev/demo"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// Load shapes of BenchmarkChatHTTP.
const (
	knowledgeItems = 1000
	// fixedRate is the request rate at which latency is measured.
	fixedRate = 2000
	// rateConnections share fixedRate: requests leave on a schedule (see pacedScript), not when an answer
	// arrives, so a slow answer does not lower the rate; the measured rate is reported beside the latency.
	rateConnections = 20
	// wrkThreads is wrk's threads; each keeps its own schedule, of fixedRate/wrkThreads requests a second.
	wrkThreads  = 2
	wrkSeconds  = 10
	wrkDuration = "10s"
	chatBody    = `{"message": "How long does shipping to Canada take?"}`
)

// BenchmarkChatHTTP loads POST /api/v1/chat of `parley dev` (a 1,000-item knowledge base, a plan with a limit far
// above the load) with wrk, and in the same run a bare net/http handler that decodes and encodes the same JSON.
// It reports both throughputs, their ratio, the runtime's CPU time per chat request, and the p99 latency of the
// chat endpoint at a fixed 2,000 requests/s. Each of those requests starts a new conversation: a search, an answer
// and a transaction writing the conversation and both messages. Then it loads messages that continue 2,000
// conversations, which read the conversation before the answer, and reports their throughput and CPU time; last,
// the same as a browser sends them: with the publishable key, the page's origin and the visitor's ID, each
// continuing its visitor's conversation (the widget's commonest message). Run it with `make bench`.
func BenchmarkChatHTTP(b *testing.B) {
	wrk := lookWrk(b)
	dir := b.TempDir()
	st, err := sqlite.Open(b.Context(), filepath.Join(dir, "parley.db"))
	if err != nil {
		b.Fatal(err)
	}
	seedKnowledge(b, st, "demo")
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	extra, profile := profiling(b)
	dev := startDev(b, dir, extra...)
	loadChat(b, wrk, dev, profile)
}

// profiling returns, when $PARLEY_BENCH_PROFILE names a directory, the runtime's arguments that serve its
// profiles and a function that runs the chat load while taking its CPU profile, then saves that and an
// allocation profile in the directory; otherwise neither.
func profiling(b *testing.B) (args []string, profile func(run func())) {
	dir := os.Getenv("PARLEY_BENCH_PROFILE")
	if dir == "" {
		return nil, nil
	}
	addr := freeAddr(b)
	url := "http://" + addr + "/debug/pprof/"
	return []string{"--pprof-listen", addr}, func(run func()) {
		cpu := fetchAsync(b, url+"profile?seconds="+strconv.Itoa(wrkSeconds-2))
		run()
		saveProfiles(b, dir, <-cpu, fetch(b, url+"allocs"))
	}
}

// devProcess is a running runtime under load.
type devProcess struct {
	// base is the runtime's URL, key a secret key of the merchant, publishable its publishable key, accepted
	// from origin.
	base, key           string
	publishable, origin string
	pid                 int
}

// loadChat loads the chat endpoint of rt and, in the same run, the bare handler, and reports what they did.
// profile, when set, runs the chat load (its argument) while profiling it.
func loadChat(b *testing.B, wrk string, rt devProcess, profile func(run func())) {
	bare := startBare(b)
	dir := b.TempDir()
	script := filepath.Join(dir, "chat.lua")
	writeScript(b, script, 0)
	paced := filepath.Join(dir, "paced.lua")
	writeScript(b, paced, fixedRate/wrkThreads)
	headers := []string{"-H", "Content-Type: application/json", "-H", "X-API-Key: " + rt.key}

	b.ResetTimer()
	runWrk(b, wrk, "-t"+strconv.Itoa(wrkThreads), "-c32", "-d2s", "-s", script, headers, rt.base+"/api/v1/chat") // warm-up
	var chat wrkResult
	cpu0 := processCPU(b, rt.pid)
	run := func() {
		chat = runWrk(b, wrk, "-t"+strconv.Itoa(wrkThreads), "-c32", "-d"+wrkDuration, "--latency", "-s", script, headers, rt.base+"/api/v1/chat")
	}
	if profile != nil {
		profile(run)
	} else {
		run()
	}
	cpu := processCPU(b, rt.pid) - cpu0
	plain := runWrk(b, wrk, "-t"+strconv.Itoa(wrkThreads), "-c32", "-d"+wrkDuration, "--latency", "-s", script, headers, bare+"/chat")
	rate := runWrk(b, wrk, "-t"+strconv.Itoa(wrkThreads), fmt.Sprintf("-c%d", rateConnections), "-d"+wrkDuration, "--latency", "-s", paced, headers, rt.base+"/api/v1/chat")
	continuing, starting := filepath.Join(dir, "continued.lua"), filepath.Join(dir, "start-continued.lua")
	writeContinuedScript(b, continuing, "bench", false, false)
	writeContinuedScript(b, starting, "bench", false, true)
	runWrk(b, wrk, "-t"+strconv.Itoa(wrkThreads), "-c32", "-d"+startingDuration, "-s", starting, headers, rt.base+"/api/v1/chat")
	cpu0 = processCPU(b, rt.pid)
	continued := runWrk(b, wrk, "-t"+strconv.Itoa(wrkThreads), "-c32", "-d"+wrkDuration, "--latency", "-s", continuing, headers, rt.base+"/api/v1/chat")
	cpuContinued := (processCPU(b, rt.pid) - cpu0) / time.Duration(max(1, continued.requests))
	// The widget's conversations are started with the secret key, each by its visitor: the limits on new
	// conversations per visitor and per address count browsers only. The publishable key then continues them.
	widgetScript, starting := filepath.Join(dir, "widget.lua"), filepath.Join(dir, "start-widget.lua")
	writeContinuedScript(b, widgetScript, "widget", true, false)
	writeContinuedScript(b, starting, "widget", true, true)
	runWrk(b, wrk, "-t"+strconv.Itoa(wrkThreads), "-c32", "-d"+startingDuration, "-s", starting, headers, rt.base+"/api/v1/chat")
	browser := []string{"-H", "Content-Type: application/json", "-H", "X-API-Key: " + rt.publishable, "-H", "Origin: " + rt.origin}
	cpu0 = processCPU(b, rt.pid)
	widget := runWrk(b, wrk, "-t"+strconv.Itoa(wrkThreads), "-c32", "-d"+wrkDuration, "--latency", "-s", widgetScript, browser, rt.base+"/api/v1/chat")
	cpuWidget := (processCPU(b, rt.pid) - cpu0) / time.Duration(max(1, widget.requests))
	b.StopTimer()

	ratio := chat.rps / plain.rps
	perRequest := cpu / time.Duration(max(1, chat.requests))
	b.ReportMetric(chat.rps, "chat-req/s")
	b.ReportMetric(plain.rps, "bare-req/s")
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(float64(perRequest.Microseconds()), "cpu-µs/chat")
	b.ReportMetric(float64(rate.p99.Microseconds())/1000, "p99-ms@2000rps")
	b.Logf("POST /api/v1/chat: %.0f req/s (p99 %s), %s of the runtime's CPU each; bare net/http JSON handler: %.0f req/s (p99 %s); ratio %.2f",
		chat.rps, chat.p99, perRequest, plain.rps, plain.p99, ratio)
	b.Logf("at a fixed %d req/s (measured %.0f req/s, %d errors): p50 %s, p99 %s", fixedRate, rate.rps, rate.errors, rate.p50, rate.p99)
	b.ReportMetric(continued.rps, "continued-req/s")
	b.ReportMetric(float64(cpuContinued.Microseconds()), "cpu-µs/continued")
	b.Logf("continued conversations (%d, each message naming one of them): %.0f req/s (p99 %s), %s of the runtime's CPU each",
		continuedConversations, continued.rps, continued.p99, cpuContinued)
	b.ReportMetric(widget.rps, "widget-req/s")
	b.ReportMetric(float64(cpuWidget.Microseconds()), "cpu-µs/widget")
	b.Logf("the widget's messages (publishable key, origin and visitor ID, continuing the visitor's conversation): %.0f req/s (p99 %s), %s of the runtime's CPU each",
		widget.rps, widget.p99, cpuWidget)
	for _, r := range []wrkResult{chat, plain, rate, continued, widget} {
		if r.errors > 0 {
			b.Errorf("wrk saw %d non-2xx answers or socket errors:\n%s", r.errors, r.output)
		}
	}
}

func lookWrk(b *testing.B) string {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Fatal("wrk is not installed: run `make bench`, which installs it (apt-get install wrk)")
	}
	return wrk
}

// processCPU is the CPU time (user and system) process pid has used, from /proc/<pid>/stat, whose times are in
// clock ticks of 1/100 s on Linux.
func processCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("reading the runtime's CPU time: %v", err)
	}
	// The fields after the command name (in parentheses, which may hold spaces) start with the state, field 3;
	// utime and stime are fields 14 and 15.
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		b.Fatalf("unexpected /proc/%d/stat: %q", pid, data)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("unexpected /proc/%d/stat: %q", pid, data)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// fetchAsync GETs url in the background (a CPU profile takes as long as it samples).
func fetchAsync(b *testing.B, url string) chan []byte {
	out := make(chan []byte, 1)
	go func() {
		resp, err := http.Get(url) //nolint:noctx // a local URL of the benchmark's own
		if err != nil {
			b.Error(err)
			out <- nil
			return
		}
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Errorf("%s: %d %v", url, resp.StatusCode, err)
		}
		out <- data
	}()
	return out
}

func fetch(b *testing.B, url string) []byte { return <-fetchAsync(b, url) }

// saveProfiles writes the CPU profile of the chat run and the allocations since parley dev started to dir, with
// their symbols (pprof needs no binary).
func saveProfiles(b *testing.B, dir string, cpu, allocs []byte) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		b.Fatal(err)
	}
	for name, data := range map[string][]byte{"cpu.pprof": cpu, "allocs.pprof": allocs} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("profiles of the chat run: go tool pprof -top %[1]s/cpu.pprof; go tool pprof -sample_index=alloc_space -top %[1]s/allocs.pprof", dir)
}

// seedKnowledge fills the merchant's knowledge base with knowledgeItems items made from the demo shop's.
func seedKnowledge(b *testing.B, st store.Store, merchantID string) {
	items := demo.Knowledge()
	now := time.Now().UTC()
	for i := range knowledgeItems {
		a, c := items[i%len(items)], items[(i*7+3)%len(items)]
		k := store.Knowledge{ID: fmt.Sprintf("kn_bench_%04d", i), MerchantID: merchantID,
			Title: fmt.Sprintf("%s (range %d)", a.Title, i), Content: a.Content + " " + c.Content,
			URL: a.URL, Tags: a.Tags, CreatedAt: now, UpdatedAt: now}
		if err := storetest.WriteKnowledge(b.Context(), st, k); err != nil {
			b.Fatal(err)
		}
	}
}

// startDev runs `parley dev` on a free port with a limit far above the load, and returns its URL, the demo
// merchant's keys, read from the banner it prints, and its process ID.
func startDev(b *testing.B, dir string, extra ...string) devProcess {
	bin := filepath.Join(b.TempDir(), "parley")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/parley").CombinedOutput(); err != nil {
		b.Fatalf("building parley: %v\n%s", err, out)
	}
	addr := freeAddr(b)
	cmd := exec.Command(bin, append([]string{"dev", "--dir", dir, "--listen", addr, "--rate", "1000000", "--log-level", "error"}, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	var key, publishable string
	secret := regexp.MustCompile(`Secret key \(servers\):\s+(sk_\S+)`)
	public := regexp.MustCompile(`Publishable key \(web pages\):\s+(pk_\S+)`)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := public.FindStringSubmatch(sc.Text()); m != nil {
			publishable = m[1]
		}
		if m := secret.FindStringSubmatch(sc.Text()); m != nil {
			key = m[1]
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if key == "" || publishable == "" {
		b.Fatal("parley dev printed no secret or no publishable key")
	}
	base := "http://" + addr
	waitReady(b, base+"/readyz")
	// The demo merchant accepts its publishable key from the page parley dev serves, at base.
	return devProcess{base: base, key: key, publishable: publishable, origin: base, pid: cmd.Process.Pid}
}

// chatRequest and chatAnswer have the shapes of POST /api/v1/chat.
type chatRequest struct {
	Message        string `json:"message"`
	ConversationID string `json:"conversation_id,omitempty"`
}

type chatAnswer struct {
	ConversationID string       `json:"conversation_id"`
	MessageID      string       `json:"message_id"`
	Answer         string       `json:"answer"`
	Answered       bool         `json:"answered"`
	Sources        []chatSource `json:"sources"`
	CreatedAt      time.Time    `json:"created_at"`
}

type chatSource struct {
	KnowledgeID string  `json:"knowledge_id"`
	Title       string  `json:"title"`
	URL         string  `json:"url"`
	Snippet     string  `json:"snippet"`
	Score       float64 `json:"score"`
}

// startBare serves the baseline: a net/http handler that decodes the chat request and encodes an answer of the
// same shape, with nothing in between.
func startBare(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	answer := chatAnswer{ConversationID: "conv_0123456789abcdef", MessageID: "msg_0123456789abcdef",
		Answer: "Orders to Canada arrive in 5 to 10 business days.", Answered: true,
		Sources: []chatSource{{KnowledgeID: "kn_0123456789abcdef", Title: "International shipping",
			URL: "https://acme.example/shipping", Snippet: "Orders to Canada arrive in 5 to 10 business days.", Score: 7.5}}}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req chatRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a := answer
		a.CreatedAt = time.Now().UTC()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a)
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String()
}

// writeScript writes a wrk script posting chatBody: as fast as the connections allow when perThread is 0, else
// perThread requests a second from each wrk thread.
func writeScript(b *testing.B, path string, perThread int) {
	script := fmt.Sprintf("wrk.method = \"POST\"\nwrk.body = %q\n", chatBody)
	if perThread > 0 {
		script += fmt.Sprintf(pacedScript, 1000/float64(perThread))
	}
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		b.Fatal(err)
	}
}

// continuedConversations is how many conversations the continued load spreads its messages over: each has tens of
// messages by the end of the run, as a visitor's conversation with a help desk does. startingDuration is the run
// that starts them: it stops sending once it has, but wrk waits the whole duration, so it is as long as 800
// messages a second need.
const (
	continuedConversations = 2000
	startingDuration       = "5s"
)

// writeContinuedScript writes a wrk script posting chatBody into one of continuedConversations conversations
// named by the script after prefix: a name's first message starts its conversation, the others continue it.
// With visitors, each conversation's messages name a visitor of its own in X-Visitor-ID, as the widget's do. A
// starting script stops once it has started every conversation.
func writeContinuedScript(b *testing.B, path, prefix string, visitors, starting bool) {
	script := fmt.Sprintf(continuedScript, visitors, continuedConversations/wrkThreads, strings.TrimSuffix(chatBody, "}"), prefix)
	if starting {
		script += startingScript
	}
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		b.Fatal(err)
	}
}

// continuedScript numbers wrk's threads in setup, so that each thread names conversations of its own, and names
// each of its conversations twice, in order, before it picks them at random: wrk calls the first thread's
// request() once to check the request it makes and never sends it, so a single pass would leave that thread's
// first conversation unstarted, and a browser cannot start a conversation by naming it. A request's headers are
// the command line's (wrk.headers), and its visitor's when visitors is set.
const continuedScript = `
wrk.method = "POST"
local visitors = %t
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function init(args)
  math.randomseed(id)
end
local conversations, sent = %d, 0
function request()
  sent = sent + 1
  local n = (sent - 1) %% conversations + 1
  if sent > 2 * conversations then n = math.random(1, conversations) end
  local headers = nil
  if visitors then
    headers = {}
    for k, v in pairs(wrk.headers) do headers[k] = v end
    headers["X-Visitor-ID"] = string.format("v-%%d-%%d", id, n)
  end
  return wrk.format(nil, nil, headers, string.format('%s, "conversation_id": "%s-%%d-%%d"}', id, n))
end
`

// startingScript, after continuedScript, stops a thread once twice as many answers as it has conversations came
// back: the first pass over its conversations, and the start of the second, are among them, as each of its 16
// connections waits for an answer before it sends again. Only the starting run reads the answers, which costs wrk time.
const startingScript = `
local answers = 0
function response(status, headers, body)
  answers = answers + 1
  if answers >= 2 * conversations then wrk.thread:stop() end
end
`

// pacedScript gives each request of a wrk thread (its Lua state, shared by the thread's connections) a slot on a
// fixed schedule, the given milliseconds apart, and delays it until then: the rate holds whatever the answers'
// latency, as long as a connection is free when a slot comes (wrk's own delay waits a fixed time after each
// answer, which lowers the rate as answers slow down). wrk has no clock for scripts, so LuaJIT's FFI reads the
// monotonic one; delays are whole milliseconds, early or late by at most half of one, so the slots keep the rate.
const pacedScript = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } parley_timespec;
int clock_gettime(int clock, parley_timespec *ts);
]]
local ts = ffi.new("parley_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local spacing, slot = %g, nil
function delay()
  local now = now_ms()
  slot = slot or now
  local wait = slot - now
  slot = slot + spacing
  if wait <= 0 then return 0 end
  return math.floor(wait + 0.5)
end
`

// wrkResult is what wrk measured.
type wrkResult struct {
	rps      float64
	requests int
	p50, p99 time.Duration
	errors   int
	output   string
}

var (
	rpsLine      = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	requestsLine = regexp.MustCompile(`(\d+) requests in `)
	latencyLine  = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	errorLines   = regexp.MustCompile(`(?m)^\s+(?:Non-2xx or 3xx responses: (\d+)|Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+))`)
)

func runWrk(b *testing.B, wrk string, args ...any) wrkResult {
	var flat []string
	for _, a := range args {
		switch v := a.(type) {
		case string:
			flat = append(flat, v)
		case []string:
			flat = append(flat, v...)
		}
	}
	out, err := exec.Command(wrk, flat...).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	r := wrkResult{output: string(out)}
	m := rpsLine.FindStringSubmatch(r.output)
	if m == nil {
		b.Fatalf("no Requests/sec in wrk's output:\n%s", out)
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	if m := requestsLine.FindStringSubmatch(r.output); m != nil {
		r.requests, _ = strconv.Atoi(m[1])
	}
	for _, m := range latencyLine.FindAllStringSubmatch(r.output, -1) {
		d, err := time.ParseDuration(m[2] + strings.Replace(m[3], "us", "µs", 1))
		if err != nil {
			b.Fatal(err)
		}
		if m[1] == "50" {
			r.p50 = d
		} else {
			r.p99 = d
		}
	}
	for _, m := range errorLines.FindAllStringSubmatch(r.output, -1) {
		for _, n := range m[1:] {
			v, _ := strconv.Atoi(n)
			r.errors += v
		}
	}
	return r
}

func freeAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

func waitReady(b *testing.B, url string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil { //nolint:noctx // a fixed local URL
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatalf("%s was not ready within 30s", url)
}
