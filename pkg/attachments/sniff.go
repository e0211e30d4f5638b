package attachments

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// The checks of a file's first bytes against its declared type. Each is
// strict enough that a file of another kind (an HTML page, a script) does
// not pass for it: an image must start with its format's signature and
// first structure, a text must be UTF-8 text with no binary bytes.

func isPNG(h []byte, _ int64) bool {
	// The signature, then the IHDR chunk, which must come first, 13 bytes.
	return bytes.HasPrefix(h, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"))
}

func isJPEG(h []byte, _ int64) bool {
	// SOI, then a marker (APPn, DQT, SOF...).
	return len(h) >= 4 && h[0] == 0xFF && h[1] == 0xD8 && h[2] == 0xFF && h[3] >= 0xC0 && h[3] != 0xFF
}

func isGIF(h []byte, _ int64) bool {
	return bytes.HasPrefix(h, []byte("GIF87a")) || bytes.HasPrefix(h, []byte("GIF89a"))
}

func isWEBP(h []byte, size int64) bool {
	// RIFF <size-8, little-endian> WEBP VP8(space|L|X).
	if len(h) < 16 || !bytes.HasPrefix(h, []byte("RIFF")) || string(h[8:15]) != "WEBPVP8" {
		return false
	}
	switch h[15] {
	case ' ', 'L', 'X':
	default:
		return false
	}
	return int64(binary.LittleEndian.Uint32(h[4:8])) == size-8
}

func isPDF(h []byte, _ int64) bool { return bytes.HasPrefix(h, []byte("%PDF-")) }

func isZip(h []byte, _ int64) bool {
	// A local file header, or the end record of an empty archive.
	return bytes.HasPrefix(h, []byte("PK\x03\x04")) || bytes.HasPrefix(h, []byte("PK\x05\x06"))
}

// isText accepts UTF-8 text (a BOM allowed) without NUL or other C0
// controls than tab, line feed, form feed and carriage return. A
// character cut by the end of the first bytes is allowed when the file
// goes on.
func isText(h []byte, size int64) bool {
	h = bytes.TrimPrefix(h, []byte("\xEF\xBB\xBF"))
	if int64(len(h)) < size {
		// Drop a rune cut at the end of the window (at most 3 bytes).
		for i := 0; i < utf8.UTFMax-1 && len(h) > 0 && !utf8.Valid(h); i++ {
			h = h[:len(h)-1]
		}
	}
	if !utf8.Valid(h) {
		return false
	}
	for _, b := range h {
		if b < 0x20 && b != '\t' && b != '\n' && b != '\f' && b != '\r' || b == 0x7F {
			return false
		}
	}
	return true
}

// isJSON accepts text whose first non-space character can start a JSON
// value.
func isJSON(h []byte, size int64) bool {
	if !isText(h, size) {
		return false
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(h, []byte("\xEF\xBB\xBF")), " \t\r\n")
	if len(t) == 0 {
		return false
	}
	switch c := t[0]; {
	case c == '{' || c == '[' || c == '"' || c == '-' || c >= '0' && c <= '9':
		return true
	case bytes.HasPrefix(t, []byte("true")) || bytes.HasPrefix(t, []byte("false")) || bytes.HasPrefix(t, []byte("null")):
		return true
	}
	return false
}
