package dynamo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
)

// UploadPrefix starts an upload's partition key: UPL#<upload>, its own
// partition, so that claims of different uploads never share one.
const UploadPrefix = "UPL#"

// attachmentAttr is one attachment of a message item.
type attachmentAttr struct {
	ID          string `dynamodbav:"id"`
	Key         string `dynamodbav:"key"`
	Filename    string `dynamodbav:"filename"`
	ContentType string `dynamodbav:"content_type"`
	Size        int64  `dynamodbav:"size"`
	AltText     string `dynamodbav:"alt_text,omitempty"`
}

func attachmentAttrsOf(as []chat.Attachment) []attachmentAttr {
	if len(as) == 0 {
		return nil
	}
	out := make([]attachmentAttr, len(as))
	for i, a := range as {
		out[i] = attachmentAttr{ID: a.ID, Key: a.Key, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size, AltText: a.AltText}
	}
	return out
}

func attachmentsOf(as []attachmentAttr) []chat.Attachment {
	if len(as) == 0 {
		return nil
	}
	out := make([]chat.Attachment, len(as))
	for i, a := range as {
		out[i] = chat.Attachment{ID: a.ID, Key: a.Key, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size, AltText: a.AltText}
	}
	return out
}

// AttachmentsValue is as as stored in a message item's attachments
// attribute (an edit's SET).
func AttachmentsValue(as []chat.Attachment) (types.AttributeValue, error) {
	av, err := attributevalue.Marshal(attachmentAttrsOf(as))
	if err != nil {
		return nil, chat.Internal(fmt.Errorf("dynamo: marshal attachments: %w", err))
	}
	return av, nil
}

// uploadItem is an announced upload: pk UPL#<upload>, sk #META. It expires
// (TTL) a day after it could last be attached, unless a message took it.
type uploadItem struct {
	PK          string    `dynamodbav:"pk"`
	SK          string    `dynamodbav:"sk"`
	ID          string    `dynamodbav:"id"`
	WorkspaceID string    `dynamodbav:"workspace_id"`
	ChannelID   string    `dynamodbav:"channel_id"`
	Owner       string    `dynamodbav:"owner"`
	Filename    string    `dynamodbav:"filename"`
	ContentType string    `dynamodbav:"content_type"`
	Size        int64     `dynamodbav:"size"`
	CreatedAt   time.Time `dynamodbav:"created_at"`
	Expires     int64     `dynamodbav:"expires_epoch"`
	MessageID   string    `dynamodbav:"message_id,omitempty"`
	TTL         int64     `dynamodbav:"ttl,omitempty"`
}

// UploadPK is upload id's partition key.
func UploadPK(id string) string { return UploadPrefix + id }

// PutUpload implements attachments.UploadStore with one PutItem.
func (s *Table) PutUpload(ctx context.Context, u attachments.Upload) error {
	it := uploadItem{PK: UploadPK(u.ID), SK: MetaSK, ID: u.ID, WorkspaceID: u.WorkspaceID, ChannelID: u.ChannelID,
		Owner: u.Owner, Filename: u.Filename, ContentType: u.ContentType, Size: u.Size, CreatedAt: u.CreatedAt,
		Expires: Epoch(u.ExpiresAt), TTL: Epoch(u.ExpiresAt.Add(attachments.UnattachedTTL))}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return chat.Internal(fmt.Errorf("dynamo: marshal upload: %w", err))
	}
	_, err = s.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Name), Item: av})
	return Fail("put upload "+u.ID, err)
}

// ClaimWrites are the writes, in a transaction with m's, that attach each
// of m's attachments: an UpdateItem of its upload on condition that m's
// author announced it in m's channel with the size and type found stored,
// that it can still be attached, and that no other message took it (the
// same message may: a resent transaction meets its own claim). A failed
// condition returns the upload as stored (ALL_OLD), for ClaimFailure.
func ClaimWrites(table string, m chat.Message, now time.Time) []types.TransactWriteItem {
	owner := attachments.Owner(m.Author)
	out := make([]types.TransactWriteItem, len(m.Attachments))
	for i, a := range m.Attachments {
		out[i] = types.TransactWriteItem{Update: &types.Update{
			TableName:        aws.String(table),
			Key:              map[string]types.AttributeValue{"pk": Str(UploadPK(a.ID)), "sk": Str(MetaSK)},
			UpdateExpression: aws.String("SET message_id = :m REMOVE #ttl"),
			ConditionExpression: aws.String("attribute_exists(pk) AND #owner = :owner AND channel_id = :ch AND #size = :size" +
				" AND content_type = :ct AND expires_epoch > :now AND (attribute_not_exists(message_id) OR message_id = :m)"),
			ExpressionAttributeNames: map[string]string{"#owner": "owner", "#size": "size", "#ttl": "ttl"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":m": Str(m.ID), ":owner": Str(owner), ":ch": Str(m.ChannelID), ":size": Num(a.Size),
				":ct": Str(a.ContentType), ":now": Num(now.Unix()),
			},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}}
	}
	return out
}

// ClaimFailure returns an *attachments.ClaimError for the first claim of
// m's attachments, written from index first of a cancelled transaction,
// whose condition failed; nil when none did.
func ClaimFailure(reasons []types.CancellationReason, first int, m chat.Message) error {
	owner := attachments.Owner(m.Author)
	var ce *attachments.ClaimError
	free := make([]bool, len(m.Attachments))
	for i, a := range m.Attachments {
		if !ConditionFailed(reasons, first+i) {
			free[i] = first+i < len(reasons) && aws.ToString(reasons[first+i].Code) == "None"
			continue
		}
		var up *attachments.Upload
		if item := reasons[first+i].Item; len(item) > 0 {
			var it uploadItem
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return chat.Internal(fmt.Errorf("dynamo: upload %s: %w", a.ID, err))
			}
			up = &attachments.Upload{ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID, Owner: it.Owner,
				Filename: it.Filename, ContentType: it.ContentType, Size: it.Size, CreatedAt: it.CreatedAt,
				ExpiresAt: time.Unix(it.Expires, 0).UTC(), MessageID: it.MessageID}
		}
		free[i] = up == nil || up.MessageID == ""
		if ce == nil {
			claim := attachments.Claim{UploadID: a.ID, Owner: owner, ChannelID: m.ChannelID, Size: a.Size, ContentType: a.ContentType}
			ce = &attachments.ClaimError{Index: i, Claim: claim, Upload: up}
		}
	}
	if ce == nil {
		return nil
	}
	ce.Free = free
	return ce
}

// TransactClaims is Transact for a write that claims uploads: the claims
// of one upload by concurrent posts collide (TransactionConflict) until one
// of them commits, and then every other fails its condition, which is the
// answer they are owed (422, attached once). Transact gives up on a write
// that keeps colliding; with contested items among its items (claims,
// ClaimRounds; a reply's root, ReplyRounds) it is run again, up to rounds
// more times, after a pause that spreads the contenders out. Results and
// errors: those of Transact.
func (s *Table) TransactClaims(ctx context.Context, op string, items []types.TransactWriteItem, rounds int) ([]types.CancellationReason, error) {
	reasons, err := s.Transact(ctx, op, items)
	for round := 0; chat.IsCode(err, chat.EConflict) && round < rounds; round++ {
		pause := time.Duration(50+rand.IntN(200)) * time.Millisecond
		if rounds > ClaimRounds {
			pause = replyPause()
		}
		select {
		case <-ctx.Done():
			return nil, Fail(op, ctx.Err())
		case <-time.After(pause):
		}
		reasons, err = s.Transact(ctx, op, items)
	}
	return reasons, err
}
