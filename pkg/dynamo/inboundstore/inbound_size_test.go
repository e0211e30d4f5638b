package inboundstore

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/inbound"
)

// The accept transaction at the largest content of every kind stays within
// DynamoDB's limits: every item under 400 KB, the whole under 4 MB. The
// idempotency record is the largest: it holds the 202 body, in which '<'
// and U+2028 are escaped to 6 bytes.
func TestAcceptItemsFitDynamoDBLimits(t *testing.T) {
	now := time.Unix(1767225600, 0).UTC()
	ids := chat.NewIDs()
	s := &Store{Table: &dynamo.Table{Name: "t"}}
	longest := strings.Repeat("B", 255)
	for _, tc := range []struct {
		name    string
		content string
		minBody int // the escaping that makes this case the worst
	}{
		{"'<'", strings.Repeat("<", 40000), 6 * 40000},
		{"emoji", strings.Repeat("😀", 40000), 4 * 40000},
		{"U+2028", strings.Repeat("\u2028", 40000), 6 * 40000},
		{"U+FFFF", strings.Repeat("\uffff", 40000), 3 * 40000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := chat.Message{ID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: ids.New(now), Content: tc.content,
				Author:         chat.Author{Type: chat.AuthorBot, ID: ids.New(now), Name: strings.Repeat("n", 80), AvatarURL: "https://example.invalid/" + strings.Repeat("a", 2000), Language: "en"},
				SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now}
			body := inbound.AcceptedBody(msg)
			if len(body) < tc.minBody {
				t.Fatalf("202 body of %d bytes, want at least %d", len(body), tc.minBody)
			}
			a := inbound.Acceptance{Message: msg, Status: 202, Body: body,
				Log: chat.RequestLog{ID: ids.New(now), WorkspaceID: msg.WorkspaceID, WebhookID: msg.Author.ID, ReceivedAt: now,
					IdempotencyKey: longest, UserAgent: strings.Repeat("u", 512), SourceIP: "2001:db8::1"},
				Key:       &inbound.KeyUse{WebhookID: msg.Author.ID, Key: longest, KeyHash: strings.Repeat("h", 64), Fingerprint: strings.Repeat("f", 64), ExpiresAt: now},
				Signature: &inbound.SignatureUse{WebhookID: msg.Author.ID, Hash: strings.Repeat("s", 64), KeyHash: strings.Repeat("h", 64), ExpiresAt: now},
			}
			items, _, _, _ := s.acceptItems(a, now)
			if err := dynamo.CheckTransactionSize(items); err != nil {
				t.Fatalf("worst-case acceptance refused: %v", err)
			}
			total := 0
			for _, it := range items {
				n := dynamo.ItemSize(it.Put.Item)
				total += n
				if n >= dynamo.MaxItemBytes {
					t.Fatalf("an item of %d bytes", n)
				}
			}
			t.Logf("transaction %d bytes in %d items", total, len(items))
		})
	}
}

func TestCheckTransactionSizeAtTheLimits(t *testing.T) {
	item := func(valueBytes int) types.TransactWriteItem {
		// "pk" + "v": the names count too.
		return types.TransactWriteItem{Put: &types.Put{Item: map[string]types.AttributeValue{
			"pk": dynamo.Str("p"), "v": dynamo.Str(strings.Repeat("x", valueBytes)),
		}}}
	}
	overhead := len("pk") + len("p") + len("v")
	if err := dynamo.CheckTransactionSize([]types.TransactWriteItem{item(dynamo.MaxItemBytes - overhead)}); err != nil {
		t.Fatalf("an item of exactly 400 KB: %v", err)
	}
	if err := dynamo.CheckTransactionSize([]types.TransactWriteItem{item(dynamo.MaxItemBytes - overhead + 1)}); err == nil {
		t.Fatalf("an item one byte over 400 KB passed")
	}
	// Eleven items of under 400 KB each make exactly 4 MB.
	many := make([]types.TransactWriteItem, 11)
	for i := range many {
		many[i] = item(dynamo.MaxTransactionBytes/11 - overhead)
	}
	first := dynamo.MaxTransactionBytes - 10*(dynamo.MaxTransactionBytes/11)
	many[0] = item(first - overhead)
	if err := dynamo.CheckTransactionSize(many); err != nil {
		t.Fatalf("a transaction of exactly 4 MB: %v", err)
	}
	many[0] = item(first - overhead + 1)
	if err := dynamo.CheckTransactionSize(many); err == nil {
		t.Fatalf("a transaction one byte over 4 MB passed")
	}
	if err := dynamo.CheckTransactionSize(make([]types.TransactWriteItem, 101)); err == nil {
		t.Fatalf("101 items passed")
	}
}
