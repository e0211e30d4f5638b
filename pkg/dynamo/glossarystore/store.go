// Package glossarystore is the glossary's storage in the table: a
// workspace's glossary is two items of its own partition GLOSSARY#<ws>:
// #META holds the glossary (its JSON, up to glossary.MaxBodyBytes) and
// VERSION only its version, which the translation function reads for
// every message (1 read unit) and the glossary itself only when it changed.
package glossarystore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/glossary"
)

var _ glossary.Store = (*Store)(nil)

// Store is the glossaries' storage.
type Store struct{ *dynamo.Table }

// New returns a Store on table, using db.
func New(db *dynamodb.Client, table string) *Store { return &Store{dynamo.New(db, table)} }

// PK is the partition of workspace ws's glossary.
func PK(ws string) string { return "GLOSSARY#" + ws }

const versionSK = "VERSION"

// maxRounds bounds the rounds of a replacement colliding with others (each
// round is dynamo.Transact's own five attempts): about 2 s at most.
const maxRounds = 8

type body struct {
	Keep  []string         `json:"keep"`
	Fixed []glossary.Fixed `json:"fixed"`
}

// Get implements glossary.Store: one consistent GetItem of #META.
func (s *Store) Get(ctx context.Context, ws string) (glossary.Stored, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, ConsistentRead: aws.Bool(true),
		Key: dynamo.Key(PK(ws), dynamo.MetaSK)})
	if err != nil {
		return glossary.Stored{}, dynamo.Fail("glossary of "+ws, err)
	}
	if out.Item == nil {
		return glossary.Stored{Glossary: glossary.WithVersion(glossary.Glossary{})}, nil
	}
	var b body
	if err := json.Unmarshal([]byte(dynamo.GetS(out.Item, "body")), &b); err != nil {
		return glossary.Stored{}, chat.Internal(fmt.Errorf("dynamo: glossary of %s: %w", ws, err))
	}
	g := glossary.WithVersion(glossary.Glossary{Keep: b.Keep, Fixed: b.Fixed})
	at, _ := time.Parse(time.RFC3339Nano, dynamo.GetS(out.Item, "updated_at"))
	return glossary.Stored{Glossary: g, UpdatedAt: at}, nil
}

// Replace implements glossary.Store: one TransactWriteItems of the two
// items and the audit event (retried when it collides with another
// replacement: the last one wins, whole).
func (s *Store) Replace(ctx context.Context, ws string, g glossary.Glossary, now time.Time, ev chat.AuditEvent) error {
	meta, version, err := Items(ws, g, now)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.Name, Item: meta}},
		{Put: &types.Put{TableName: &s.Name, Item: version}},
		dynamo.AuditPut(s.Name, ev),
	}
	var reasons []types.CancellationReason
	for round := 0; ; round++ {
		reasons, err = s.Transact(ctx, "replace the glossary of "+ws, items)
		if !chat.IsCode(err, chat.EConflict) {
			break
		}
		// Replacements at once collide on the two items: each is whole,
		// so each may simply go again, later, until it lands.
		if round >= maxRounds {
			return chat.Unavailable(fmt.Errorf("dynamo: replace the glossary of %s: %w", ws, err))
		}
		select {
		case <-ctx.Done():
			return dynamo.Fail("replace the glossary of "+ws, ctx.Err())
		case <-time.After(time.Duration(20+rand.IntN(200)) * time.Millisecond):
		}
	}
	if err != nil {
		return err
	}
	if reasons != nil {
		return chat.Unavailable(fmt.Errorf("dynamo: replace the glossary of %s: cancelled (%s)", ws, dynamo.ReasonCodes(reasons)))
	}
	return nil
}

// Items are the two items of workspace ws's glossary g, replaced at now
// (for Replace's transaction, and for the fixture's batch).
func Items(ws string, g glossary.Glossary, now time.Time) (meta, version map[string]types.AttributeValue, err error) {
	g = glossary.WithVersion(g)
	b, err := json.Marshal(body{Keep: g.Keep, Fixed: g.Fixed})
	if err != nil {
		return nil, nil, chat.Internal(fmt.Errorf("dynamo: glossary of %s: %w", ws, err))
	}
	at := dynamo.Str(now.UTC().Format(time.RFC3339Nano))
	meta = dynamo.Key(PK(ws), dynamo.MetaSK)
	meta["body"], meta["version"], meta["updated_at"], meta["workspace_id"] = dynamo.Str(string(b)), dynamo.Str(g.Version), at, dynamo.Str(ws)
	version = dynamo.Key(PK(ws), versionSK)
	version["version"], version["updated_at"] = dynamo.Str(g.Version), at
	return meta, version, nil
}

// Version returns the version of the workspace's glossary, "" for none:
// one consistent GetItem of the small VERSION item.
func (s *Store) Version(ctx context.Context, ws string) (string, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, ConsistentRead: aws.Bool(true),
		Key: dynamo.Key(PK(ws), versionSK), ProjectionExpression: aws.String("version")})
	if err != nil {
		return "", dynamo.Fail("glossary version of "+ws, err)
	}
	return dynamo.GetS(out.Item, "version"), nil
}

// Glossary returns the workspace's glossary with its version.
func (s *Store) Glossary(ctx context.Context, ws string) (glossary.Glossary, error) {
	st, err := s.Get(ctx, ws)
	return st.Glossary, err
}
