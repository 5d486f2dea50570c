package backend

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TraceEvent is one event of a Chrome trace (the Trace Event Format: ph is
// the phase, "X" a complete event with Dur, "M" metadata such as
// process_name; Ts and Dur in microseconds).
type TraceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args"`
}

// Trace records a Chrome trace of the whole browser (every process: the
// browser, renderers, GPU, network service; CDP Tracing on the browser
// connection) of the trace categories cats while during runs, and returns
// its events in the order received. It is a profiling aid (the render
// step's breakdown, internal/browser TestRenderTrace), not used on any
// request path. Errors are browser_failed, or during's error.
func (l *Local) Trace(ctx context.Context, cats []string, during func() error) ([]TraceEvent, error) {
	if !l.Alive() {
		return nil, reason.New(reason.BrowserFailed, "", "The browser is not running.")
	}
	var mu sync.Mutex
	var evs []TraceEvent
	done := make(chan struct{})
	var once sync.Once
	lctx, cancel := context.WithCancel(l.browserCtx)
	defer cancel()
	chromedp.ListenBrowser(lctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			for _, raw := range e.Value {
				var te TraceEvent
				if json.Unmarshal(raw, &te) == nil {
					evs = append(evs, te)
				}
			}
			mu.Unlock()
		case *tracing.EventTracingComplete:
			once.Do(func() { close(done) })
		}
	})
	if _, err := chromedp.CallBrowser(l.browserCtx, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents, TraceConfig: &tracing.TraceConfig{IncludedCategories: cats},
	}); err != nil {
		return nil, reason.Wrap(reason.BrowserFailed, "", "Could not start tracing.", err)
	}
	derr := during()
	if _, err := chromedp.CallBrowser(l.browserCtx, tracing.End, cdp.Empty{}); err != nil {
		return nil, reason.Wrap(reason.BrowserFailed, "", "Could not end tracing.", err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	return evs, derr
}
