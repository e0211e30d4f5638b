package protect

import "unicode/utf8"

// isEmojiBase reports runes that begin an emoji: the pictographic blocks,
// the symbol blocks that hold emoji (☀ ✅ ⌛ ⭐ ↩), regional indicators.
func isEmojiBase(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, // pictographs, emoticons, transport, flags' indicators...
		r >= 0x2600 && r <= 0x27BF, // miscellaneous symbols, dingbats
		r >= 0x2300 && r <= 0x23FF, // technical: ⌚ ⌛ ⏩ ⏰
		r >= 0x2B00 && r <= 0x2BFF, // ⬆ ⭐ ⭕
		r >= 0x2190 && r <= 0x21FF, // arrows ↔ ↩
		r >= 0x25A0 && r <= 0x25FF, // ▪ ▶ ◀ ◻
		r == 0x00A9, r == 0x00AE, r == 0x203C, r == 0x2049, r == 0x2122, r == 0x2139,
		r == 0x24C2, r == 0x3030, r == 0x303D, r == 0x3297, r == 0x3299:
		return true
	}
	return false
}

// isEmojiModifier reports what continues an emoji sequence: variation
// selectors, skin tones, the keycap, tags (subdivision flags).
func isEmojiModifier(r rune) bool {
	return r == 0xFE0F || r == 0xFE0E || r >= 0x1F3FB && r <= 0x1F3FF || r == 0x20E3 ||
		r >= 0xE0020 && r <= 0xE007F
}

// startsEmoji reports whether s begins with an emoji, a keycap (1️⃣ #️⃣)
// included.
func startsEmoji(s string) bool {
	r, w := utf8.DecodeRuneInString(s)
	if isEmojiBase(r) {
		return true
	}
	if r >= '0' && r <= '9' || r == '#' || r == '*' {
		next, w2 := utf8.DecodeRuneInString(s[w:])
		if next == 0xFE0F {
			next, _ = utf8.DecodeRuneInString(s[w+w2:])
		}
		return next == 0x20E3
	}
	return false
}

// emojiLen is the length in bytes of the emoji sequence s begins with:
// its base, modifiers, and more bases joined by ZWJ (👩‍💻, 👨‍👩‍👧) or
// paired as a flag (🇪🇸).
func emojiLen(s string) int {
	r, n := utf8.DecodeRuneInString(s)
	regional := r >= 0x1F1E6 && r <= 0x1F1FF
	for n < len(s) {
		r, w := utf8.DecodeRuneInString(s[n:])
		switch {
		case isEmojiModifier(r):
			n += w
		case regional && r >= 0x1F1E6 && r <= 0x1F1FF:
			n += w
			regional = false
		case r == 0x200D:
			next, w2 := utf8.DecodeRuneInString(s[n+w:])
			if !isEmojiBase(next) {
				return n
			}
			n += w + w2
		default:
			return n
		}
	}
	return n
}
