//go:build chromium

package report

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/vmbench/vmbench/internal/suitefile"
)

var screenshot = flag.String("screenshot", "", "where the HTML report's screenshot goes (make test-html puts it under bin/; docs/report/html-report.png is refreshed with SCREENSHOT=docs/report/html-report.png)")

// TestHTMLInChromium loads the quick suite's HTML report in headless Chromium (make test-html) and
// fails when the page requests anything but the file itself and data: URLs, or logs an error.
func TestHTMLInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("no chromium on PATH (make test-html installs Debian's chromium): %v", err)
	}
	suite, err := suitefile.Read(quickSuite, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(suite)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 2000), chromedp.UserDataDir(t.TempDir()))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	var mu sync.Mutex
	var problems []string
	report := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, s)
	}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			u := ev.Request.URL
			if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") && u != "about:blank" {
				report("request to " + u)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				report("console " + string(ev.Type))
			}
		case *runtime.EventExceptionThrown:
			report("exception: " + ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError || ev.Entry.Level == log.LevelWarning {
				report("log " + string(ev.Entry.Level) + ": " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	})
	var shot []byte
	var text string
	var svgs int
	err = chromedp.Run(ctx,
		network.Enable(), runtime.Enable(), log.Enable(),
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible("h1", chromedp.ByQuery),
		chromedp.Text("body", &text, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("svg.plot").length`, &svgs),
		chromedp.CaptureScreenshot(&shot),
	)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("the page %s", p)
	}
	for _, want := range []string{"vm (emulated): ", "context: 3 nodes", "Understanding this report", "read_clat_p99_ns"} {
		if !strings.Contains(text, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	// The quick suite's forest plots: the overview and one per benchmark (hpcc, sysbench-cpu,
	// sysbench-memory, stress-ng-cpu, stress-ng-vm, iozone, fio, iperf3, ping).
	const wantPlots = 10
	if svgs != wantPlots {
		t.Errorf("%d plots drawn, want %d", svgs, wantPlots)
	}
	// The screenshot shows a page, not a blank or a black window.
	path := *screenshot
	if path == "" {
		path = filepath.Join(t.TempDir(), "report.png")
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(shot))
	checkPNG(t, path)
}
