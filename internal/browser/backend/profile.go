package backend

import (
	"context"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// DefaultCookies returns the cookies of the browser's default BrowserContext:
// for a browser launched on a copied profile (Options.Prepare), the profile's
// cookie jar as Chromium decrypted it from the Cookies database.
func (l *Local) DefaultCookies(ctx context.Context) ([]*network.Cookie, error) {
	if !l.Alive() {
		return nil, reason.New(reason.BrowserFailed, "", "The browser is not running.")
	}
	rctx, cancel := context.WithCancel(l.browserCtx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	res, err := chromedp.CallBrowser(rctx, storage.GetCookies, storage.GetCookiesParams{})
	if err != nil {
		return nil, Failure("Reading the profile's cookies", err)
	}
	return res.Cookies, nil
}

// SetCookies stores cookies in the tab's own BrowserContext (seeding a
// session with a profile's cookie jar).
func (t *Tab) SetCookies(ctx context.Context, cookies []*network.Cookie) error {
	if len(cookies) == 0 {
		return nil
	}
	if err := t.check(); err != nil {
		return err
	}
	params := make([]*network.CookieParam, 0, len(cookies))
	for _, c := range cookies {
		p := &network.CookieParam{
			Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Secure: c.Secure, HTTPOnly: c.HTTPOnly, SameSite: c.SameSite,
			Priority: c.Priority, SourceScheme: c.SourceScheme, SourcePort: c.SourcePort,
			PartitionKey: c.PartitionKey,
		}
		if !c.Session && c.Expires > 0 {
			p.Expires = cdp.TimeSinceEpoch(c.Expires)
		}
		params = append(params, p)
	}
	rctx, cancel := t.run(ctx)
	defer cancel()
	if _, err := chromedp.Call(rctx, network.SetCookies, network.SetCookiesParams{Cookies: params}); err != nil {
		return t.cdpErr(ctx, "Seeding the session's cookies", err)
	}
	return nil
}
