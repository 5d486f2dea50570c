package content

import "github.com/gatehouse-dev/gatehouse/internal/content/metadata"

// The page facts (metadata, links, application-shell signals) are read by
// internal/content/metadata; these names keep them part of Document's API.
type (
	// Facts are a Document's page metadata, links and application-shell
	// signals (metadata.Facts).
	Facts = metadata.Facts
	// Metadata is what a page's own markup says about it (metadata.Metadata).
	Metadata = metadata.Metadata
	// Link is one link target of a page (metadata.Link).
	Link = metadata.Link
	// Shell is the structure of an HTML page that scripts build after load
	// (metadata.Shell).
	Shell = metadata.Shell
)

// MaxLinks caps Facts.Links (metadata.MaxLinks).
const MaxLinks = metadata.MaxLinks
