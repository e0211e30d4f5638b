package motoserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxShardReaders is how many processes may read a stream shard at once.
const maxShardReaders = 2

// streamLimits keeps DynamoDB Streams' limit of two readers a shard: a
// reader is a caller (the access key id that signed its requests; locally a
// function's template LogicalId) that called GetRecords on the shard within
// the reader window. A third one gets LimitExceededException, which
// DynamoDB Streams gives when more than two processes read a shard (the SDK
// retries it as a throttle).
type streamLimits struct {
	mu      sync.Mutex
	shardOf map[string]string               // shard iterator → its shard
	readers map[string]map[string]time.Time // shard → reader → last read
}

func (l *limiter) streamsBefore(w http.ResponseWriter, r *http.Request, op string, body []byte, x *exchange) bool {
	switch op {
	case "GetShardIterator":
		var in struct{ StreamArn, ShardId string }
		if json.Unmarshal(body, &in) == nil {
			x.shard = in.StreamArn + "/" + in.ShardId
		}
		return false
	case "GetRecords":
	default:
		return false
	}
	var in struct{ ShardIterator string }
	if json.Unmarshal(body, &in) != nil {
		return false
	}
	l.mu.Lock()
	window := l.readerWindow
	l.mu.Unlock()
	reader, now := accessKey(r), l.clock()
	l.streams.mu.Lock()
	shard, ok := l.streams.shardOf[in.ShardIterator]
	delete(l.streams.shardOf, in.ShardIterator) // an iterator is used once
	if !ok {
		// An iterator the proxy did not see issued: moto's name its shard.
		shard, _, _ = strings.Cut(in.ShardIterator, "|")
	}
	x.shard = shard
	readers := l.streams.readers[shard]
	if readers == nil {
		readers = map[string]time.Time{}
		l.streams.readers[shard] = readers
	}
	for who, at := range readers {
		if now.Sub(at) > window {
			delete(readers, who)
		}
	}
	_, known := readers[reader]
	refused := !known && len(readers) >= maxShardReaders
	if !refused {
		readers[reader] = now
	}
	l.streams.mu.Unlock()
	if refused {
		writeJSONError(w, http.StatusBadRequest, dynamoErrPrefix+"LimitExceededException",
			"Too many readers of shard "+shard+": more than 2 processes are reading from the same streams shard at the same time.", nil)
		return true
	}
	r.Header.Del("Accept-Encoding") // after reads the next iterator
	return false
}

// streamsAfter notes which shard each iterator moto issued reads.
func (l *limiter) streamsAfter(resp *http.Response, op string, x *exchange) error {
	if resp.StatusCode != http.StatusOK || x.shard == "" || (op != "GetShardIterator" && op != "GetRecords") {
		return nil
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	setResponseBody(resp, data)
	var out struct{ ShardIterator, NextShardIterator string }
	_ = json.Unmarshal(data, &out)
	l.streams.mu.Lock()
	defer l.streams.mu.Unlock()
	if len(l.streams.shardOf) >= maxIterators {
		clear(l.streams.shardOf) // as the isolator does: iterators are used once
	}
	for _, it := range []string{out.ShardIterator, out.NextShardIterator} {
		if it != "" {
			l.streams.shardOf[it] = x.shard
		}
	}
	return nil
}
