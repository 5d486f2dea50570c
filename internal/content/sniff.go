package content

import "bytes"

// magicSignatures lists the binary kinds refused as BinaryPayload (spec
// §A10.2: "SQLite, ZIP, gzip, bzip2, xz, 7-Zip, ELF, Mach-O, PNG, JPEG, GIF,
// TIFF, FLAC, Ogg"). The signatures are the published magic numbers of each
// format; they are compared after NUL bytes are removed, as the spec does,
// so the table holds them NUL-free.
var magicSignatures = []struct {
	kind string
	sig  string // NUL bytes removed
}{
	{"SQLite database", "SQLite format 3"},
	{"ZIP archive", "PK\x03\x04"},
	{"ZIP archive", "PK\x05\x06"},
	{"ZIP archive", "PK\x07\x08"},
	{"gzip archive", "\x1f\x8b\x08"},
	{"xz archive", "\xfd7zXZ"},
	{"7-Zip archive", "7z\xbc\xaf\x27\x1c"},
	{"ELF executable", "\x7fELF"},
	{"Mach-O executable", "\xfe\xed\xfa\xce"},
	{"Mach-O executable", "\xfe\xed\xfa\xcf"},
	{"Mach-O executable", "\xce\xfa\xed\xfe"},
	{"Mach-O executable", "\xcf\xfa\xed\xfe"},
	{"PNG image", "\x89PNG\r\n\x1a\n"},
	{"JPEG image", "\xff\xd8\xff"},
	{"GIF image", "GIF87a"},
	{"GIF image", "GIF89a"},
	{"TIFF image", "II*"}, // "II*\x00"
	{"TIFF image", "MM*"}, // "MM\x00*"
	{"FLAC audio", "fLaC"},
	{"Ogg media", "OggS"},
}

// binaryMagic reports whether body starts with a known binary signature and
// names the kind. Like spec §A10.2 it looks at the first 32 bytes with NUL
// bytes removed. bzip2 needs a closer look ("BZh" is also ordinary text): the
// block size digit and the block or end-of-stream magic must follow.
func binaryMagic(body []byte) (string, bool) {
	head := body
	if len(head) > 32 {
		head = head[:32]
	}
	head = bytes.ReplaceAll(head, []byte{0}, nil)
	for _, m := range magicSignatures {
		if bytes.HasPrefix(head, []byte(m.sig)) {
			return m.kind, true
		}
	}
	if len(head) >= 5 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9' &&
		(bytes.HasPrefix(head[4:], []byte("1AY&SY")) || bytes.HasPrefix(head[4:], []byte("\x17rE8P"))) {
		return "bzip2 archive", true
	}
	return "", false
}

// isPDF reports whether body is a PDF file: it starts with "%PDF-" (ISO
// 32000-1 §7.5.2), leading white space allowed.
func isPDF(body []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n\f"), []byte("%PDF-"))
}
