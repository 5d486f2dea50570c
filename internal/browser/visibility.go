package browser

import (
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/browser/renderstep"
)

// pageJS is page.js with visibility.js (the one judgement of what a sighted
// reader would not see, shared with web_extract's render step) spliced in
// (renderstep.WithVisibility), built on first use: at package init the
// splice cost every start of the CLI 80 KB (cmd/gatehouse TestStartupBudget).
var pageJS = sync.OnceValue(func() string { return renderstep.WithVisibility(pageJSSource) })
