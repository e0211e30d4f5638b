package translationstore

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/protect"
)

// WorkspaceNames returns the names a translation never changes that the
// workspace's partition holds: its members' display names (USER#), its
// channels' names (CHAN#) and its inbound webhooks' bot names (IWH#). One
// Query of WS#<ws>, every page, projected to the names. Errors:
// chat.EUnavailable, chat.EInternal.
func (s *Store) WorkspaceNames(ctx context.Context, ws string) (protect.Names, error) {
	items, err := s.QueryAll(ctx, "names of workspace "+ws, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk"),
		ProjectionExpression:      aws.String("sk, #n, bot_name"),
		ExpressionAttributeNames:  map[string]string{"#n": "name"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.WsPK(ws))},
	})
	if err != nil {
		return protect.Names{}, err
	}
	var n protect.Names
	for _, it := range items {
		sk := dynamo.GetS(it, "sk")
		switch {
		case strings.HasPrefix(sk, "USER#"):
			n.Members = appendName(n.Members, dynamo.GetS(it, "name"))
		case strings.HasPrefix(sk, "CHAN#"):
			n.Channels = appendName(n.Channels, dynamo.GetS(it, "name"))
		case strings.HasPrefix(sk, "IWH#"):
			n.Bots = appendName(n.Bots, dynamo.GetS(it, "bot_name"))
		}
	}
	return n, nil
}

func appendName(list []string, name string) []string {
	if strings.TrimSpace(name) == "" {
		return list
	}
	return append(list, name)
}
