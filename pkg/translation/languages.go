package translation

import "github.com/chatbridge/chat/pkg/chat"

// Languages is a translator's set of target languages (chat.Languages).
type Languages = chat.Languages

// NewLanguages returns the languages named by codes (chat.NewLanguages).
func NewLanguages(codes ...string) *Languages { return chat.NewLanguages(codes...) }
