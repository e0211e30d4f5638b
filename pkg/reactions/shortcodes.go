package reactions

// Shortcodes is the documented set of ":shortcode:" names a reaction may
// use instead of the emoji (without the colons, lower case), each mapped
// to the emoji in its one spelling (Parse), so :+1: and 👍 are one
// reaction.
var Shortcodes = map[string]string{
	"+1": "👍", "thumbsup": "👍", "-1": "👎", "thumbsdown": "👎",
	"heart": "❤️", "broken_heart": "💔", "blue_heart": "💙", "green_heart": "💚",
	"smile": "😄", "smiley": "😃", "grin": "😁", "joy": "😂", "laughing": "😆", "rofl": "🤣",
	"slightly_smiling_face": "🙂", "wink": "😉", "blush": "😊", "heart_eyes": "😍", "sunglasses": "😎",
	"thinking_face": "🤔", "thinking": "🤔", "neutral_face": "😐", "confused": "😕", "worried": "😟",
	"cry": "😢", "sob": "😭", "angry": "😠", "rage": "😡", "scream": "😱", "open_mouth": "😮",
	"astonished": "😲", "flushed": "😳", "sweat_smile": "😅", "upside_down_face": "🙃", "hugs": "🤗",
	"exploding_head": "🤯", "partying_face": "🥳", "face_palm": "🤦", "shrug": "🤷",
	"tada": "🎉", "eyes": "👀", "rocket": "🚀", "fire": "🔥", "white_check_mark": "✅",
	"heavy_check_mark": "✔️", "x": "❌", "pray": "🙏", "clap": "👏", "ok_hand": "👌", "wave": "👋",
	"100": "💯", "raised_hands": "🙌", "muscle": "💪", "point_up": "☝️", "point_right": "👉",
	"v": "✌️", "handshake": "🤝", "warning": "⚠️", "bulb": "💡", "star": "⭐", "star2": "🌟",
	"sparkles": "✨", "zap": "⚡", "boom": "💥", "coffee": "☕", "beer": "🍺", "pizza": "🍕",
	"cake": "🍰", "bug": "🐛", "memo": "📝", "lock": "🔒", "unlock": "🔓", "key": "🔑",
	"link": "🔗", "pushpin": "📌", "calendar": "📆", "hourglass": "⌛", "bell": "🔔",
	"question": "❓", "exclamation": "❗", "heavy_plus_sign": "➕", "heavy_minus_sign": "➖",
	"no_entry": "⛔", "rotating_light": "🚨", "construction": "🚧", "ship": "🚢", "trophy": "🏆",
	"medal": "🏅", "gift": "🎁", "balloon": "🎈", "confetti_ball": "🎊", "sun": "☀️", "rainbow": "🌈",
	"cloud": "☁️", "snowflake": "❄️", "dog": "🐶", "cat": "🐱", "unicorn": "🦄", "see_no_evil": "🙈",
	"skull": "💀", "ghost": "👻", "robot": "🤖", "money_with_wings": "💸", "chart_with_upwards_trend": "📈",
	"chart_with_downwards_trend": "📉", "speech_balloon": "💬", "mag": "🔍", "wrench": "🔧",
	"hammer": "🔨", "gear": "⚙️", "computer": "💻", "package": "📦", "books": "📚",
	"white_flag": "🏳️", "rainbow_flag": "🏳️‍🌈", "checkered_flag": "🏁",
}
