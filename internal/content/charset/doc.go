// Package charset turns a response body into text for internal/content:
// decoding in the WHATWG order (BOM, Content-Type charset, <meta> prescan,
// sniffing: Decode, DecodeBody), media types (MediaType), and XML's root
// element, declared encoding and tokens (XMLRoot, DecodeXML,
// ScanDecodedXML).
package charset
