package nodeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/browser/handle"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/browser/nodeserver"
)

// orphanPassOnIndex runs the node's orphan pass just before a proxy index
// key is written: the heartbeat's worst moment for an open in progress.
type orphanPassOnIndex struct {
	srv *atomic.Pointer[nodeserver.Server]
}

func (h orphanPassOnIndex) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h orphanPassOnIndex) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if s := h.srv.Load(); s != nil && strings.EqualFold(cmd.Name(), "set") && len(cmd.Args()) > 1 &&
			strings.HasPrefix(fmt.Sprint(cmd.Args()[1]), handle.ProxyPrefix) {
			s.CloseOrphanHandles()
		}
		return next(ctx, cmd)
	}
}
func (h orphanPassOnIndex) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestOpenHandleNotOrphaned: the heartbeat's orphan pass (a handle
// session whose index key is gone is closed) never closes a handle
// session that is still opening, whose key is about to be written, with a
// spare or without.
func TestOpenHandleNotOrphaned(t *testing.T) {
	needTool(t, backend.DefaultHeadlessShellPath)
	_, rdb := startRedis(t)
	var cur atomic.Pointer[nodeserver.Server]
	rdb.AddHook(orphanPassOnIndex{&cur})
	for _, spares := range []int{1, -1} {
		t.Run(fmt.Sprintf("spares=%d", spares), func(t *testing.T) {
			s, err := nodeserver.Start(context.Background(), nodeserver.Options{Listen: "127.0.0.1:0", Registry: node.NewRegistry(rdb),
				Spares: spares, MaxSpares: spares})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			if spares > 0 {
				waitFor(t, 30*time.Second, "a spare", func() bool { return s.SpareStats().Ready == 1 })
			}
			cur.Store(s)
			defer cur.Store(nil)
			c := newTestClient(t, s, strings.Repeat("ab", 16), "")
			ws, _ := c.dial()
			defer ws.Close()
			b, _ := json.Marshal(node.OpenRequest{Name: "h", Policy: &node.Policy{Version: node.PolicyVersion, Active: true}, Handle: true, TTLMS: 60000})
			st, body := c.openRaw(b)
			var or node.OpenResponse
			if json.Unmarshal(body, &or); st != http.StatusOK || or.ID == "" {
				t.Fatalf("open: HTTP %d %s", st, body)
			}
			if n := s.Sessions(); n != 1 {
				t.Fatalf("after the open: %d sessions, want 1 (the orphan pass closed the session while it was opening)", n)
			}
			req, _ := http.NewRequest(http.MethodGet, "http://"+s.Addr()+node.PathSessions+"/"+or.ID, nil)
			req.Header = c.header()
			resp, err := c.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("the opened handle session: HTTP %d", resp.StatusCode)
			}
		})
	}
}
