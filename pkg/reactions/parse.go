package reactions

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
)

// MaxEmojiBytes is the longest emoji sequence a reaction takes, in UTF-8
// bytes (the longest family and tag sequences are about 35).
const MaxEmojiBytes = 64

// Code points of the emoji grammar.
const (
	zwj        = '\u200D'
	vs16       = '\uFE0F'
	keycap     = '\u20E3'
	blackFlag  = '\U0001F3F4'
	cancelTag  = '\U000E007F'
	tagFirst   = '\U000E0020'
	tagLast    = '\U000E007E'
	riFirst    = '\U0001F1E6'
	riLast     = '\U0001F1FF'
	toneFirst  = '\U0001F3FB'
	toneLast   = '\U0001F3FF'
	maxSegment = 3 * MaxEmojiBytes // percent-encoded, every byte is 3 characters
)

// errEmoji is the 422 of a segment that is not one reaction emoji.
func errEmoji() error {
	return chat.FieldError("emoji", "Give one emoji, or a :shortcode: of the documented set.")
}

// Parse returns the emoji a path segment names, in its one spelling: the
// segment (percent-decoded when it is encoded; invalid encoding is
// refused) is one emoji sequence or a ":shortcode:" of Shortcodes. The
// sequences taken are: a pictographic emoji (Unicode Extended_Pictographic)
// with an optional U+FE0F and/or one skin-tone modifier; ZWJ sequences of
// those; a regional-indicator pair (a flag); a keycap [0-9#*] U+FE0F?
// U+20E3; a tag sequence (U+1F3F4, tags, U+E007F).
//
// Normalization (one emoji, one spelling): every U+FE0F is dropped, then
// one is put back after a keycap's base and after a pictograph whose
// default presentation is text (textDefault) unless a skin-tone modifier
// follows it. So ❤ and ❤️ are one reaction (❤️), as are 👍 and 👍️ (👍),
// ⭐ and ⭐️ (⭐), and :+1: and 👍.
// Errors: EValidation on "emoji".
func Parse(segment string) (string, error) {
	if segment == "" || len(segment) > maxSegment {
		return "", errEmoji()
	}
	s := segment
	if strings.IndexByte(s, '%') >= 0 {
		d, err := url.PathUnescape(s)
		if err != nil {
			return "", errEmoji()
		}
		s = d
	}
	if s == "" || len(s) > MaxEmojiBytes || !utf8.ValidString(s) {
		return "", errEmoji()
	}
	if len(s) > 2 && s[0] == ':' && s[len(s)-1] == ':' {
		if e, ok := Shortcodes[strings.ToLower(s[1:len(s)-1])]; ok {
			return e, nil
		}
		return "", errEmoji()
	}
	e, ok := normalize([]rune(s))
	if !ok {
		return "", errEmoji()
	}
	return e, nil
}

// normalize checks that rs is one emoji sequence and returns it in its one
// spelling.
func normalize(rs []rune) (string, bool) {
	// Drop the variation selectors: the spelling puts them back.
	var bare []rune
	for i, r := range rs {
		if r == vs16 {
			// A selector must follow something it can select.
			if i == 0 || rs[i-1] == vs16 || rs[i-1] == zwj {
				return "", false
			}
			continue
		}
		bare = append(bare, r)
	}
	n := len(bare)
	switch {
	case n == 0:
		return "", false
	case isRI(bare[0]):
		// A flag: exactly two regional indicators.
		if n == 2 && isRI(bare[1]) {
			return string(bare), true
		}
		return "", false
	case isKeycapBase(bare[0]):
		if n == 2 && bare[1] == keycap {
			return string([]rune{bare[0], vs16, keycap}), true
		}
		return "", false
	case bare[0] == blackFlag && n > 1 && isTag(bare[1]):
		// A tag sequence (subdivision flags): tags then the cancel tag.
		for _, r := range bare[1 : n-1] {
			if !isTag(r) {
				return "", false
			}
		}
		if bare[n-1] != cancelTag || n < 3 {
			return "", false
		}
		return string(bare), true
	}
	// One or more elements joined by ZWJ: pictograph, optional modifier.
	var out []rune
	for i := 0; i < n; {
		if !isPictographic(bare[i]) {
			return "", false
		}
		base := bare[i]
		i++
		tone := i < n && isTone(bare[i])
		out = append(out, base)
		if tone {
			out = append(out, bare[i])
			i++
		} else if textDefault(base) {
			out = append(out, vs16)
		}
		if i == n {
			break
		}
		if bare[i] != zwj || i+1 == n {
			return "", false
		}
		out = append(out, zwj)
		i++
	}
	return string(out), true
}

func isRI(r rune) bool         { return r >= riFirst && r <= riLast }
func isTone(r rune) bool       { return r >= toneFirst && r <= toneLast }
func isTag(r rune) bool        { return r >= tagFirst && r <= tagLast }
func isKeycapBase(r rune) bool { return r >= '0' && r <= '9' || r == '#' || r == '*' }

// isPictographic reports whether r is Extended_Pictographic (Unicode
// emoji-data.txt, which reserves whole blocks for future emoji).
func isPictographic(r rune) bool { return inRanges(r, pictographic) }

// textDefault reports whether the pictograph r is shown as text unless
// U+FE0F follows: a pictograph below U+10000 but those of
// emojiPresentationBMP, and those of textDefaultSupplementary
// (emoji-data.txt: no Emoji_Presentation).
func textDefault(r rune) bool {
	if r < 0x10000 {
		return !inRanges(r, emojiPresentationBMP)
	}
	return inRanges(r, textDefaultSupplementary)
}

func inRanges(r rune, ranges [][2]rune) bool {
	lo, hi := 0, len(ranges)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case r < ranges[m][0]:
			hi = m
		case r > ranges[m][1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// pictographic is Extended_Pictographic (emoji-data.txt, Unicode 15),
// sorted ranges.
var pictographic = [][2]rune{
	{0x00A9, 0x00A9}, {0x00AE, 0x00AE}, {0x203C, 0x203C}, {0x2049, 0x2049}, {0x2122, 0x2122},
	{0x2139, 0x2139}, {0x2194, 0x2199}, {0x21A9, 0x21AA}, {0x231A, 0x231B}, {0x2328, 0x2328},
	{0x2388, 0x2388}, {0x23CF, 0x23CF}, {0x23E9, 0x23F3}, {0x23F8, 0x23FA}, {0x24C2, 0x24C2},
	{0x25AA, 0x25AB}, {0x25B6, 0x25B6}, {0x25C0, 0x25C0}, {0x25FB, 0x25FE}, {0x2600, 0x2605},
	{0x2607, 0x2612}, {0x2614, 0x2685}, {0x2690, 0x2705}, {0x2708, 0x2712}, {0x2714, 0x2714},
	{0x2716, 0x2716}, {0x271D, 0x271D}, {0x2721, 0x2721}, {0x2728, 0x2728}, {0x2733, 0x2734},
	{0x2744, 0x2744}, {0x2747, 0x2747}, {0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755},
	{0x2757, 0x2757}, {0x2763, 0x2767}, {0x2795, 0x2797}, {0x27A1, 0x27A1}, {0x27B0, 0x27B0},
	{0x27BF, 0x27BF}, {0x2934, 0x2935}, {0x2B05, 0x2B07}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50},
	{0x2B55, 0x2B55}, {0x3030, 0x3030}, {0x303D, 0x303D}, {0x3297, 0x3297}, {0x3299, 0x3299},
	{0x1F000, 0x1F0FF}, {0x1F10D, 0x1F10F}, {0x1F12F, 0x1F12F}, {0x1F16C, 0x1F171}, {0x1F17E, 0x1F17F},
	{0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F1AD, 0x1F1E5}, {0x1F201, 0x1F20F}, {0x1F21A, 0x1F21A},
	{0x1F22F, 0x1F22F}, {0x1F232, 0x1F23A}, {0x1F23C, 0x1F23F}, {0x1F249, 0x1F3FA}, {0x1F400, 0x1F53D},
	{0x1F546, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F774, 0x1F77F}, {0x1F7D5, 0x1F7FF}, {0x1F80C, 0x1F80F},
	{0x1F848, 0x1F84F}, {0x1F85A, 0x1F85F}, {0x1F888, 0x1F88F}, {0x1F8AE, 0x1F8FF}, {0x1F90C, 0x1F93A},
	{0x1F93C, 0x1F945}, {0x1F947, 0x1FAFF}, {0x1FC00, 0x1FFFD},
}

// emojiPresentationBMP are the pictographs below U+10000 shown as emoji
// by default (emoji-data.txt: Emoji_Presentation).
var emojiPresentationBMP = [][2]rune{
	{0x231A, 0x231B}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0}, {0x23F3, 0x23F3}, {0x25FD, 0x25FE},
	{0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F}, {0x2693, 0x2693}, {0x26A1, 0x26A1},
	{0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5}, {0x26CE, 0x26CE}, {0x26D4, 0x26D4},
	{0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5}, {0x26FA, 0x26FA}, {0x26FD, 0x26FD},
	{0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728}, {0x274C, 0x274C}, {0x274E, 0x274E},
	{0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797}, {0x27B0, 0x27B0}, {0x27BF, 0x27BF},
	{0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
}

// textDefaultSupplementary are the pictographs above U+FFFF whose default
// presentation is text (emoji-data.txt: Emoji without Emoji_Presentation).
var textDefaultSupplementary = [][2]rune{
	{0x1F170, 0x1F171}, {0x1F17E, 0x1F17F}, {0x1F202, 0x1F202}, {0x1F237, 0x1F237}, {0x1F321, 0x1F321},
	{0x1F324, 0x1F32C}, {0x1F336, 0x1F336}, {0x1F37D, 0x1F37D}, {0x1F396, 0x1F397}, {0x1F399, 0x1F39B},
	{0x1F39E, 0x1F39F}, {0x1F3CB, 0x1F3CE}, {0x1F3D4, 0x1F3DF}, {0x1F3F3, 0x1F3F3}, {0x1F3F5, 0x1F3F5},
	{0x1F3F7, 0x1F3F7}, {0x1F43F, 0x1F43F}, {0x1F441, 0x1F441}, {0x1F4FD, 0x1F4FD}, {0x1F549, 0x1F54A},
	{0x1F56F, 0x1F570}, {0x1F573, 0x1F579}, {0x1F587, 0x1F587}, {0x1F58A, 0x1F58D}, {0x1F590, 0x1F590},
	{0x1F5A5, 0x1F5A5}, {0x1F5A8, 0x1F5A8}, {0x1F5B1, 0x1F5B2}, {0x1F5BC, 0x1F5BC}, {0x1F5C2, 0x1F5C4},
	{0x1F5D1, 0x1F5D3}, {0x1F5DC, 0x1F5DE}, {0x1F5E1, 0x1F5E1}, {0x1F5E3, 0x1F5E3}, {0x1F5E8, 0x1F5E8},
	{0x1F5EF, 0x1F5EF}, {0x1F5F3, 0x1F5F3}, {0x1F5FA, 0x1F5FA}, {0x1F6CB, 0x1F6CB}, {0x1F6CD, 0x1F6CF},
	{0x1F6E0, 0x1F6E5}, {0x1F6E9, 0x1F6E9}, {0x1F6F0, 0x1F6F0}, {0x1F6F3, 0x1F6F3},
}
