package backend

import (
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/internal/safetext"
)

// remoteValue returns a CDP remote object's value (Runtime.RemoteObject.value,
// JSON as Chromium wrote it) as the backend hands it on: with every lone
// UTF-16 surrogate of the page's strings ("\ud83d" alone) as U+FFFD and no
// invalid UTF-8 (safetext.JSON). Every raw page value leaves the backend
// through here; strings decoded from CDP messages are U+FFFD already
// (chromedp decodes with invalid UTF-8 allowed, which replaces lone
// surrogates).
func remoteValue(v []byte) json.RawMessage { return json.RawMessage(safetext.JSON(v)) }
