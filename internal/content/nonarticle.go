package content

import trafilatura "github.com/markusmobius/go-trafilatura"

// Pages that are not articles.
//
// Both extractors are built for articles: on a forum thread, a product or
// service page, a shop grid or a front page they often settle on a cookie
// notice, a sidebar or one card. go-trafilatura's own fallback (it also
// runs go-shiori's readability and dom-distiller and keeps the better
// answer) and the comment sections preClean removes (on a forum or link
// aggregator the replies are the content) help there but cost precision
// on articles (on the shared 181-page bench the fallback alone lowers F1
// from 0.975 to 0.969). So the answer's shape decides: when under
// nonArticleMaxProse of its words are in prose blocks (paragraphs of
// proseMinTokens words or more, not headings, not link-heavy), the page
// is taken for a non-article and extracted again with the fallback on and
// the comments kept (nonArticleExtract); that answer is used when it has
// words. On articles the first answer is mostly prose and stands.
const nonArticleMaxProse = 0.5

// nonArticleMaxBytes bounds the pages that get the second pass (it more
// than doubles the time: the fallback runs two more extractors), so big
// pages keep their near-linear time (size.go).
const nonArticleMaxBytes = 1 << 20

// nonArticleExtract is the second pass on pages that are not articles.
var nonArticleExtract = extractOptions{focus: trafilatura.FavorRecall, fallback: true, keepComments: true}

// nonArticle reports whether md has under nonArticleMaxProse of its words
// in prose blocks (an empty answer counts as a non-article).
func nonArticle(md string) bool {
	prose, total := wordsWhere(splitBlocksWith(md, newTextBlock), mdBlock.isProse)
	return float64(prose) < nonArticleMaxProse*float64(total) || total == 0
}

// smallPartShare: an answer with under this share of the words of the
// page's main container (outside chrome) is a small part of the page, and
// the page gets the second pass too (a service page whose answer is one
// paragraph). On the shared 181-page bench 0.1 changes nothing (0.2 costs
// 0.002 F1); on wcxb-dev it gains 0.001 overall.
var smallPartShare = 0.1

// smallPart reports whether md holds under smallPartShare of the
// pageTokens words of the page's main container.
func smallPart(md string, pageTokens int) bool {
	return float64(countTokens(visibleText(md))) < smallPartShare*float64(pageTokens)
}
