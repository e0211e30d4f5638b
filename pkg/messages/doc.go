// Package messages is the message capability shared by every way a message
// enters a channel (an inbound webhook, a guest): the job that carries an
// accepted message to the translation function, and its wire form.
//
// The path of a message: the accepting request writes the message item;
// DynamoDB Streams delivers that insert to the outbox relay, which puts a
// Job on the translation queue; the translation function stores each
// translation beside the message. docs/delivery.md explains why no accepted
// message can be lost on the way.
package messages
