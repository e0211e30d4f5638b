// Package queueapi is the SQS face of the service: Lambda handlers for
// events.SQSEvent batches, as package httpapi is its HTTP face.
//
// A handler decodes each record, hands it to its capability's service, and
// answers with a partial batch response (events.SQSEventResponse): only the
// records that failed go back to the queue, and after the queue's
// maxReceiveCount receives SQS moves them to the dead-letter queue. A
// handler never returns an error for a record, since Lambda would then retry
// the whole batch.
package queueapi
