package browser

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

func (m *Manager) evalSettings() EvalSettings {
	return EvalSettings{Restrict: m.cfg.Browser.RestrictEvaluate, AllowUnsafe: m.cfg.Browser.AllowUnsafeEvaluate}
}

// withheld is the post-eval page-URL recheck's refusal (spec §B8.3 step 6):
// the result is withheld and, so no later call reads the refused page, the tab
// is reset to about:blank (10 s) before rerr is returned.
func (m *Manager) withheld(ctx context.Context, s *Session, p *Page, rerr *reason.Error) {
	m.resetBlank(ctx, s, p)
	m.errOf(s, p, reason.Wrap(rerr.Code, rerr.Gate,
		"The expression moved the page to a refused URL; its result is withheld and the tab was reset to about:blank. "+rerr.Message, rerr))
}

// settleAfterEval waits (settle cap, < 1 s) for a navigation the expression
// started, so the post-eval recheck judges where the page went, not where it
// was; without a navigation it returns at once.
func (m *Manager) settleAfterEval(ctx context.Context, s *Session, before backend.Activity) {
	if a := s.tab.Activity(); a.NavSeq > before.NavSeq || a.DocSeq > before.DocSeq || a.Loading {
		m.settle(ctx, s, before)
	}
}

// pageMoved re-reads the page URL into p and returns its page refusal, if any.
func (m *Manager) pageMoved(ctx context.Context, s *Session, p *Page) *reason.Error {
	cur, err := s.tab.Current(ctx)
	if err != nil {
		return nil
	}
	p.URL, p.Title = redactText(cur.URL), redactText(cur.Title)
	return m.gates.PageRefusal(cur.URL, s.active)
}
