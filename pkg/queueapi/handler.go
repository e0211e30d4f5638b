package queueapi

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/chatbridge/chat/pkg/messages"
)

// RecordConcurrency bounds the records of one batch processed at once. Each
// record may itself have translation.Service.Concurrency translator calls in
// flight.
const RecordConcurrency = 4

// Processor processes one translation job; *translation.Service is one.
type Processor interface {
	// Process returns nil when the job is done and must not come back.
	Process(ctx context.Context, job messages.Job) error
}

// SQSHandler is the Lambda handler of an SQS event source with
// ReportBatchItemFailures.
type SQSHandler = func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// NewTranslateHandler returns the translation function's handler: it decodes
// each record's body as a messages.Job and processes the jobs, at most
// RecordConcurrency at a time, reporting the records that failed as batch
// item failures (ItemIdentifier = the SQS message id) so that only they are
// received again.
//
// A body that is not a job is a poison message: it is logged, with its
// receive count, and reported as failed, so that the queue's redrive policy
// moves it to the dead-letter queue after maxReceiveCount receives, where it
// can be inspected. Records of the same message (a duplicate delivery, or
// jobs of several revisions of an edited message) are processed once, as
// the newest revision, and share the outcome. The handler never returns an error.
func NewTranslateHandler(svc Processor) SQSHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		start := time.Now()
		failed := make([]bool, len(ev.Records))
		type work struct {
			job     messages.Job
			records []int
		}
		var jobs []*work
		byMessage := map[string]*work{}
		for i, rec := range ev.Records {
			job, err := messages.DecodeJob(rec.Body)
			if err != nil {
				failed[i] = true
				slog.ErrorContext(ctx, "queueapi: poison message: not a translation job",
					"sqs_message_id", rec.MessageId, "receive_count", rec.Attributes["ApproximateReceiveCount"],
					"body_bytes", len(rec.Body), "error", err.Error())
				continue
			}
			if w, ok := byMessage[job.MessageID]; ok {
				w.records = append(w.records, i)
				if job.Rev() > w.job.Rev() {
					// An edit's job: the newest revision is the one to
					// translate; an older one has nothing left to do.
					w.job = job
				}
				continue
			}
			w := &work{job: job, records: []int{i}}
			byMessage[job.MessageID] = w
			jobs = append(jobs, w)
		}

		var wg sync.WaitGroup
		sem := make(chan struct{}, RecordConcurrency)
		for _, w := range jobs {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := process(ctx, svc, w.job); err != nil {
					rec := ev.Records[w.records[0]]
					slog.WarnContext(ctx, "queueapi: translation job failed; it will be received again",
						"sqs_message_id", rec.MessageId, "message_id", w.job.MessageID,
						"receive_count", rec.Attributes["ApproximateReceiveCount"], "error", err.Error())
					for _, i := range w.records {
						failed[i] = true // each index is written by this goroutine only
					}
				}
			})
		}
		wg.Wait()

		resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		for i, f := range failed {
			if f {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
			}
		}
		slog.InfoContext(ctx, "batch", "source", "translation-queue", "records", len(ev.Records), "messages", len(jobs),
			"failures", len(resp.BatchItemFailures), "duration_ms", time.Since(start).Milliseconds())
		return resp, nil
	}
}

// process runs one job; a panic fails that job only, not the batch.
func process(ctx context.Context, svc Processor, job messages.Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("queueapi: panic processing message %s: %v", job.MessageID, r)
		}
	}()
	return svc.Process(ctx, job)
}
