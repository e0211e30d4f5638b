// Package attachments is the files a message carries (contract section
// 17): announcing an upload, which answers a presigned POST that sends the
// file straight to storage; checking a post's or an edit's attachments
// (complete, the declared size, first bytes that match the declared type,
// attached once, by their uploader); and the rules of names, types and
// sizes. Storage is behind the small interfaces declared here; the S3
// adapter is package s3bucket.
package attachments
