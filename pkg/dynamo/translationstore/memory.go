package translationstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/translation"
)

var _ translation.Memory = (*Store)(nil)

// Translation memory (docs/data-model.md, "Translation memory"): one item
// per remembered unit, its own partition (TM#<ws>#<hash of pair, glossary
// version, form and text>), so that no workspace's memory is a hot
// partition and a workspace can never read another's.
const (
	// MemoryRetention is how long a remembered unit is kept after it was
	// last translated.
	MemoryRetention = 30 * 24 * time.Hour
	// maxMemoryBytes bounds a remembered translation: a unit longer than
	// this (a 40,000-character line) is translated each time rather than
	// stored in an item near DynamoDB's 400 KB.
	maxMemoryBytes = 64 << 10
	attrMemory     = "text"
)

// memoryPK is the partition of one remembered unit.
func memoryPK(k translation.MemoryKey) string {
	h := sha256.New()
	for _, s := range []string{k.Source, k.Target, k.Glossary, strconv.Itoa(int(k.Form)), k.Text} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "TM#" + k.WorkspaceID + "#" + hex.EncodeToString(h.Sum(nil))
}

// Recall implements translation.Memory: BatchGetItem, 100 keys a call,
// projected to the translation.
func (s *Store) Recall(ctx context.Context, keys []translation.MemoryKey) (map[translation.MemoryKey]string, error) {
	byPK := make(map[string]translation.MemoryKey, len(keys))
	var ks []map[string]types.AttributeValue
	for _, k := range keys {
		pk := memoryPK(k)
		if _, dup := byPK[pk]; dup {
			continue
		}
		byPK[pk] = k
		ks = append(ks, dynamo.Key(pk, dynamo.MetaSK))
	}
	out := make(map[translation.MemoryKey]string)
	for start := 0; start < len(ks); start += dynamo.MaxBatchGet {
		items, err := s.BatchGetProjected(ctx, "translation memory", ks[start:min(start+dynamo.MaxBatchGet, len(ks))],
			"pk, #t", map[string]string{"#t": attrMemory})
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if k, ok := byPK[dynamo.GetS(it, "pk")]; ok {
				out[k] = dynamo.GetS(it, attrMemory)
			}
		}
	}
	return out, nil
}

// Remember implements translation.Memory: BatchWriteItem, 25 items a
// call, each kept MemoryRetention. A translation past maxMemoryBytes is
// not remembered.
func (s *Store) Remember(ctx context.Context, entries map[translation.MemoryKey]string) error {
	ttl := dynamo.Num(dynamo.Epoch(time.Now().Add(MemoryRetention)))
	var reqs []types.WriteRequest
	for k, text := range entries {
		if len(text) > maxMemoryBytes || len(k.Text) > maxMemoryBytes {
			continue
		}
		item := dynamo.Key(memoryPK(k), dynamo.MetaSK)
		item[attrMemory] = dynamo.Str(text)
		item[dynamo.AttrTTL] = ttl
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	if len(reqs) == 0 {
		return nil
	}
	return s.BatchWrite(ctx, "remember translations", reqs)
}
