package charset

import (
	"mime"
	"strings"
)

// MediaType returns the lower-cased media type of a Content-Type value,
// without parameters; "" when none is given. A header that mime cannot parse
// (duplicate parameters, stray characters) still yields the part before ';'.
func MediaType(contentType string) string {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}
