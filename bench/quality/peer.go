package main

import (
	"bytes"
	"net/url"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	trafilatura "github.com/markusmobius/go-trafilatura"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// peerConverter is html-to-markdown v2 as its README configures it for
// GFM: base, CommonMark, tables, strikethrough.
var peerConverter = converter.NewConverter(converter.WithPlugins(
	base.NewBasePlugin(),
	commonmark.NewCommonmarkPlugin(),
	table.NewTablePlugin(),
	strikethrough.NewStrikethroughPlugin(),
))

// trafilaturaConvert is the peer: go-trafilatura v1.12.2 with its fallback
// on (readability and dom-distiller are tried when its own extraction looks
// poor), then html-to-markdown v2.5.2 on its content node. A page where either
// fails gives "" and "peer_failed".
func trafilaturaConvert(page []byte, u *url.URL) (md string, code reason.Code) {
	defer func() {
		if recover() != nil {
			md, code = "", "peer_failed"
		}
	}()
	// go-trafilatura's defaults, plus the fallback, links (markdown
	// keeps them) and no date extraction (not scored). (Comments excluded
	// and images kept scored 0.808 on wcxb-dev, this 0.810.)
	res, err := trafilatura.Extract(bytes.NewReader(page), trafilatura.Options{
		OriginalURL:    u,
		EnableFallback: true,
		IncludeLinks:   true,
		HtmlDateMode:   trafilatura.Disabled,
	})
	if err != nil || res == nil || res.ContentNode == nil {
		return "", "peer_failed"
	}
	var copts []converter.ConvertOptionFunc
	if u != nil {
		copts = append(copts, converter.WithDomain(u.String()))
	}
	out, err := peerConverter.ConvertNode(res.ContentNode, copts...)
	if err != nil {
		return "", "peer_failed"
	}
	return string(out), ""
}
