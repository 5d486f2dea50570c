package browser

import (
	"context"
	"github.com/gatehouse-dev/gatehouse/internal/browser/lifespec"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/camofoxmode"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// camofoxDriver is Camofox mode (spec §B1, §B11; package camofoxmode) as
// the Manager's driver: the gates around each call are the Manager's
// (driver.go), the mapping onto the Camofox server is camofoxmode's, and
// camoHost is all it sees of the Manager.
type camofoxDriver struct {
	d     *camofoxmode.Driver
	m     *Manager
	local bool // CAMOFOX_URL's host is loopback (localBackend)
}

// initCamofox enters Camofox mode when camofoxmode.Selected says so.
func (m *Manager) initCamofox(env map[string]string) []string {
	d, warns := camofoxmode.New(m.cfg, env, m.home, m.cdpOverride(), camoHost{m})
	if d != nil {
		m.camo = &camofoxDriver{d: d, m: m, local: d.Local()}
	}
	return warns
}

func (c *camofoxDriver) navigationKey(ctx context.Context, task, rawURL string) string {
	return c.d.NavigationKey(ctx, task, rawURL)
}
func (c *camofoxDriver) unusable() *reason.Error                    { return c.d.Unusable() }
func (c *camofoxDriver) info() BackendInfo                          { return c.d.Info() }
func (c *camofoxDriver) lookup(key string) (sessionkey.Owner, bool) { return c.d.Lookup(key) }
func (c *camofoxDriver) expire(string)                              {}
func (c *camofoxDriver) closeTask(key string) []string              { return c.d.CloseTask(key) }
func (c *camofoxDriver) closeAll()                                  { c.d.CloseAll() }
func (c *camofoxDriver) reapIdle()                                  { c.d.ReapIdle(camoHost{c.m}, lifespec.ForceReapAfter) }

func (c *camofoxDriver) open(ctx context.Context, key, _ string, navigation bool) (tab, error) {
	t, err := c.d.Open(ctx, key, navigation)
	if err != nil {
		return nil, err
	}
	return camoTab{t}, nil
}

// camoTab is a Camofox tab as the Manager's tab.
type camoTab struct{ t *camofoxmode.Tab }

func (c camoTab) lock() func()                            { return c.t.Lock() }
func (c camoTab) closed() bool                            { return c.t.Closed() }
func (c camoTab) guardActive() bool                       { return c.t.GuardActive() }
func (c camoTab) claim(p *Page)                           { c.t.Claim(p) }
func (c camoTab) backendInfo() BackendInfo                { return c.t.BackendInfo() }
func (c camoTab) navigations() int                        { return c.t.Navigations() }
func (c camoTab) navigated()                              { c.t.Navigated() }
func (c camoTab) resetBlank(ctx context.Context, p *Page) { c.t.ResetBlank(ctx, p) }
func (c camoTab) current(ctx context.Context, p *Page) (string, bool, error) {
	return c.t.Current(ctx, p)
}
func (c camoTab) fail(ctx context.Context, p *Page, what string, err error) {
	c.t.Fail(ctx, p, what, err)
}
func (c camoTab) load(ctx, nctx context.Context, u *urlsafe.URL, active bool, r *NavigateResult) (string, string, bool) {
	return c.t.Load(ctx, nctx, u, active, r)
}
func (c camoTab) landed(ctx context.Context, sent, final string, r *NavigateResult) (*reason.Error, bool) {
	return c.t.Landed(ctx, sent, final, r)
}
func (c camoTab) show(ctx context.Context, r *NavigateResult) { c.t.Show(ctx, r) }
func (c camoTab) startAction()                                { c.t.StartAction() }
func (c camoTab) actionFailed(err error) bool                 { return c.t.ActionFailed(err) }
func (c camoTab) afterAction(ctx context.Context, p *Page, ch *Change) {
	c.t.AfterAction(ctx, p, ch)
}
func (c camoTab) click(ctx context.Context, ref string, r *ClickResult) error {
	return c.t.Click(ctx, ref, r)
}
func (c camoTab) typeText(ctx context.Context, in TypeInput) error { return c.t.TypeText(ctx, in) }
func (c camoTab) scroll(ctx context.Context, direction string, dy int) error {
	return c.t.Scroll(ctx, direction, dy)
}
func (c camoTab) press(ctx context.Context, key string) error { return c.t.Press(ctx, key) }
func (c camoTab) back(ctx context.Context) error              { return c.t.Back(ctx) }
func (c camoTab) answerDialog(ctx context.Context, in DialogInput, accept bool, r *DialogResult) error {
	return c.t.AnswerDialog(ctx, in, accept, r)
}
func (c camoTab) snapshot(ctx, cctx context.Context, full bool, r *SnapshotResult) {
	c.t.Snapshot(ctx, cctx, full, r)
}
func (c camoTab) console(clear bool, r *ConsoleResult) { c.t.Console(clear, r) }
func (c camoTab) eval(ctx, cctx context.Context, expression string, r *ConsoleResult) {
	c.t.Eval(ctx, cctx, expression, r)
}
func (c camoTab) images(ctx context.Context, r *ImagesResult) { c.t.Images(ctx, r) }
func (c camoTab) vision(ctx context.Context, annotate bool, r *VisionResult) ([]byte, bool) {
	return c.t.Vision(ctx, annotate, r)
}

// camoHost is what camofoxmode sees of the Manager (camofoxmode.Host and
// camofoxmode.Janitor).
type camoHost struct{ m *Manager }

func (h camoHost) Gates() *Gates                        { return h.m.gates }
func (h camoHost) Logger() *slog.Logger                 { return h.m.logger }
func (h camoHost) Bindings() *sessionkey.Bindings       { return &h.m.bindings }
func (h camoHost) Route() sessionkey.Route              { return h.m.route }
func (h camoHost) Fail(p *Page, err error)              { h.m.errOf(nil, p, err) }
func (h camoHost) FindQuery(ctx context.Context) string { return findQuery(ctx) }
func (h camoHost) Render(ctx context.Context, text string) (string, bool, string) {
	return h.m.render(ctx, text)
}
func (h camoHost) RenderShown(ctx context.Context, text string) (string, bool, string) {
	return h.m.renderShown(ctx, text)
}
func (h camoHost) CommandContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return h.m.cmdCtx(ctx)
}
func (h camoHost) IdleTimeout() time.Duration          { return h.m.idleTimeout() }
func (h camoHost) Failures(key string) int             { return h.m.life.failures(key) }
func (h camoHost) ReapFailed(key string, n int, e any) { h.m.reapFailed(key, n, e) }
func (h camoHost) Reaped(key, owner string, idle time.Duration, now time.Time) {
	h.m.reaped(key, owner, idle, now)
}
